// SPDX-License-Identifier: GPL-3.0-or-later

import FFmpeg
import Input
import TestTools
import Testing

@Suite struct FFmpegLibrariesTests {
    static func alac() throws -> String {
        try FFmpegSample.file("alac16.m4a", channels: 2, codec: ["-c:a", "alac", "-sample_fmt", "s16p"])
    }

    static func open(_ path: String, _ libraries: FFmpegLibraries) throws -> FFmpegInput {
        try FFmpegInput(input: try FileInputStream(path: path), url: path, libraries: libraries)
    }

    /// Decodes the whole stream of `path` through `libraries`.
    static func decodeAll(_ path: String, _ libraries: FFmpegLibraries) throws -> [UInt8] {
        let decoder = try FFmpegAudioDecoder(input: try Self.open(path, libraries))
        var pcm: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let frames = try buffer.withUnsafeMutableBytes { try decoder.decode(into: $0) }
            if frames == 0 { break }
            pcm += buffer[0..<(frames * decoder.channels * decoder.bytesPerSample)]
        }
        return pcm
    }

    @Test func sonamesComeFromTheHeadersMajorVersions() {
        // Debian 12's FFmpeg 5.1.
        #expect(FFmpegSonames.headers.avutil == "libavutil.so.57")
        #expect(FFmpegSonames.headers.avcodec == "libavcodec.so.59")
        #expect(FFmpegSonames.headers.avformat == "libavformat.so.59")
    }

    @Test func loadedOnFirstUseAndClosedWhenIdle() throws {
        let path = try Self.alac()
        let libraries = FFmpegLibraries(sonames: .headers)
        #expect(!libraries.isLoaded)
        #expect(libraries.loadCount == 0)

        var input: FFmpegInput? = try Self.open(path, libraries)
        #expect(libraries.isLoaded)
        #expect(libraries.users == 1)
        #expect(libraries.loadCount == 1)
        // Not idle while an input lives.
        #expect(!libraries.unloadIfIdle())
        #expect(libraries.isLoaded)
        #expect(input?.firstAudioStreamIndex == 0)

        // Released: still loaded (a close per release would leak), until the check.
        input = nil
        #expect(libraries.users == 0)
        #expect(libraries.isLoaded)
        #expect(libraries.unloadIfIdle())
        #expect(!libraries.isLoaded)
        #expect(libraries.unloadCount == 1)
        #expect(!libraries.unloadIfIdle())
    }

    @Test func reloadedAfterAnUnloadDecodesTheSame() throws {
        let path = try Self.alac()
        let libraries = FFmpegLibraries(sonames: .headers)
        let first = try Self.decodeAll(path, libraries)
        #expect(first.count == 44100 * 2 * 2)
        #expect(libraries.users == 0)
        #expect(libraries.unloadIfIdle())
        #expect(!libraries.isLoaded)

        let second = try Self.decodeAll(path, libraries)
        #expect(libraries.loadCount == 2)
        #expect(second == first)
        #expect(second == (try FFmpegSample.decode(path, format: "s16le")))
        // An error's message still comes from the reloaded libraries (av_strerror).
        #expect(throws: FFmpegError.self) {
            try FFmpegInput(
                input: try FileInputStream(path: path), url: path, options: [("probesize", "abc")],
                libraries: libraries)
        }
        #expect(libraries.unloadIfIdle())
        #expect(!libraries.isLoaded)
        #expect(libraries.unloadCount == 2)
    }

    @Test func aDecoderKeepsTheLibrariesInUse() throws {
        let path = try Self.alac()
        let libraries = FFmpegLibraries(sonames: .headers)
        let decoder = try FFmpegAudioDecoder(input: try Self.open(path, libraries))
        // The decoder keeps its input, and so one use: the check leaves the libraries loaded.
        #expect(libraries.users == 1)
        #expect(!libraries.unloadIfIdle())
        #expect(libraries.isLoaded)
        var buffer = [UInt8](repeating: 0, count: 4096)
        #expect(try buffer.withUnsafeMutableBytes { try decoder.decode(into: $0) } > 0)
        _ = consume decoder
        #expect(libraries.users == 0)
        #expect(libraries.unloadIfIdle())
        #expect(libraries.unloadCount == 1)
    }

    @Test func missingLibrariesDisableTheWrapperReportedOnce() throws {
        let path = try Self.alac()
        let reports = Reports()
        let libraries = FFmpegLibraries(
            sonames: FFmpegSonames(
                avutil: FFmpegSonames.headers.avutil, avcodec: FFmpegSonames.headers.avcodec,
                avformat: "/nonexistent/libavformat.so.59"),
            reportFailure: reports.reporter)
        for _ in 0..<3 {
            #expect {
                _ = try Self.open(path, libraries)
            } throws: { error in
                (error as? FFmpegError)?.function == "dlopen"
            }
        }
        #expect(!libraries.isLoaded)
        #expect(libraries.users == 0)
        #expect(libraries.loadCount == 0)
        #expect(reports.all.count == 1)
        #expect(reports.all.first?.contains("/nonexistent/libavformat.so.59") == true)
    }
}
