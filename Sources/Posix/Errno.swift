// SPDX-License-Identifier: GPL-3.0-or-later

import CLinux
import Glibc

/// An error number reported by the operating system.
///
/// The corresponding C value is `errno`.
public struct Errno: Error, RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The raw C error number.
    public let rawValue: Int32

    /// Wraps a raw C error number.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's current `errno`.
    public static var current: Errno { Errno(rawValue: fermata_errno()) }

    /// The text `strerror` gives for this error.
    public var description: String { String(cString: strerror(self.rawValue)) }

    /// `EINTR`: the call was interrupted by a signal.
    public static let interrupted = Errno(rawValue: EINTR)
    /// `EAGAIN`/`EWOULDBLOCK`: the operation would block.
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    /// `EINPROGRESS`: a non-blocking connect is under way.
    public static let inProgress = Errno(rawValue: EINPROGRESS)
    /// `EADDRINUSE`: the address is already in use.
    public static let addressInUse = Errno(rawValue: EADDRINUSE)
    /// `ENOENT`: no such file or directory.
    public static let noSuchFile = Errno(rawValue: ENOENT)
    /// `EACCES`: permission denied.
    public static let permissionDenied = Errno(rawValue: EACCES)
    /// `EEXIST`: the file already exists.
    public static let fileExists = Errno(rawValue: EEXIST)
    /// `EMFILE`: the process has too many open files.
    public static let tooManyOpenFiles = Errno(rawValue: EMFILE)
    /// `ENFILE`: the system has too many open files.
    public static let tooManyOpenFilesInSystem = Errno(rawValue: ENFILE)
    /// `ECONNABORTED`: a connection was aborted before `accept` returned it.
    public static let connectionAborted = Errno(rawValue: ECONNABORTED)
    /// `EPIPE`: the peer closed its end.
    public static let brokenPipe = Errno(rawValue: EPIPE)
    /// `ECONNRESET`: the peer reset the connection.
    public static let connectionReset = Errno(rawValue: ECONNRESET)
    /// `EBADF`: not an open file descriptor (always our bug).
    public static let badFileDescriptor = Errno(rawValue: EBADF)
    /// `EFAULT`: a bad address (always our bug).
    public static let badAddress = Errno(rawValue: EFAULT)
}

/// A failed system call: which call, and the error it gave.
public struct SystemCallError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The name of the C function that failed.
    public let function: String
    /// The error it reported.
    public let errno: Errno

    /// Creates an error for `function` failing with `errno`.
    public init(_ function: String, _ errno: Errno) {
        self.function = function
        self.errno = errno
    }

    /// `function: strerror text`.
    public var description: String { "\(self.function): \(self.errno)" }
}

/// Runs a system call, retrying on `EINTR`, trapping on our own bugs, throwing everything else.
///
/// - Parameters:
///   - function: the C function's name, for the error.
///   - body: the call; it returns -1 and sets `errno` on failure.
/// - Returns: the call's non-negative result.
/// - Throws: `SystemCallError` naming the call.
@inline(__always)
public func syscall<T: FixedWidthInteger>(
    _ function: @autoclosure () -> String, _ body: () -> T
) throws(SystemCallError) -> T {
    while true {
        let result = body()
        if result >= 0 { return result }
        let error = Errno.current
        if error == .interrupted { continue }
        // EBADF and EFAULT mean we passed a bad descriptor or pointer: our bug, never the environment's.
        precondition(error != .badFileDescriptor && error != .badAddress, "\(function()) failed: \(error)")
        throw SystemCallError(function(), error)
    }
}

/// The outcome of a non-blocking I/O call.
public enum IOResult<Value: Sendable>: Sendable {
    /// The call did some work.
    case processed(Value)
    /// The call would have blocked; try again when the descriptor is ready.
    case wouldBlock
}

/// Like `syscall`, but turns "would block" into a value.
@inline(__always)
public func nonBlockingSyscall<T: FixedWidthInteger & Sendable>(
    _ function: @autoclosure () -> String, _ body: () -> T
) throws(SystemCallError) -> IOResult<T> {
    do {
        return .processed(try syscall(function(), body))
    } catch {
        if error.errno == .wouldBlock { return .wouldBlock }
        throw error
    }
}
