// SPDX-License-Identifier: GPL-3.0-or-later

import CLinux
import Glibc

/// An open file descriptor: a typed wrapper over the raw integer.
///
/// A descriptor has one owner, which must call `close()` exactly once. The type itself does not close on
/// destruction, so owners (connections, listeners, the event loop) state their ownership explicitly.
public struct FileDescriptor: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The raw C descriptor.
    public let rawValue: Int32

    /// Wraps a raw descriptor.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// `fd=N`.
    public var description: String { "fd=\(self.rawValue)" }

    /// Standard error.
    public static let standardError = FileDescriptor(rawValue: 2)

    /// Closes the descriptor. `EINTR` from `close` is not retried: on Linux the descriptor is gone either way.
    ///
    /// The corresponding C function is `close`.
    public func close() {
        let result = Glibc.close(self.rawValue)
        // EBADF here means a double close: a bug in the owner.
        precondition(result == 0 || Errno.current != .badFileDescriptor, "double close of \(self)")
    }

    /// Reads into `buffer`, returning the byte count (0 at end of file) or `.wouldBlock`.
    ///
    /// The corresponding C function is `read`.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> IOResult<Int> {
        try nonBlockingSyscall("read") { Glibc.read(self.rawValue, buffer.baseAddress, buffer.count) }
    }

    /// Writes from `buffer`, returning the byte count or `.wouldBlock`.
    ///
    /// The corresponding C function is `write`.
    public func write(_ buffer: UnsafeRawBufferPointer) throws(SystemCallError) -> IOResult<Int> {
        try nonBlockingSyscall("write") { Glibc.write(self.rawValue, buffer.baseAddress, buffer.count) }
    }

    /// Writes all of `bytes`, blocking as needed. For small writes to blocking descriptors (logs, pid files).
    public func writeAll(_ bytes: some Collection<UInt8>) throws(SystemCallError) {
        let array = Array(bytes)
        var offset = 0
        while offset < array.count {
            let written = try syscall("write") {
                array.withUnsafeBytes { raw in Glibc.write(self.rawValue, raw.baseAddress! + offset, raw.count - offset)
                }
            }
            offset += written
        }
    }

    /// Sets or clears `O_NONBLOCK`.
    ///
    /// The corresponding C function is `fcntl(F_SETFL)`.
    public func setNonBlocking(_ on: Bool = true) throws(SystemCallError) {
        let flags = try syscall("fcntl") { fcntl(self.rawValue, F_GETFL) }
        let newFlags = on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
        _ = try syscall("fcntl") { fcntl(self.rawValue, F_SETFL, newFlags) }
    }

    /// Sets `FD_CLOEXEC`, so child processes do not inherit the descriptor.
    public func setCloseOnExec() throws(SystemCallError) {
        _ = try syscall("fcntl") { fcntl(self.rawValue, F_SETFD, FD_CLOEXEC) }
    }

    /// Opens the file at `path` for appending, creating it (mode 0666 masked by the umask) when missing. For
    /// log files: every write lands at the end even after another process truncated the file.
    ///
    /// The corresponding C function is `open` with `O_APPEND | O_CREAT`.
    public static func openForAppending(_ path: String) throws(SystemCallError) -> FileDescriptor {
        try Self.open(path, O_WRONLY | O_APPEND | O_CREAT)
    }

    /// Opens the file at `path` read-only (close-on-exec): for decoders and tag readers.
    ///
    /// The corresponding C function is `open` with `O_RDONLY`.
    public static func openForReading(_ path: String) throws(SystemCallError) -> FileDescriptor {
        try Self.open(path, O_RDONLY)
    }

    /// Reads up to `buffer.count` bytes at `offset` without moving the file position; blocking descriptors.
    ///
    /// The corresponding C function is `pread`.
    /// - Returns: the bytes read, 0 at or past the end of the file.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(SystemCallError) -> Int {
        try syscall("pread") { Glibc.pread(self.rawValue, buffer.baseAddress, buffer.count, off_t(offset)) }
    }

    /// What `fstat` says about the open file.
    ///
    /// The corresponding C function is `fstat`.
    public func status() throws(SystemCallError) -> FileStatus {
        var info = stat()
        _ = try syscall("fstat") { fstat(self.rawValue, &info) }
        return FileStatus(info)
    }

    /// Opens `path` close-on-exec with `flags`; a created file gets mode 0666 masked by the umask.
    static func open(_ path: String, _ flags: Int32) throws(SystemCallError) -> FileDescriptor {
        let fd = try FileSystemCharset.withFilePath(path) { (file) throws(SystemCallError) in
            try syscall("open") { Glibc.open(file, flags | O_CLOEXEC, 0o666) }
        }
        return FileDescriptor(rawValue: fd)
    }

    /// Creates a pipe whose ends are close-on-exec, and non-blocking unless `nonBlocking` is false (an end that
    /// becomes a child's standard output must block: the flag is shared with the child).
    ///
    /// The corresponding C function is `pipe2`.
    public static func pipe(nonBlocking: Bool = true) throws(SystemCallError) -> (
        read: FileDescriptor, write: FileDescriptor
    ) {
        var fds: [Int32] = [-1, -1]
        _ = try syscall("pipe2") { CLinux.pipe2(&fds, (nonBlocking ? O_NONBLOCK : 0) | O_CLOEXEC) }
        return (FileDescriptor(rawValue: fds[0]), FileDescriptor(rawValue: fds[1]))
    }
}

/// Removes a file system entry; returns whether it succeeded.
///
/// The corresponding C function is `unlink`.
@discardableResult
public func unlinkPath(_ path: String) -> Bool { FileSystemCharset.withFilePath(path) { Glibc.unlink($0) } == 0 }

/// Replaces the content of the file at `path` with `bytes`, creating it (mode 0666 masked by the umask) when
/// missing. Not atomic: for small files nobody reads while they are written (the pid file); see ``AtomicFile``.
///
/// The corresponding C functions are `open` with `O_TRUNC | O_CREAT`, `write` and `close`.
/// - Throws: `SystemCallError` from `open` or `write`.
public func writeFile(_ bytes: [UInt8], atPath path: String) throws(SystemCallError) {
    let fd = try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_TRUNC)
    defer { fd.close() }
    try fd.writeAll(bytes)
}

/// The whole content of the file at `path`.
///
/// The corresponding C functions are `open`, `read` and `close`.
/// - Throws: `SystemCallError` from `open` or `read`.
public func readFile(atPath path: String) throws(SystemCallError) -> [UInt8] {
    let fd = try FileSystemCharset.withFilePath(path) { (file) throws(SystemCallError) in
        try syscall("open") { Glibc.open(file, O_RDONLY | O_CLOEXEC) }
    }
    defer { _ = Glibc.close(fd) }
    var content: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = try syscall("read") { chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) } }
        if count == 0 { return content }
        content.append(contentsOf: chunk[0..<count])
    }
}

/// The size of the file at `path` and at most `count` of its bytes from `offset`: one chunk of a large
/// file without reading the rest.
///
/// The corresponding C functions are `open`, `fstat`, `pread` and `close`.
/// - Throws: `SystemCallError` from `open`, `fstat` or `pread`.
public func readFileRange(
    atPath path: String, offset: Int, count: Int
) throws(SystemCallError) -> (size: Int, bytes: [UInt8]) {
    let fd = try FileSystemCharset.withFilePath(path) { (file) throws(SystemCallError) in
        try syscall("open") { Glibc.open(file, O_RDONLY | O_CLOEXEC) }
    }
    defer { _ = Glibc.close(fd) }
    var info = stat()
    _ = try syscall("fstat") { fstat(fd, &info) }
    let size = Int(info.st_size)
    let wanted = max(0, min(count, size - offset))
    var bytes = [UInt8](repeating: 0, count: wanted)
    var done = 0
    while done < wanted {
        let read = try syscall("pread") {
            bytes.withUnsafeMutableBytes {
                Glibc.pread(fd, $0.baseAddress! + done, wanted - done, off_t(offset + done))
            }
        }
        if read == 0 { break }
        done += read
    }
    return (size, Array(bytes[0..<done]))
}
