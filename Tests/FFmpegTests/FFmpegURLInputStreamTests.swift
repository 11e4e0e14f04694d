// SPDX-License-Identifier: GPL-3.0-or-later

import FFmpeg
import Glibc
import Input
import Testing

/// URLs read through libavformat's protocols (`mpd`'s ffmpeg input plugin), tried on its `file:` protocol.
@Suite struct FFmpegURLInputStreamTests {
    private static func temporaryFile(_ bytes: [UInt8]) throws -> String {
        var template = Array("/tmp/fermata-avio-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        try #require(fd >= 0)
        defer { close(fd) }
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    @Test func readsSeeksAndEnds() throws {
        let bytes = (0..<20000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let path = try Self.temporaryFile(bytes)
        defer { unlink(path) }
        let stream = try FFmpegURLInputStream(url: "file:" + path, cancellation: InputCancellation())
        #expect(stream.mimeType == "audio/x-mpd-ffmpeg")
        #expect(stream.size == 20000 && stream.isSeekable)
        #expect(try stream.readToEnd(limit: 1 << 20) == bytes)
        #expect(stream.offset == 20000)
        try stream.seek(to: 19990)
        #expect(try stream.readBytes(10) == Array(bytes[19990...]))
        var byte: UInt8 = 0
        #expect(try withUnsafeMutableBytes(of: &byte) { try stream.read(into: $0) } == 0)
    }

    @Test func aFailureIsFFmpegsTextAndACancelledOpenSaysSo() throws {
        #expect(throws: InputError.plugin(message: "No such file or directory", uri: "file:/nonexistent/x")) {
            try FFmpegURLInputStream(url: "file:/nonexistent/x", cancellation: InputCancellation())
        }
        let cancelled = InputCancellation()
        cancelled.cancel()
        #expect(throws: InputError.cancelled(uri: "file:/etc/hostname")) {
            try FFmpegURLInputStream(url: "file:/etc/hostname", cancellation: cancelled)
        }
    }

    @Test func theSchemesAreMpdsWhitelistAndHLS() {
        let schemes = FFmpegLibraries.shared.inputSchemes()
        #expect(schemes.contains("hls+http://") && schemes.contains("hls+https://") && schemes.contains("http://"))
        #expect(!schemes.contains("file://") && !schemes.contains("hls://") && !schemes.contains("pipe://"))
        #expect(schemes == schemes.sorted())
    }
}
