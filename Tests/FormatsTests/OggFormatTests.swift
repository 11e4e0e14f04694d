// SPDX-License-Identifier: GPL-3.0-or-later

import Formats
import Foundation
import Input
import Model
import Testing

/// The vorbis and opus plugins through the registry, on files made with oggenc, opusenc and mutagen.
@Suite struct OggFormatTests {
    static func wave(_ name: String, rate: Int, channels: Int, seconds: String) throws -> String {
        try Fixtures.file(name) { path in
            try Fixtures.run(
                "/usr/bin/sox",
                [
                    "-D", "-n", "-r", "\(rate)", "-c", "\(channels)", "-b", "16", "-t", "wav", path, "synth", seconds,
                    "sine", "440", "vol", "0.5",
                ])
        }
    }

    static func vorbis(_ name: String, seconds: String = "1") throws -> String {
        let wave = try self.wave(name + ".wav", rate: 44100, channels: 2, seconds: seconds)
        return try Fixtures.file(name) { path in
            try Fixtures.run("/usr/bin/oggenc", ["-Q", "-s", "3", "-o", path, wave])
        }
    }

    static func opus(_ name: String, seconds: String = "1") throws -> String {
        let wave = try self.wave(name + ".wav", rate: 48000, channels: 1, seconds: seconds)
        return try Fixtures.file(name) { path in
            try Fixtures.run("/usr/bin/opusenc", ["--quiet", "--serial", "3", wave, path])
        }
    }

    /// A mutagen script setting the comments of the file at PATH, in order.
    static func comments(_ kind: String, _ pairs: [(String, String)]) -> String {
        let list = pairs.map { "(\"\($0.0)\", \"\($0.1)\")" }.joined(separator: ", ")
        return """
            import mutagen.\(kind.lowercased()) as m
            f = getattr(m, "\(kind == "OggOpus" ? "OggOpus" : "OggVorbis")")(PATH)
            f.tags.clear()
            for pair in [\(list)]:
                list.append(f.tags, pair)
            f.save()
            """
    }

    @Test func registryOrder() {
        let names = FormatRegistry.standard.plugins.map(\.name)
        #expect(names.firstIndex(of: "vorbis")! < names.firstIndex(of: "opus")!)
        #expect(names.firstIndex(of: "mad")! < names.firstIndex(of: "vorbis")!)
        #expect(
            FormatRegistry.standard.plugins(forSuffix: "ogg").map(\.name).filter { ["vorbis", "opus"].contains($0) }
                == ["vorbis", "opus"])
        #expect(FormatRegistry.standard.plugin(forSuffix: "opus")?.name == "opus")
        #expect(FormatRegistry.standard.plugin(forMimeType: "audio/x-vorbis+ogg")?.name == "vorbis")
        #expect(FormatRegistry.standard.plugin(forMimeType: "audio/opus")?.name == "opus")
    }

    @Test func vorbisInfo() throws {
        let path = try Fixtures.tagged(
            "tags.ogg", from: try Self.vorbis("plain.ogg"),
            script: Self.comments(
                "OggVorbis",
                [
                    ("TITLE", "T"), ("tracknumber", "03/12"), ("MOVEMENT", "2"), ("REPLAYGAIN_TRACK_GAIN", "-6.5 dB"),
                    ("ARTIST", "A"), ("ARTIST", "B"),
                ]))
        let info = try FormatRegistry.standard.readInfo(path: path)
        #expect(info.audioFormat == AudioFormat(sampleRate: 44100, sampleFormat: .float, channels: 2))
        #expect(info.durationMilliseconds == 1000)
        #expect(info.values(.title) == ["T"])
        #expect(info.values(.track) == ["3"])
        #expect(info.values(.movementNumber) == ["2"])
        #expect(info.values(.artist) == ["A", "B"])
        #expect(info.replayGain.trackGain == -6.5)
        // The decoder reports it too (mpd's plugin submits it as it opens the stream).
        #expect(try FormatRegistry.standard.openDecoder(path: path).replayGain?.trackGain == -6.5)
        #expect(try FormatRegistry.standard.openDecoder(path: try Self.vorbis("plain.ogg")).replayGain == nil)
        let comments = try FormatRegistry.standard.readComments(path: path)
        #expect(
            comments.map(\.name) == ["TITLE", "tracknumber", "MOVEMENT", "REPLAYGAIN_TRACK_GAIN", "ARTIST", "ARTIST"])
    }

    @Test func opusInfo() throws {
        let long = String(repeating: "x", count: 4096)
        let path = try Fixtures.tagged(
            "tags.opus", from: try Self.opus("plain.opus"),
            script: Self.comments(
                "OggOpus",
                [
                    ("TITLE", "T"), ("MOVEMENT", "Adagio"), ("R128_TRACK_GAIN", "-512"), ("COMMENT", long),
                    ("ALBUM", String(long.dropFirst())),
                ]))
        let info = try FormatRegistry.standard.readInfo(path: path)
        #expect(info.audioFormat == AudioFormat(sampleRate: 48000, sampleFormat: .s16, channels: 1))
        // The end granule position (1 s plus the 312-sample pre-skip) over 48000.
        #expect(info.durationMilliseconds == 1006)
        #expect(info.values(.movement) == ["Adagio"])
        #expect(info.values(.comment).isEmpty)
        #expect(info.values(.album).count == 1)
        // mpd's decoder: R128 gain plus the header's output gain (0) plus 5 dB.
        #expect(info.replayGain.trackGain == 3)
        #expect(try FormatRegistry.standard.openDecoder(path: path).replayGain == info.replayGain)
        // Without R128 entries, the output gain plus 5 dB as the track gain.
        #expect(
            try FormatRegistry.standard.openDecoder(path: try Self.opus("plain.opus")).replayGain
                == ReplayGainInfo(trackGain: 5))
        let comments = try FormatRegistry.standard.readComments(path: path)
        #expect(comments.map(\.name) == ["TITLE", "MOVEMENT", "R128_TRACK_GAIN", "ALBUM"])
    }

    @Test func opusInDotOggFallsThroughVorbis() throws {
        let source = try Self.opus("plain2.opus")
        let path = try Fixtures.file("opus-named.ogg") { path in
            try FileManager.default.copyItem(atPath: source, toPath: path)
        }
        #expect(throws: FormatError.self) { try Formats.VorbisFormat().readInfo(path: path) }
        let info = try FormatRegistry.standard.readInfo(path: path)
        #expect(info.audioFormat?.sampleFormat == .s16)
        var decoder = try FormatRegistry.standard.openDecoder(path: path)
        #expect(decoder.format == AudioFormat(sampleRate: 48000, sampleFormat: .s16, channels: 1))
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 48000 * 2, alignment: 16)
        defer { buffer.deallocate() }
        var total = 0
        while case let frames = try decoder.decode(into: buffer), frames > 0 { total += frames }
        #expect(total == 48000)
    }

    @Test func vorbisDecoderThroughRegistry() throws {
        let path = try Self.vorbis("play.ogg", seconds: "2")
        var decoder = try FormatRegistry.standard.openDecoder(path: path)
        #expect(decoder.format == AudioFormat(sampleRate: 44100, sampleFormat: .float, channels: 2))
        #expect(decoder.totalFrames == 88200)
        #expect(try decoder.seek(toFrame: 44100) == 44100)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096 * 8, alignment: 16)
        defer { buffer.deallocate() }
        var total = 0
        while case let frames = try decoder.decode(into: buffer), frames > 0 { total += frames }
        #expect(total == 44100)
    }

    @Test(arguments: [[UInt8](), Array("OggS".utf8), [UInt8](repeating: 0x4F, count: 5000)])
    func garbageIsNotRecognized(_ bytes: [UInt8]) throws {
        let suffix = bytes.count
        for name in ["garbage-\(suffix).ogg", "garbage-\(suffix).opus"] {
            let path = try Fixtures.bytes(name, bytes)
            #expect(throws: FormatError.self) { try FormatRegistry.standard.readInfo(path: path) }
            #expect(throws: FormatError.self) { try FormatRegistry.standard.openDecoder(path: path) }
        }
    }
}

extension OggFormatTests {
    /// Decodes all of `decoder`, noting its ReplayGain track gain whenever it changes, with the frame it changed at.
    static func trackGains(_ decoder: any Decoder) throws -> [(frame: Int, gain: Double?)] {
        var decoder = decoder
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096 * 8, alignment: 8)
        defer { buffer.deallocate() }
        var changes = [(frame: 0, gain: decoder.replayGain?.trackGain)]
        var frame = 0
        while true {
            let frames = try decoder.decode(into: buffer)
            if frames == 0 { break }
            if decoder.replayGain?.trackGain != changes.last?.gain {
                changes.append((frame, decoder.replayGain?.trackGain))
            }
            frame += frames
        }
        return changes
    }

    /// Each stream of a chain replaces the ReplayGain when its comment header has one, from its first frame on
    /// (`mpd`'s Vorbis plugin plays through a chain in a file too).
    @Test func aChainedVorbisStreamReportsEachStreamsReplayGain() throws {
        var bytes: [UInt8] = []
        for (index, gain) in ["-6.00 dB", nil, "-14.50 dB"].enumerated() {
            let plain = try Self.vorbis("chain-rg-\(index).ogg")
            let pairs = [("TITLE", "part \(index)")] + (gain.map { [("REPLAYGAIN_TRACK_GAIN", $0)] } ?? [])
            let path = try Fixtures.tagged(
                "chain-rg-tagged-\(index).ogg", from: plain, script: Self.comments("OggVorbis", pairs))
            bytes += try Fixtures.contents(path)
        }
        let changes = try Self.trackGains(
            VorbisFormat().makeDecoder(input: SizelessStream(bytes, uri: "http://localhost/stream", isSeekable: true)))
        #expect(changes.map(\.gain) == [-6, -14.5], "a stream without a gain keeps the one before")
        #expect(changes.last?.frame == 2 * 44100)
        let file = try Self.trackGains(VorbisFormat().makeDecoder(input: MemoryInputStream(bytes)))
        #expect(file.map(\.gain) == [-6, -14.5])
    }

    /// Opus: the first stream's gain is its output gain (plus 5 dB) when it has no `R128_TRACK_GAIN`; a later
    /// stream replaces it only with an `R128_*` gain (plus its own output gain). A file stops after its first
    /// stream, as in `mpd`, so only a stream of unknown length gets there.
    @Test func aChainedOpusStreamReportsLaterR128Gains() throws {
        var bytes: [UInt8] = []
        for (index, gain) in [nil, "-1536", nil].enumerated() {
            let plain = try Self.opus("chain-r128-\(index).opus")
            let pairs = [("TITLE", "part \(index)")] + (gain.map { [("R128_TRACK_GAIN", $0)] } ?? [])
            let path = try Fixtures.tagged(
                "chain-r128-tagged-\(index).opus", from: plain, script: Self.comments("OggOpus", pairs))
            bytes += try Fixtures.contents(path)
        }
        let changes = try Self.trackGains(
            OpusFormat().makeDecoder(input: SizelessStream(bytes, uri: "http://localhost/stream", isSeekable: true)))
        #expect(changes.map(\.gain) == [5, -1])
        #expect(try Self.trackGains(OpusFormat().makeDecoder(input: MemoryInputStream(bytes))).map(\.gain) == [5])
    }
}
