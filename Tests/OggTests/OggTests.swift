// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Ogg
import TestTools
import Testing

/// Files made at test time with sox, oggenc and opusenc, once per process.
enum OggFixtures {
    static let made = MadeFiles("ogg")

    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) throws -> [UInt8] { try runTool(tool, arguments) }

    static func file(_ name: String, _ make: (String) throws -> Void) throws -> String {
        try self.made.file(name, make)
    }

    static func wave(rate: Int, channels: Int, seconds: String) throws -> String {
        try self.file("sine-\(rate)-\(channels)-\(seconds).wav") { path in
            var synth: [String] = []
            for channel in 0..<channels { synth += ["sine", "\(440 + 110 * channel)"] }
            try self.run(
                "/usr/bin/sox",
                ["-D", "-n", "-r", "\(rate)", "-c", "\(channels)", "-b", "16", "-t", "wav", path, "synth", seconds]
                    + synth + ["vol", "0.5"])
        }
    }

    static func vorbis(rate: Int = 44100, channels: Int = 2, seconds: String = "2", serial: Int = 1) throws -> String {
        let wave = try self.wave(rate: rate, channels: channels, seconds: seconds)
        return try self.file("v-\(rate)-\(channels)-\(seconds)-\(serial).ogg") { path in
            try self.run("/usr/bin/oggenc", ["-Q", "-s", "\(serial)", "-t", "Title", "-a", "A", "-o", path, wave])
        }
    }

    static func opus(rate: Int = 48000, channels: Int = 2, seconds: String = "2", serial: Int = 7) throws -> String {
        let wave = try self.wave(rate: rate, channels: channels, seconds: seconds)
        return try self.file("o-\(rate)-\(channels)-\(seconds)-\(serial).opus") { path in
            try self.run("/usr/bin/opusenc", ["--quiet", "--serial", "\(serial)", "--title", "T", wave, path])
        }
    }

    static func bytes(_ path: String) throws -> [UInt8] { try fileBytes(path) }

    static func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        try self.made.file(name, bytes: bytes)
    }
}

/// Decodes everything into one array.
func decodeAll<Sample: Numeric>(
    _ body: (UnsafeMutableRawBufferPointer) throws -> Int, channels: Int, as: Sample.Type
) throws -> [Sample] {
    var all: [Sample] = []
    let frames = 1000
    let buffer = UnsafeMutableRawBufferPointer.allocate(
        byteCount: frames * channels * MemoryLayout<Sample>.size, alignment: 16)
    defer { buffer.deallocate() }
    while true {
        let count = try body(buffer)
        if count == 0 { break }
        all.append(contentsOf: buffer.bindMemory(to: Sample.self).prefix(count * channels))
    }
    return all
}

@Suite struct OggCodecTests {
    @Test func detectsAsMPDDoes() {
        var header = Array("OggS".utf8) + [UInt8](repeating: 0, count: 37)
        #expect(OggCodec.detect(header: header) == .vorbis)
        header.replaceSubrange(28..<32, with: Array("Opus".utf8))
        #expect(OggCodec.detect(header: header) == .opus)
        header.replaceSubrange(28..<32, with: Array("fLaC".utf8))
        #expect(OggCodec.detect(header: header) == .flac)
        #expect(OggCodec.detect(header: Array(header.prefix(40))) == .unknown)
        #expect(OggCodec.detect(header: Array("RIFF".utf8) + header.dropFirst(4)) == .unknown)
    }
}

@Suite struct VorbisTests {
    @Test(arguments: [(44100, 2), (22050, 1), (48000, 6)])
    func headersAndLength(rate: Int, channels: Int) throws {
        let path = try OggFixtures.vorbis(rate: rate, channels: channels, seconds: "1.5")
        let info = try VorbisStreamInfo.read(try FileInputStream(path: path))
        #expect(info.sampleRate == rate)
        #expect(info.channels == channels)
        #expect(info.comments.contains(Array("title=Title".utf8)))
        #expect(info.endGranulePosition == Int64(rate * 3 / 2))
    }

    @Test func decodesEveryFrameAsFloatNearSox() throws {
        let path = try OggFixtures.vorbis(rate: 44100, channels: 2, seconds: "2")
        let decoder = try OggVorbisDecoder(input: try FileInputStream(path: path))
        #expect(decoder.sampleRate == 44100 && decoder.channels == 2)
        let samples = try decodeAll({ try decoder.decode(into: $0) }, channels: 2, as: Float.self)
        #expect(samples.count == 2 * 88200)
        // sox decodes through libvorbisfile to 16-bit integers: the same samples within a 16-bit step.
        let raw = try OggFixtures.run("/usr/bin/sox", [path, "-t", "raw", "-e", "signed", "-b", "32", "-"])
        let reference = raw.withUnsafeBytes { Array($0.bindMemory(to: Int32.self)) }
        #expect(reference.count == samples.count)
        let worst = zip(samples, reference).map { abs(Double($0) - Double($1) / 2_147_483_648) }.max() ?? 1
        #expect(worst <= 1.0 / 32768)
    }

    @Test func seeksSampleAccurately() throws {
        let path = try OggFixtures.vorbis(rate: 44100, channels: 2, seconds: "6")
        let continuous = try OggVorbisDecoder(input: try FileInputStream(path: path))
        let whole = try decodeAll({ try continuous.decode(into: $0) }, channels: 2, as: Float.self)
        for target in [0, 1, 4410, 100_000, 200_000, 264_000] {
            let decoder = try OggVorbisDecoder(input: try FileInputStream(path: path))
            #expect(try decoder.seek(toFrame: UInt64(target)) == UInt64(target))
            let rest = try decodeAll({ try decoder.decode(into: $0) }, channels: 2, as: Float.self)
            #expect(rest.count == whole.count - 2 * target, "target \(target)")
            let worst = zip(rest, whole[(2 * target)...]).map { abs($0 - $1) }.max() ?? 0
            #expect(worst < 1e-6, "target \(target)")
        }
    }

    @Test func seekableAsMPDOnlyWhenItsEndSearchFindsTheLastPage() throws {
        // mpd's decoder looks for the end from where its 1 KiB reads got to: in a file this short they have
        // passed the last page's start, so it calls the stream unseekable (its scan still finds the length).
        let short = try OggFixtures.vorbis(rate: 8000, channels: 1, seconds: "1")
        #expect(try VorbisStreamInfo.read(try FileInputStream(path: short)).endGranulePosition == 8000)
        let shortDecoder = try OggVorbisDecoder(input: try FileInputStream(path: short))
        #expect(!shortDecoder.mpdSeekable)
        #expect(shortDecoder.isSeekable)
        #expect(try shortDecoder.seek(toFrame: 4000) == 4000)
        let long = try OggVorbisDecoder(input: try FileInputStream(path: try OggFixtures.vorbis(seconds: "6")))
        #expect(long.mpdSeekable && long.endGranulePosition == 264_600)
    }

    /// mpd's scan looks for the end in the last 64 KiB only where seeking is cheap: not over HTTP, where only a
    /// stream whose rest after the headers is under 64 KiB gets its length.
    @Test func theScanFindsTheEndOfALongStreamOnlyWhereSeekingIsCheap() throws {
        let long = try OggFixtures.bytes(try OggFixtures.vorbis(seconds: "60"))
        #expect(long.count > 65536 * 2)
        #expect(
            try VorbisStreamInfo.read(MemoryInputStream(long, uri: "smb://h/s/a.ogg")).endGranulePosition == 2_646_000)
        #expect(try VorbisStreamInfo.read(MemoryInputStream(long, uri: "http://h/a.ogg")).endGranulePosition == nil)
        let short = try OggFixtures.bytes(try OggFixtures.vorbis(rate: 8000, channels: 1, seconds: "1"))
        #expect(short.count < 65536)
        #expect(try VorbisStreamInfo.read(MemoryInputStream(short, uri: "http://h/b.ogg")).endGranulePosition == 8000)
    }

    @Test func chainedStreamsPlayInTurn() throws {
        let first = try OggFixtures.bytes(try OggFixtures.vorbis(rate: 44100, channels: 2, seconds: "1"))
        let second = try OggFixtures.bytes(
            try OggFixtures.vorbis(rate: 44100, channels: 2, seconds: "0.5", serial: 2))
        let path = try OggFixtures.write("chained.ogg", first + second)
        let info = try VorbisStreamInfo.read(try FileInputStream(path: path))
        #expect(info.endGranulePosition == 44100)
        let decoder = try OggVorbisDecoder(input: try FileInputStream(path: path))
        let samples = try decodeAll({ try decoder.decode(into: $0) }, channels: 2, as: Float.self)
        #expect(samples.count == 2 * (44100 + 22050))
    }

    @Test func damagedFilesThrowOrEnd() throws {
        let good = try OggFixtures.bytes(try OggFixtures.vorbis(rate: 44100, channels: 2, seconds: "6"))
        #expect(throws: OggError.self) { try VorbisStreamInfo.read(MemoryInputStream([])) }
        #expect(throws: OggError.self) { try VorbisStreamInfo.read(MemoryInputStream(Array(good.prefix(200)))) }
        #expect(throws: OggError.self) { try OggVorbisDecoder(input: MemoryInputStream(Array(good.prefix(100)))) }
        #expect(throws: OggError.self) { try VorbisStreamInfo.read(MemoryInputStream([0x20] + good)) }
        let opus = try OggFixtures.bytes(try OggFixtures.opus())
        #expect(throws: OggError.self) { try OggVorbisDecoder(input: MemoryInputStream(opus)) }
        #expect(throws: OggError.self) { try VorbisStreamInfo.read(MemoryInputStream(opus)) }
        // Half a file: the headers are there, the length is unknown, decoding stops where the data does.
        let half = Array(good.prefix(good.count / 2))
        #expect(try VorbisStreamInfo.read(MemoryInputStream(half)).endGranulePosition == nil)
        let decoder = try OggVorbisDecoder(input: MemoryInputStream(half))
        let samples = try decodeAll({ try decoder.decode(into: $0) }, channels: 2, as: Float.self)
        #expect(samples.count > 0 && samples.count < 2 * 264_600)
        // Flipped bytes in the middle: the page fails its CRC and the walk stops there, as in `mpd`; no trap.
        var flipped = good
        for index in (good.count * 2 / 3)..<(good.count * 2 / 3 + 500) { flipped[index] ^= 0x5A }
        let damaged = try OggVorbisDecoder(input: MemoryInputStream(flipped))
        _ = try? decodeAll({ try damaged.decode(into: $0) }, channels: 2, as: Float.self)
    }
}

@Suite struct OpusTests {
    @Test func headersAndLength() throws {
        let path = try OggFixtures.opus(rate: 48000, channels: 2, seconds: "1.5")
        let info = try OpusStreamInfo.read(try FileInputStream(path: path))
        #expect(info.head.channels == 2)
        #expect(info.head.preSkip == 312)
        #expect(info.head.outputGain == 0)
        #expect(info.tags.starts(with: Array("OpusTags".utf8)))
        #expect(info.endGranulePosition == Int64(72312))
    }

    @Test(arguments: [(48000, 2), (44100, 1), (44100, 2)])
    func decodesBitExactlyAsOpusdecNoDither(rate: Int, channels: Int) throws {
        let path = try OggFixtures.opus(rate: rate, channels: channels, seconds: "2")
        let decoder = try OggOpusDecoder(input: try FileInputStream(path: path))
        #expect(decoder.channels == channels)
        let samples = try decodeAll({ try decoder.decode(into: $0) }, channels: channels, as: Int16.self)
        let raw = try OggFixtures.run("/usr/bin/opusdec", ["--quiet", "--rate", "48000", "--no-dither", path, "-"])
        let reference = raw.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        #expect(samples.count == reference.count)
        #expect(samples == reference)
    }

    @Test func seeksSampleAccurately() throws {
        let path = try OggFixtures.opus(rate: 48000, channels: 2, seconds: "6")
        let continuous = try OggOpusDecoder(input: try FileInputStream(path: path))
        let reference = try decodeAll({ try continuous.decode(into: $0) }, channels: 2, as: Int16.self)
        for target in [0, 1, 4800, 100_000, 200_000, 280_000] {
            let decoder = try OggOpusDecoder(input: try FileInputStream(path: path))
            #expect(try decoder.seek(toFrame: UInt64(target)) == UInt64(target))
            let rest = try decodeAll({ try decoder.decode(into: $0) }, channels: 2, as: Int16.self)
            #expect(rest.count == reference.count - 2 * target, "target \(target)")
            // After 80 ms of pre-roll libopus has converged: within a few steps of the continuous decode.
            let worst = zip(rest, reference[(2 * target)...]).map { abs(Int($0) - Int($1)) }.max() ?? 0
            #expect(worst <= 64, "target \(target)")
        }
    }

    @Test func multichannelDoesNotOpenAsInMPD() throws {
        let path = try OggFixtures.opus(rate: 48000, channels: 6, seconds: "1")
        #expect(try OpusStreamInfo.read(try FileInputStream(path: path)).head.channels == 6)
        #expect(throws: OggError.self) { try OggOpusDecoder(input: try FileInputStream(path: path)) }
    }

    @Test func chainedSeekableInputStopsAfterTheFirstStream() throws {
        let first = try OggFixtures.bytes(try OggFixtures.opus(rate: 48000, channels: 2, seconds: "1"))
        let second = try OggFixtures.bytes(try OggFixtures.opus(rate: 48000, channels: 2, seconds: "0.5", serial: 8))
        let path = try OggFixtures.write("chained.opus", first + second)
        let decoder = try OggOpusDecoder(input: try FileInputStream(path: path))
        let samples = try decodeAll({ try decoder.decode(into: $0) }, channels: 2, as: Int16.self)
        #expect(samples.count == 2 * 48000)
        // mpd's OnOggEnd throws StopDecoder here (getfingerprint then skips chromaprint_finish).
        #expect(decoder.endedWithStop)
    }

    @Test func damagedFilesThrowOrEnd() throws {
        let good = try OggFixtures.bytes(try OggFixtures.opus())
        #expect(throws: OggError.self) { try OpusStreamInfo.read(MemoryInputStream([])) }
        #expect(throws: OggError.self) { try OpusStreamInfo.read(MemoryInputStream(Array(good.prefix(60)))) }
        #expect(throws: OggError.self) { try OggOpusDecoder(input: MemoryInputStream(Array(good.prefix(40)))) }
        let vorbis = try OggFixtures.bytes(try OggFixtures.vorbis())
        #expect(throws: OggError.self) { try OpusStreamInfo.read(MemoryInputStream(vorbis)) }
        #expect(throws: OggError.self) { try OggOpusDecoder(input: MemoryInputStream(vorbis)) }
        let half = Array(good.prefix(good.count / 2))
        #expect(try OpusStreamInfo.read(MemoryInputStream(half)).endGranulePosition == nil)
        let decoder = try OggOpusDecoder(input: MemoryInputStream(half))
        #expect(!decoder.endedWithStop)
        _ = try? decodeAll({ try decoder.decode(into: $0) }, channels: 2, as: Int16.self)
        // No end granule position: mpd's plugin may chain, and returns at the end.
        #expect(!decoder.endedWithStop)
        var flipped = good
        for index in (good.count / 2)..<(good.count / 2 + 300) { flipped[index] ^= 0xA5 }
        let damaged = try OggOpusDecoder(input: MemoryInputStream(flipped))
        _ = try? decodeAll({ try damaged.decode(into: $0) }, channels: 2, as: Int16.self)
    }
}
