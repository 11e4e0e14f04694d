// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Posix

/// Runs `body` with the path of a temporary file (in `TMPDIR`, with the suffix of `path`) holding what `read` gives
/// until it gives 0 bytes, and removes the file afterwards: how a remote storage's song reaches the format plugins,
/// which read tags from files (`Storage.withLocalFile`).
func withTemporaryCopy<Result>(
    of path: String, read: (UnsafeMutableRawBufferPointer) throws -> Int, _ body: (String) throws -> Result
) throws -> Result {
    let suffix = path.utf8.lastIndex(of: UInt8(ascii: ".")).map { String(path[$0...]) } ?? ""
    let directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    var template = Array((directory + "/fermata-storage-XXXXXX" + suffix).utf8CString)
    let descriptor = mkstemps(&template, Int32(suffix.utf8.count))
    guard descriptor >= 0 else {
        throw SystemCallError("Failed to create a temporary file", Errno(rawValue: errno))
    }
    let local = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    defer { unlink(local) }
    do {
        defer { close(descriptor) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 1)
        defer { buffer.deallocate() }
        while true {
            let count = try read(buffer)
            if count == 0 { break }
            var written = 0
            while written < count {
                let result = write(descriptor, buffer.baseAddress! + written, count - written)
                if result < 0 {
                    if errno == EINTR { continue }
                    throw SystemCallError("Failed to write a temporary file", Errno(rawValue: errno))
                }
                written += result
            }
        }
    }
    return try body(local)
}
