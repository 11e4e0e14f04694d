// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import ID3Tag
import Input
import Model

/// A local copy of a remote stream, for the plugins whose scan here reads only files (their libraries open a
/// path) while `mpd`'s scans the stream: the bytes from the stream's current offset to its end, in a temporary
/// file in `TMPDIR` with the suffix of the stream's URI, removed when `body` returns.
enum TemporaryCopy {
    /// Runs `body` with the copy's path.
    ///
    /// - Throws: `FormatError.input` when the stream cannot be read; `.io` when the copy cannot be written;
    ///   what `body` throws.
    static func with<Result>(
        _ input: any InputStream, _ body: (String) throws(FormatError) -> Result
    ) throws(FormatError) -> Result {
        let suffix = Suffix.ofURI(input.uri).map { "." + $0 } ?? ""
        let directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array((directory + "/fermata-scan-XXXXXX" + suffix).utf8CString)
        let descriptor = mkstemps(&template, Int32(suffix.utf8.count))
        guard descriptor >= 0 else { throw .io(TagFileError(function: "mkstemps", errno: errno, path: directory)) }
        let local = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { unlink(local) }
        do {
            defer { close(descriptor) }
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 1)
            defer { buffer.deallocate() }
            while true {
                let count: Int
                do {
                    count = try input.read(into: buffer)
                } catch {
                    throw FormatError.input(error)
                }
                if count == 0 { break }
                var written = 0
                while written < count {
                    let result = write(descriptor, buffer.baseAddress! + written, count - written)
                    if result < 0 {
                        if errno == EINTR { continue }
                        throw FormatError.io(TagFileError(function: "write", errno: errno, path: local))
                    }
                    written += result
                }
            }
        }
        return try body(local)
    }
}
