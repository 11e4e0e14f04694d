// SPDX-License-Identifier: GPL-3.0-or-later

import CLinux
import Glibc
import RawText

/// Stream-socket calls on a `FileDescriptor`, named after their C functions.
public enum Socket {
    /// Creates a non-blocking, close-on-exec stream socket.
    ///
    /// The corresponding C function is `socket`.
    public static func socket(family: Int32) throws(SystemCallError) -> FileDescriptor {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        return FileDescriptor(rawValue: try syscall("socket") { Glibc.socket(family, type, 0) })
    }

    /// Creates a listening socket bound to `address`.
    ///
    /// IP sockets get `SO_REUSEADDR` and nothing else, as `mpd`'s: an IPv6 wildcard takes IPv4 clients too where the
    /// system's default allows (`net.ipv6.bindv6only` 0, then binding the IPv4 wildcard after it fails, which
    /// `mpd` logs and goes on). A Unix socket path that exists is replaced, and the new socket is made `0666`.
    /// - Throws: `SystemCallError` naming the failing call; `SocketAddressError` for unusable text.
    public static func listen(on address: SocketAddress, backlog: Int32 = 64) throws -> FileDescriptor {
        let fd = try Socket.socket(family: address.family)
        do {
            switch address {
            case .ipv4, .ipv6:
                try Socket.setOption(fd, level: SOL_SOCKET, name: SO_REUSEADDR, value: 1)
            case .unix(let path):
                _ = RawText.withFilePath(path) { unlink($0) }
            case .abstract:
                break
            }
            try address.withSockAddr { pointer, length in
                _ = try syscall("bind") { Glibc.bind(fd.rawValue, pointer, length) }
            }
            if case .unix(let path) = address { _ = RawText.withFilePath(path) { chmod($0, 0o666) } }
            _ = try syscall("listen") { Glibc.listen(fd.rawValue, backlog) }
            return fd
        } catch {
            fd.close()
            throw error
        }
    }

    /// Accepts a pending connection as a non-blocking, close-on-exec socket.
    ///
    /// The corresponding C function is `accept4`.
    /// - Returns: the new socket and its peer address, or `.wouldBlock` when none is pending.
    public static func accept(
        _ listener: FileDescriptor
    ) throws(SystemCallError) -> IOResult<(FileDescriptor, SocketAddress?)> {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let flags = Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let result = try withUnsafeMutablePointer(to: &storage) {
            (pointer) throws(SystemCallError) -> IOResult<Int32> in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (address) throws(SystemCallError) in
                try nonBlockingSyscall("accept4") { CLinux.accept4(listener.rawValue, address, &length, flags) }
            }
        }
        switch result {
        case .wouldBlock:
            return .wouldBlock
        case .processed(let raw):
            let peer = withUnsafePointer(to: &storage) { SocketAddress(storage: $0, length: length) }
            return .processed((FileDescriptor(rawValue: raw), peer))
        }
    }

    /// The address a socket is bound to.
    ///
    /// The corresponding C function is `getsockname`.
    public static func localAddress(_ fd: FileDescriptor) throws(SystemCallError) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = try withUnsafeMutablePointer(to: &storage) { (pointer) throws(SystemCallError) -> Int32 in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (address) throws(SystemCallError) in
                try syscall("getsockname") { getsockname(fd.rawValue, address, &length) }
            }
        }
        return withUnsafePointer(to: &storage) { SocketAddress(storage: $0, length: length) }
    }

    /// Whether `fd` is a listening stream socket (used for sockets passed by systemd).
    public static func isListeningStreamSocket(_ fd: FileDescriptor) -> Bool {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd.rawValue, SOL_SOCKET, SO_ACCEPTCONN, &value, &length) == 0 else { return false }
        return value != 0
    }

    /// Sets an integer socket option.
    ///
    /// The corresponding C function is `setsockopt`.
    public static func setOption(
        _ fd: FileDescriptor, level: Int32, name: Int32, value: Int32
    ) throws(SystemCallError) {
        var value = value
        _ = try syscall("setsockopt") {
            setsockopt(fd.rawValue, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    /// The user id of the peer process of a Unix-domain socket, or `nil` when it cannot be known.
    ///
    /// The corresponding C call is `getsockopt(SOL_SOCKET, SO_PEERCRED)`.
    public static func peerUserID(_ fd: FileDescriptor) -> UInt32? {
        let uid = fermata_peer_uid(fd.rawValue)
        return uid >= 0 ? UInt32(uid) : nil
    }

    /// Turns off Nagle's algorithm, so small replies leave at once.
    public static func setNoDelay(_ fd: FileDescriptor) throws(SystemCallError) {
        try Socket.setOption(fd, level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: 1)
    }

    /// Fixes the kernel send buffer size (`SO_SNDBUF`), turning off its auto-tuning.
    public static func setSendBufferSize(_ fd: FileDescriptor, _ bytes: Int) throws(SystemCallError) {
        try Socket.setOption(fd, level: SOL_SOCKET, name: SO_SNDBUF, value: Int32(clamping: bytes))
    }

    /// Sends bytes without raising `SIGPIPE` on a closed peer.
    ///
    /// The corresponding C function is `send` with `MSG_NOSIGNAL`.
    public static func send(
        _ fd: FileDescriptor, _ buffer: UnsafeRawBufferPointer
    ) throws(SystemCallError) -> IOResult<Int> {
        try nonBlockingSyscall("send") {
            Glibc.send(fd.rawValue, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
        }
    }

    /// Shuts down both directions of a connected socket.
    public static func shutdown(_ fd: FileDescriptor) {
        _ = Glibc.shutdown(fd.rawValue, Int32(SHUT_RDWR))
    }
}
