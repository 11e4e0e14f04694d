// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Input
import Model
import Testing

@testable import Formats

extension Fixtures {
    /// A sox sine (a sweep on the first channel) encoded by `encode(wave, output)`.
    static func encoded(
        _ name: String, rate: Int, channels: Int, seconds: String, _ encode: (String, String) throws -> Void
    ) throws -> String {
        try self.file(name) { path in
            let wave = path + ".wav"
            try self.run(
                "/usr/bin/sox",
                [
                    "-R", "-D", "-n", "-r", "\(rate)", "-c", "\(channels)", "-b", "16", wave, "synth", seconds, "sine",
                    "200-2000", "vol", "0.5",
                ])
            defer { try? FileManager.default.removeItem(atPath: wave) }
            try encode(wave, path)
        }
    }

    static func mpc(_ name: String, rate: Int, channels: Int, seconds: String) throws -> String {
        try self.encoded(name, rate: rate, channels: channels, seconds: seconds) { wave, path in
            // mpcenc wants its output to end in .mpc.
            try self.run("/usr/bin/mpcenc", ["--silent", wave, path + ".mpc"])
            try FileManager.default.moveItem(atPath: path + ".mpc", toPath: path)
        }
    }

    static func adts(_ name: String, rate: Int, channels: Int, seconds: String) throws -> String {
        try self.encoded(name, rate: rate, channels: channels, seconds: seconds) { wave, path in
            try self.run(
                "/usr/bin/ffmpeg",
                ["-nostdin", "-loglevel", "error", "-y", "-i", wave, "-c:a", "aac", "-f", "adts", path])
        }
    }

    /// Every frame's bytes from `decoder`, in chunks of `chunkFrames`.
    static func decodeAll(_ decoder: inout any Decoder, chunkFrames: Int = 1000) throws -> [UInt8] {
        let size = decoder.format.frameSize
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: chunkFrames * size)
        while true {
            let frames = try buffer.withUnsafeMutableBytes { try decoder.decode(into: $0) }
            if frames == 0 { return out }
            out += buffer[..<(frames * size)]
        }
    }
}

@Suite struct MusepackFormatTests {
    @Test(arguments: [(44100, 2, "1.5", 1500), (48000, 1, "0.7", 700), (32000, 2, "1.1", 1100)])
    func scanGivesMPDsDurationAndNoFormat(rate: Int, channels: Int, seconds: String, milliseconds: UInt64) throws {
        let path = try Fixtures.mpc("mpc-\(rate)-\(channels).mpc", rate: rate, channels: channels, seconds: seconds)
        let info = try FormatRegistry.standard.readInfo(path: path)
        #expect(info.durationMilliseconds == milliseconds)
        #expect(info.audioFormat == nil)
        #expect(info.replayGain.isEmpty)
    }

    @Test func apeTagsComeFromTheGenericScan() throws {
        let source = try Fixtures.mpc("mpc-tags-source.mpc", rate: 44100, channels: 2, seconds: "0.5")
        let path = try Fixtures.tagged(
            "mpc-tags.mpc", from: source,
            script: "from mutagen.apev2 import APEv2\nt = APEv2()\nt['Title'] = 'Muse'\nt['Track'] = '4/9'\n"
                + "t['REPLAYGAIN_TRACK_GAIN'] = '-1.5 dB'\nt.save(PATH)\n")
        let info = try FormatRegistry.standard.readInfo(path: path)
        #expect(info.firstValue(.title) == "Muse")
        #expect(info.firstValue(.track) == "4")
        #expect(info.replayGain.trackGain == -1.5)
    }

    @Test func headerReplayGainIsConvertedAsMPDDoes() throws {
        let pair = try #require(MusepackFormat.gainAndPeak(16000, 20000))
        #expect(pair.gain == 64.82 - 16000.0 / 256)
        #expect(pair.peak == pow(10, 20000.0 / 256 / 20) / 32767)
        #expect(MusepackFormat.gainAndPeak(16000, 0) == nil)
        #expect(MusepackFormat.gainAndPeak(0, 7) == nil)
    }

    @Test func samplesAreScaledTruncatedAndClampedAsMPDDoes() {
        #expect(MusepackDecoder.s24(0.5) == 4_194_304)
        #expect(MusepackDecoder.s24(-0.5) == -4_194_304)
        #expect(MusepackDecoder.s24(1.0 / 8_388_608 * 2.75) == 2)
        #expect(MusepackDecoder.s24(-1.0 / 8_388_608 * 2.75) == -2)
        #expect(MusepackDecoder.s24(1.5) == 8_388_607)
        #expect(MusepackDecoder.s24(-1.5) == -8_388_608)
        #expect(MusepackDecoder.s24(1e30) == -8_388_608)
        #expect(MusepackDecoder.s24(.nan) == -8_388_608)
    }

    @Test func decodesEveryFrameAt24BitsWithABitRate() throws {
        let path = try Fixtures.mpc("mpc-44100-2.mpc", rate: 44100, channels: 2, seconds: "1.5")
        var decoder = try MusepackFormat().makeDecoder(path: path)
        #expect(decoder.format == AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2))
        #expect(decoder.totalFrames == 66150)
        let bytes = try Fixtures.decodeAll(&decoder, chunkFrames: 777)
        #expect(bytes.count == 66150 * 8)
        #expect(decoder.bitRate > 0)
    }

    @Test(arguments: [1, 1151, 1153, 30000, 66149])
    func seekingIsSampleExact(frame: Int) throws {
        let path = try Fixtures.mpc("mpc-44100-2.mpc", rate: 44100, channels: 2, seconds: "1.5")
        var whole = try MusepackFormat().makeDecoder(path: path)
        let all = try Fixtures.decodeAll(&whole)
        var decoder = try MusepackFormat().makeDecoder(path: path)
        var scratch = [UInt8](repeating: 0, count: 800)
        _ = try scratch.withUnsafeMutableBytes { try decoder.decode(into: $0) }
        #expect(try decoder.seek(toFrame: UInt64(frame)) == UInt64(frame))
        #expect(try Fixtures.decodeAll(&decoder) == Array(all[(frame * 8)...]))
    }

    @Test func brokenFilesThrow() throws {
        let source = try Fixtures.contents(
            try Fixtures.mpc("mpc-44100-2.mpc", rate: 44100, channels: 2, seconds: "1.5"))
        var generator = SystemRandomNumberGenerator()
        let garbage = (0..<3000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        for (name, bytes) in [
            ("mpc-empty.mpc", []), ("mpc-garbage.mpc", garbage), ("mpc-magic.mpc", Array("MPCK".utf8)),
        ] {
            let path = try Fixtures.bytes(name, bytes)
            #expect(throws: FormatError.self) { try MusepackFormat().readInfo(path: path) }
            #expect(throws: FormatError.self) { try MusepackFormat().makeDecoder(path: path) }
        }
        // Truncated: mpd still lists the file with the header's duration, and plays what is there.
        let truncated = try Fixtures.bytes("mpc-truncated.mpc", Array(source.prefix(source.count / 2)))
        #expect(try MusepackFormat().readInfo(path: truncated).durationMilliseconds == 1500)
        var decoder = try MusepackFormat().makeDecoder(path: truncated)
        let played = (try? Fixtures.decodeAll(&decoder)) ?? []
        #expect(played.count < 66150 * 8)
        for length in stride(from: 0, to: source.count, by: source.count / 41) {
            let input = MemoryInputStream(Array(source.prefix(length)))
            guard var cut = try? MusepackFormat().makeDecoder(input: input) else { continue }
            _ = try? Fixtures.decodeAll(&cut)
        }
    }
}

@Suite struct FAADFormatTests {
    /// ADTS frames in the file, counted as mpd's scan counts them.
    static func frames(_ bytes: [UInt8]) -> Int {
        var offset = 0
        var count = 0
        while offset + 7 <= bytes.count, bytes[offset] == 0xFF {
            offset += Int(bytes[offset + 3] & 3) << 11 | Int(bytes[offset + 4]) << 3 | Int(bytes[offset + 5] >> 5)
            count += 1
        }
        return count
    }

    @Test(arguments: [(44100, 2), (48000, 1), (22050, 2)])
    func scanCountsADTSFramesForTheDuration(rate: Int, channels: Int) throws {
        let path = try Fixtures.adts("aac-\(rate)-\(channels).aac", rate: rate, channels: channels, seconds: "1.3")
        let frames = Self.frames(try Fixtures.contents(path))
        let info = try FormatRegistry.standard.readInfo(path: path)
        #expect(info.durationMilliseconds == UInt64(frames) * 1024 * 1000 / UInt64(rate))
        #expect(info.audioFormat == nil)
    }

    @Test func anID3TagInFrontIsSkipped() throws {
        let source = try Fixtures.adts("aac-44100-2.aac", rate: 44100, channels: 2, seconds: "1.3")
        let frames = Self.frames(try Fixtures.contents(source))
        let path = try Fixtures.tagged(
            "aac-id3.aac", from: source,
            script:
                "from mutagen.id3 import ID3, TIT2\nt = ID3()\nt.add(TIT2(encoding=3, text='Front'))\nt.save(PATH)\n")
        let info = try FormatRegistry.standard.readInfo(path: path)
        #expect(info.durationMilliseconds == UInt64(frames) * 1024 * 1000 / 44100)
        #expect(info.firstValue(.title) == "Front")
        var decoder = try FAADFormat().makeDecoder(path: path)
        #expect(try Fixtures.decodeAll(&decoder).count == (frames - 1) * 1024 * 4)
    }

    @Test func adifHeaderGivesTheDurationFromItsBitRate() throws {
        // "ADIF", no copyright id (bit 7 of byte 4 clear), then the bit rate bits mpd reads.
        var bytes = Array("ADIF".utf8) + [0x00, 0x01, 0xF4, 0x00] + [UInt8](repeating: 0, count: 992)
        bytes[4] = 0x00
        let path = try Fixtures.bytes("adif.aac", bytes)
        let bitRate = UInt64(0x01) << 11 | UInt64(0xF4) << 3
        #expect(try FAADFormat().readInfo(path: path).durationMilliseconds == 1000 * 1000 / (bitRate / 8))
    }

    @Test func decodes16BitStereoFromMonoAndCannotSeek() throws {
        let path = try Fixtures.adts("aac-48000-1.aac", rate: 48000, channels: 1, seconds: "1.3")
        var decoder = try FAADFormat().makeDecoder(path: path)
        #expect(decoder.format == AudioFormat(sampleRate: 48000, sampleFormat: .s16, channels: 2))
        let frames = Self.frames(try Fixtures.contents(path))
        #expect(decoder.totalFrames == UInt64(frames) * 1024 * 1000 / 48000 * 48000 / 1000)
        #expect(try Fixtures.decodeAll(&decoder, chunkFrames: 333).count == (frames - 1) * 1024 * 4)
        #expect(decoder.bitRate > 0)
        #expect(throws: FormatError.self) { try decoder.seek(toFrame: 100) }
    }

    @Test func whatMPDListsAndWhatItRejects() throws {
        var generator = SystemRandomNumberGenerator()
        // libfaad accepts the first bytes of nearly anything (its defaults): a song without a duration.
        let garbage = try Fixtures.bytes(
            "aac-garbage.aac", (0..<3000).map { _ in UInt8.random(in: 0...254, using: &generator) })
        #expect(try FAADFormat().readInfo(path: garbage).durationMilliseconds == nil)
        #expect(throws: FormatError.self) { try FAADFormat().makeDecoder(path: garbage) }
        for (name, bytes) in [
            ("aac-empty.aac", [UInt8]()),
            ("aac-huge-id3.aac", Array("ID3".utf8) + [4, 0, 0, 0x7F, 0x7F, 0x7F, 0x7F] + [0, 0]),
        ] {
            let path = try Fixtures.bytes(name, bytes)
            #expect(throws: FormatError.self) { try FAADFormat().readInfo(path: path) }
            #expect(throws: FormatError.self) { try FAADFormat().makeDecoder(path: path) }
        }
    }

    @Test func truncationsNeverCrash() throws {
        let source = try Fixtures.contents(
            try Fixtures.adts("aac-44100-2.aac", rate: 44100, channels: 2, seconds: "1.3"))
        for length in stride(from: 0, to: source.count, by: source.count / 53) {
            let input = MemoryInputStream(Array(source.prefix(length)) + Array(source.suffix(length % 97)))
            guard var decoder = try? FAADFormat().makeDecoder(input: input) else { continue }
            _ = try Fixtures.decodeAll(&decoder)
        }
    }
}
