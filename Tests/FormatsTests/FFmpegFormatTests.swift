// SPDX-License-Identifier: GPL-3.0-or-later

import FFmpeg
import Formats
import Foundation
import Input
import Model
import Synchronization
import Testing

/// Files made with Debian's `ffmpeg` command (bit-exact, no metadata of its own).
enum FFmpegFixtures {
    /// A sweep encoded with `codec` into the `muxer` container (`ipod`, `matroska`, `asf`…).
    static func file(
        _ name: String, muxer: String, rate: Int = 44100, channels: Int = 2, seconds: String = "1",
        codec: [String], metadata: [(String, String)] = []
    ) throws -> String {
        try Fixtures.file(name) { path in
            let sweep = "0.5*sin(2*PI*(200+900*t)*t)|0.4*sin(2*PI*(300+500*t)*t)"
            var arguments = [
                "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "aevalsrc=\(sweep):s=\(rate):d=\(seconds)",
                "-ac", "\(channels)",
            ]
            arguments += codec + ["-fflags", "+bitexact", "-flags:a", "+bitexact", "-map_metadata", "-1"]
            for (key, value) in metadata { arguments += ["-metadata", "\(key)=\(value)"] }
            try Fixtures.run("/usr/bin/ffmpeg", arguments + ["-f", muxer, path])
        }
    }
}

@Suite struct FFmpegFormatTests {
    let plugin = FFmpegFormat()

    @Test(arguments: [
        ("aac.m4a", "ipod", 44100, 2, ["-c:a", "aac"], "44100:f:2", UInt64(1000)),
        ("aac-mono-48k.m4a", "ipod", 48000, 1, ["-c:a", "aac"], "48000:f:1", UInt64(1000)),
        ("alac16.m4a", "ipod", 44100, 2, ["-c:a", "alac", "-sample_fmt", "s16p"], "44100:16:2", UInt64(1000)),
        ("alac24.m4a", "ipod", 96000, 2, ["-c:a", "alac", "-sample_fmt", "s32p"], "96000:32:2", UInt64(1000)),
        ("wmav2.wma", "asf", 44100, 2, ["-c:a", "wmav2"], "44100:f:2", UInt64(1021)),
        ("flac16.mka", "matroska", 44100, 1, ["-c:a", "flac", "-sample_fmt", "s16"], "44100:16:1", UInt64(1000)),
        ("pcm24.mka", "matroska", 48000, 2, ["-c:a", "pcm_s24le"], "48000:32:2", UInt64(1000)),
        ("u8.mka", "matroska", 8000, 1, ["-c:a", "pcm_u8"], "", UInt64(1000)),
    ])
    func formatAndDuration(
        name: String, muxer: String, rate: Int, channels: Int, codec: [String], format: String, milliseconds: UInt64
    ) throws {
        let path = try FFmpegFixtures.file(name, muxer: muxer, rate: rate, channels: channels, codec: codec)
        let info = try self.plugin.readInfo(path: path)
        #expect((info.audioFormat.map { "\($0)" } ?? "") == format)
        #expect(info.durationMilliseconds == milliseconds)
    }

    /// 5447 frames at 44.1 kHz are 123.51 ms: mpd's `av_rescale_q` rounds to 124, truncating would give 123.
    @Test func durationIsRoundedToTheNearestMillisecond() throws {
        let path = try FFmpegFixtures.file(
            "odd.m4a", muxer: "ipod", seconds: "0.12352", codec: ["-c:a", "alac", "-sample_fmt", "s16p"])
        #expect(try self.plugin.readInfo(path: path).durationMilliseconds == 124)
    }

    @Test func tagsFromFFmpegsOwnMetadataNames() throws {
        let path = try FFmpegFixtures.file(
            "tagged.m4a", muxer: "ipod", codec: ["-c:a", "aac"],
            metadata: [
                ("title", "Song"), ("artist", "Singer"), ("album_artist", "Band"), ("album", "Record"),
                ("track", "02/10"), ("disc", "1/1"), ("date", "2010"), ("genre", "Pop"),
            ])
        let info = try self.plugin.readInfo(path: path)
        #expect(
            info.tags.map { "\($0.type.name)=\($0.value)" } == [
                "Artist=Singer", "Album=Record", "Title=Song", "Track=2", "Genre=Pop", "Date=2010", "Disc=1",
                "AlbumArtist=Band",
            ])
        let comments = try self.plugin.readComments(path: path).map(\.name)
        #expect(comments.first == "major_brand")
        #expect(comments.contains("handler_name"))
        #expect(try self.plugin.readPicture(path: path) == nil)
    }

    @Test func decoderThroughTheRegistryDeliversTheCodecsFormat() throws {
        let path = try FFmpegFixtures.file(
            "play.m4a", muxer: "ipod", codec: ["-c:a", "alac", "-sample_fmt", "s32p"])
        var decoder = try FormatRegistry.standard.openDecoder(path: path)
        #expect(decoder.format == AudioFormat(sampleRate: 44100, sampleFormat: .s32, channels: 2))
        #expect(decoder.totalFrames == 44100)
        var frames = 0
        var buffer = [UInt8](repeating: 0, count: 4000)
        while true {
            let count = try buffer.withUnsafeMutableBytes { try decoder.decode(into: $0) }
            if count == 0 { break }
            frames += count
        }
        #expect(frames == 44100)
        #expect(try decoder.seek(toFrame: 22050) == 22050)
        frames = 0
        while true {
            let count = try buffer.withUnsafeMutableBytes { try decoder.decode(into: $0) }
            if count == 0 { break }
            frames += count
        }
        #expect(frames == 22050)
    }

    @Test(arguments: [
        ("garbage.m4a", (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 73 &+ 11) }),
        ("empty.m4a", []),
        ("zeros.wma", [UInt8](repeating: 0, count: 3000)),
        ("text.mka", Array(String(repeating: "not matroska\n", count: 20).utf8)),
    ])
    func garbageIsNotRecognised(name: String, bytes: [UInt8]) throws {
        let path = try Fixtures.file("ff-" + name) { path in
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
        #expect(throws: FormatError.self) { _ = try self.plugin.readInfo(path: path) }
        #expect(throws: FormatError.self) {
            _ = try self.plugin.makeDecoder(input: MemoryInputStream(bytes, uri: name))
        }
    }

    @Test func everyTruncationReadsOrThrows() throws {
        let path = try FFmpegFixtures.file(
            "cut.mka", muxer: "matroska", seconds: "0.5", codec: ["-c:a", "flac"], metadata: [("title", "x")])
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        for length in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 50)) {
            let cut = try Fixtures.file("ff-cut-\(length).mka") { path in
                try Data(bytes[..<length]).write(to: URL(fileURLWithPath: path))
            }
            _ = try? self.plugin.readInfo(path: cut)
            guard
                var decoder = try? self.plugin.makeDecoder(input: MemoryInputStream(Array(bytes[..<length]), uri: cut))
            else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            while (try? buffer.withUnsafeMutableBytes({ try decoder.decode(into: $0) })) ?? 0 > 0 {}
        }
    }

    @Test func withoutFFmpegsLibrariesThePluginDeclinesEveryFileAndStream() throws {
        let path = try FFmpegFixtures.file("alac16.m4a", muxer: "ipod", codec: ["-c:a", "alac", "-sample_fmt", "s16p"])
        let reports = Mutex<[String]>([])
        let libraries = FFmpegLibraries(
            sonames: FFmpegSonames(avutil: "libavutil.so.0", avcodec: "libavcodec.so.0", avformat: "libavformat.so.0"),
            reportFailure: { message in reports.withLock { $0.append(message) } })
        let plugin = FFmpegFormat(libraries: libraries)
        #expect(plugin.suffixes == FFmpegFormat().suffixes)
        #expect(throws: FormatError.notRecognized(path: path)) { try plugin.readInfo(path: path) }
        #expect(throws: FormatError.notRecognized(path: path)) { try plugin.readPicture(path: path) }
        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(throws: FormatError.notRecognized(path: "x.m4a")) {
            try plugin.makeDecoder(input: MemoryInputStream(bytes, uri: "x.m4a"))
        }
        plugin.releaseIdleResources()
        #expect(!libraries.isLoaded)
        #expect(reports.withLock { $0.count } == 1)
        // The process's libraries still read it.
        #expect(try FFmpegFormat().readInfo(path: path).durationMilliseconds == 1000)
    }
}
