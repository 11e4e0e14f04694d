// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Model
import Posix

/// A failed file operation while reading tags: the call, its `errno` and the path.
public struct TagFileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The C function that failed (`open`, `fstat`, `pread`).
    public let function: String
    /// The `errno` value.
    public let errno: Int32
    /// The file.
    public let path: String

    /// Creates an error.
    public init(function: String, errno: Int32, path: String) {
        self.function = function
        self.errno = errno
        self.path = path
    }

    /// `function(path): strerror text`.
    public var description: String { "\(self.function)(\(self.path)): \(String(cString: strerror(self.errno)))" }
}

/// A read-only file opened for tag and header reading, with positional reads; closes itself. Or any other
/// source of positional reads of known size (a remote stream that seeks, `init(name:size:reader:)`).
///
/// It calls Glibc directly (retrying `EINTR`) because this target may depend only on `CID3Tag` and `Model`.
///
/// Any thread, one at a time. Reads never trust sizes found inside the file: every read is bounded by the
/// file size measured at open time.
public final class TagSourceFile {
    /// The path it was opened with.
    public let path: String
    /// The size in bytes when opened.
    public let size: Int
    /// The open file; -1 for a source read through `reader`.
    private let descriptor: Int32
    /// Reads at an offset from a source that is no file descriptor.
    private let reader: ((Int, UnsafeMutableRawBufferPointer) throws(TagFileError) -> Int)?

    /// Opens `path` for reading.
    ///
    /// - Throws: `TagFileError` from `open` or `fstat`, or `EISDIR` for a directory.
    public init(path: String) throws(TagFileError) {
        self.path = path
        var fd: Int32
        repeat {
            fd = FileSystemCharset.withFilePath(path) { Glibc.open($0, O_RDONLY | O_CLOEXEC) }
        } while fd < 0 && Glibc.errno == EINTR
        if fd < 0 { throw TagFileError(function: "open", errno: Glibc.errno, path: path) }
        var status = stat()
        if fstat(fd, &status) != 0 {
            let code = Glibc.errno
            Glibc.close(fd)
            throw TagFileError(function: "fstat", errno: code, path: path)
        }
        if (status.st_mode & S_IFMT) == S_IFDIR {
            Glibc.close(fd)
            throw TagFileError(function: "open", errno: EISDIR, path: path)
        }
        self.descriptor = fd
        self.size = Int(status.st_size)
        self.reader = nil
    }

    /// A source of `size` bytes named `name` (in errors) that `reader` reads: `reader(offset, buffer)` fills
    /// `buffer` from `offset`, short only at the end.
    public init(
        name: String, size: Int, reader: @escaping (Int, UnsafeMutableRawBufferPointer) throws(TagFileError) -> Int
    ) {
        self.path = name
        self.size = max(0, size)
        self.descriptor = -1
        self.reader = reader
    }

    deinit { if self.descriptor >= 0 { Glibc.close(self.descriptor) } }

    /// Reads up to `buffer.count` bytes at `offset`; short only at the end of the file.
    ///
    /// - Returns: bytes read (0 at or past the end).
    /// - Throws: `TagFileError` from `pread`.
    public func read(at offset: Int, into buffer: UnsafeMutableRawBufferPointer) throws(TagFileError) -> Int {
        guard offset >= 0, let base = buffer.baseAddress else { return 0 }
        if let reader = self.reader { return try reader(offset, buffer) }
        var total = 0
        while total < buffer.count {
            let result = pread(self.descriptor, base + total, buffer.count - total, off_t(offset + total))
            if result < 0 {
                if Glibc.errno == EINTR { continue }
                throw TagFileError(function: "pread", errno: Glibc.errno, path: self.path)
            }
            if result == 0 { break }
            total += result
        }
        return total
    }

    /// Reads exactly `count` bytes at `offset`.
    ///
    /// - Returns: the bytes, or `nil` if the range is not wholly inside the file or the read fails.
    public func readFully(at offset: Int, count: Int) -> [UInt8]? {
        guard offset >= 0, count >= 0, count <= self.size, offset <= self.size - count else { return nil }
        if count == 0 { return [] }
        var ok = false
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            let read = (try? self.read(at: offset, into: UnsafeMutableRawBufferPointer(buffer))) ?? 0
            ok = read == count
            initialized = ok ? count : 0
        }
        return ok ? bytes : nil
    }
}
