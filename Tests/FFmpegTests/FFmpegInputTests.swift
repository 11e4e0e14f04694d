// SPDX-License-Identifier: GPL-3.0-or-later

import FFmpeg
import Input
import TestTools
import Testing

@Suite struct FFmpegInputTests {
    static func open(_ path: String) throws -> FFmpegInput {
        try FFmpegInput(input: try FileInputStream(path: path), url: path)
    }

    @Test func alacStreamParameters() throws {
        let path = try FFmpegSample.file("alac16.m4a", channels: 2, codec: ["-c:a", "alac", "-sample_fmt", "s16p"])
        let input = try Self.open(path)
        #expect(input.formatName.hasPrefix("mov,mp4,m4a"))
        let index = try #require(input.firstAudioStreamIndex)
        let info = try #require(input.audioStreamInfo(index))
        #expect(info.codecName == "alac")
        #expect(info.sampleFormat == .s16(planar: true))
        #expect(info.sampleRate == 44100)
        #expect(info.channels == 2)
        #expect(info.streamDurationMilliseconds == 1000)
        #expect(input.attachedPicture == nil)
        #expect(!input.hasAttachedPicture)
    }

    @Test(arguments: [
        ("aac.m4a", ["-c:a", "aac"], FFmpegSampleFormat.float(planar: true)),
        ("alac24.m4a", ["-c:a", "alac", "-sample_fmt", "s32p"], .s32(planar: true)),
        ("wma.wma", ["-c:a", "wmav2"], .float(planar: true)),
        ("flac.mka", ["-c:a", "flac", "-sample_fmt", "s16"], .s16(planar: false)),
    ])
    func sampleFormatsOfCodecs(name: String, codec: [String], format: FFmpegSampleFormat) throws {
        let input = try Self.open(try FFmpegSample.file(name, codec: codec))
        let index = try #require(input.firstAudioStreamIndex)
        let info = try #require(input.audioStreamInfo(index))
        #expect(info.sampleFormat == format)
    }

    @Test func formatOptionsApplyToTheOpening() throws {
        let path = try FFmpegSample.file("alac16.m4a", channels: 2, codec: ["-c:a", "alac", "-sample_fmt", "s16p"])
        let opened = try FFmpegInput(
            input: try FileInputStream(path: path), url: path,
            options: [("probesize", "5000000"), ("analyzeduration", "1000000")])
        #expect(opened.firstAudioStreamIndex != nil)
        // A value libavformat cannot parse fails the opening, as in mpd (which then reads no FFmpeg file).
        #expect(throws: FFmpegError.self) {
            try FFmpegInput(input: try FileInputStream(path: path), url: path, options: [("probesize", "abc")])
        }
    }

    @Test func matroskaHasOnlyTheContainerDuration() throws {
        let input = try Self.open(try FFmpegSample.file("dur.mka", seconds: "1.5", codec: ["-c:a", "flac"]))
        let info = try #require(input.audioStreamInfo(0))
        #expect(info.streamDurationMilliseconds == nil)
        #expect(info.containerDurationMilliseconds == 1500)
    }

    @Test func containerMetadataInFFmpegsOrderAndCaseInsensitiveLookUp() throws {
        let path = try FFmpegSample.file(
            "tags.m4a", codec: ["-c:a", "aac"],
            metadata: [("title", "T"), ("artist", "A"), ("album_artist", "AA"), ("comment", "C")])
        let input = try Self.open(path)
        let metadata = input.containerMetadata
        let keys = metadata.entries.map { String(decoding: $0.key, as: UTF8.self) }
        #expect(keys.contains("major_brand"))
        #expect(keys.contains("title") && keys.contains("album_artist"))
        #expect(metadata.values(forKey: "TITLE".utf8) == [Array("T".utf8)])
        #expect(metadata.values(forKey: "Album_Artist".utf8) == [Array("AA".utf8)])
        #expect(metadata.values(forKey: "titl".utf8).isEmpty)
        let stream = input.streamMetadata(0)
        #expect(stream.entries.contains { $0.key == Array("handler_name".utf8) })
    }

    @Test(arguments: [("png", "image/png"), ("mjpeg", "image/jpeg")])
    func attachedPictureWithItsMimeType(codec: String, mimeType: String) throws {
        let path = try FFmpegSample.file("cover-\(codec).m4a", codec: ["-c:a", "aac"], cover: codec)
        let input = try Self.open(path)
        #expect(input.hasAttachedPicture)
        let picture = try #require(input.attachedPicture)
        #expect(picture.mimeType == mimeType)
        let cover = try FFmpegSample.bytes(
            FFmpegSample.made.directory + "/cover-\(codec)." + (codec == "png" ? "png" : "jpg"))
        #expect(picture.data == cover)
        #expect(input.firstAudioStreamIndex != nil)
    }

    @Test func readsThroughAMemoryStreamWithTheNameGivingTheExtension() throws {
        let bytes = try FFmpegSample.bytes(try FFmpegSample.file("memory.m4a", codec: ["-c:a", "alac"]))
        let input = try FFmpegInput(input: MemoryInputStream(bytes, uri: "x.m4a"), url: "x.m4a")
        #expect(input.audioStreamInfo(0)?.codecName == "alac")
    }

    @Test(arguments: [
        [UInt8](),
        [UInt8](repeating: 0, count: 5000),
        (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 73 &+ 11) },
        Array("this is not an mp4 file\n".utf8),
    ])
    func garbageThrows(bytes: [UInt8]) {
        #expect(throws: FFmpegError.self) {
            _ = try FFmpegInput(input: MemoryInputStream(bytes, uri: "x.m4a"), url: "x.m4a")
        }
    }

    @Test func everyTruncationOfAnM4AOpensOrThrows() throws {
        let bytes = try FFmpegSample.bytes(
            try FFmpegSample.file("cut.m4a", seconds: "0.3", codec: ["-c:a", "aac"], metadata: [("title", "x")]))
        var opened = 0
        for length in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 97)) {
            let prefix = Array(bytes[..<length])
            guard let input = try? FFmpegInput(input: MemoryInputStream(prefix, uri: "x.m4a"), url: "x.m4a") else {
                continue
            }
            opened += 1
            _ = input.containerMetadata
            if let index = input.firstAudioStreamIndex, let decoder = try? FFmpegAudioDecoder(input: input) {
                _ = decoder.streamFrames
                var buffer = [UInt8](repeating: 0, count: 8192)
                while try buffer.withUnsafeMutableBytes({ try decoder.decode(into: $0) }) > 0 {}
                _ = index
            }
        }
        // The moov atom is at the end (ffmpeg's default), so most prefixes do not open.
        #expect(opened < 97)
    }

    /// A URL opened by libavformat itself (`mpd`'s `ffmpeg_uri_decode`), tried on its `file:` protocol.
    @Test func aURLIsOpenedWithLibavformatsOwnProtocol() throws {
        let path = try FFmpegSample.file("url.m4a", channels: 2, codec: ["-c:a", "alac", "-sample_fmt", "s16p"])
        let input = try FFmpegInput(url: "file:" + path, cancellation: InputCancellation())
        #expect(input.formatName.hasPrefix("mov,mp4,m4a"))
        let index = try #require(input.firstAudioStreamIndex)
        #expect(input.audioStreamInfo(index)?.codecName == "alac")
    }

    @Test func aURLThatCannotBeOpenedIsFFmpegsTextAndACancelledOpenStops() throws {
        // Nothing listens on port 1 of the loopback.
        let refused = #expect(throws: FFmpegError.self) {
            try FFmpegInput(url: "rtsp://127.0.0.1:1/x", cancellation: InputCancellation())
        }
        #expect(refused?.function == "avformat_open_input" && refused?.message == "Connection refused")
        let cancellation = InputCancellation()
        cancellation.cancel()
        let cancelled = #expect(throws: FFmpegError.self) {
            try FFmpegInput(url: "rtsp://127.0.0.1:1/x", cancellation: cancellation)
        }
        #expect(cancelled?.function == "avformat_open_input" && cancelled?.message == "Immediate exit requested")
    }

    @Test func theDecoderSchemesAreThoseOfTheRTSPAndRTPDemuxers() {
        #expect(FFmpegLibraries.shared.decoderSchemes() == ["rtp://", "rtsp://", "rtsps://"])
    }
}
