// SPDX-License-Identifier: GPL-3.0-or-later

import Posix

#if canImport(Glibc)
    import Glibc
#endif

/// A blocking client for tests (TCP to 127.0.0.1, or a Unix-domain socket), speaking raw bytes with a receive
/// timeout.
public final class LoopbackClient {
    private let fd: Int32
    private var buffer: [UInt8] = []
    /// Whether the server closed the connection.
    public private(set) var isClosed = false

    /// Connects to `127.0.0.1:port`.
    public init(port: UInt16, timeoutSeconds: Int = 5) throws {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        self.fd = try Self.connect(family: AF_INET, to: &address, timeoutSeconds: timeoutSeconds)
    }

    /// Connects to the Unix-domain socket at `path`.
    public init(unixPath path: String, timeoutSeconds: Int = 5) throws {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.prefix(buffer.count - 1).enumerated() { buffer[index] = byte }
        }
        self.fd = try Self.connect(family: AF_UNIX, to: &address, timeoutSeconds: timeoutSeconds)
    }

    /// A connected stream socket with a receive timeout.
    private static func connect<Address>(family: Int32, to address: inout Address, timeoutSeconds: Int) throws -> Int32
    {
        let fd = Glibc.socket(family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Errno.current }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<Address>.size))
            }
        }
        guard result == 0 else {
            let error = Errno.current
            Glibc.close(fd)
            throw error
        }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    deinit { Glibc.close(self.fd) }

    /// Asks the kernel for a receive buffer of about `bytes` (it doubles the figure for its bookkeeping), so that a
    /// client that does not read soon fills the server's socket.
    public func limitReceiveBuffer(to bytes: Int) {
        var size = Int32(bytes)
        setsockopt(self.fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Reads bytes up to and including the next line that is `OK` or starts with `ACK ` (at the start of a line),
    /// as they came: for comparing whole replies byte for byte.
    public func readReplyBytes() -> [UInt8] {
        var searched = 0
        while true {
            var lineStart = searched
            while let newline = self.buffer[lineStart...].firstIndex(of: 10) {
                let line = self.buffer[lineStart..<newline]
                if line.elementsEqual("OK".utf8) || line.starts(with: "ACK ".utf8) {
                    let bytes = Array(self.buffer[...newline])
                    self.buffer.removeFirst(newline + 1)
                    return bytes
                }
                lineStart = newline + 1
            }
            searched = lineStart
            guard self.fill() else {
                defer { self.buffer = [] }
                return self.buffer
            }
        }
    }

    /// Reads exactly `count` bytes, or `nil` on close or timeout (what came stays for the next read).
    public func read(count: Int) -> [UInt8]? {
        while self.buffer.count < count {
            guard self.fill() else { return nil }
        }
        defer { self.buffer.removeFirst(count) }
        return Array(self.buffer[..<count])
    }

    /// Sends `text` as UTF-8.
    public func send(_ text: String) { self.send(bytes: Array(text.utf8)) }

    /// Sends raw bytes.
    public func send(bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes {
                Glibc.send(self.fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if count <= 0 { return }
            offset += count
        }
    }

    /// Reads one line (without `\n`), or `nil` on close or timeout.
    public func readLine() -> String? {
        while true {
            if let newline = self.buffer.firstIndex(of: 10) {
                let line = String(decoding: self.buffer[..<newline], as: UTF8.self)
                self.buffer.removeFirst(newline + 1)
                return line
            }
            guard self.fill() else { return nil }
        }
    }

    /// Reads lines up to and including the next `OK`, `ACK …` line; returns them all.
    public func readReply() -> [String] {
        var lines: [String] = []
        while let line = self.readLine() {
            lines.append(line)
            if line == "OK" || line.hasPrefix("ACK ") { break }
        }
        return lines
    }

    /// Sends a request line and reads its reply.
    public func request(_ line: String) -> [String] {
        self.send(line + "\n")
        return self.readReply()
    }

    /// Waits for the server to close, returning whatever else it sent first.
    public func readUntilClosed() -> [UInt8] {
        while self.fill() {}
        defer { self.buffer = [] }
        return self.buffer
    }

    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { Glibc.recv(self.fd, $0.baseAddress, $0.count, 0) }
        if count == 0 { self.isClosed = true }
        guard count > 0 else { return false }
        self.buffer.append(contentsOf: chunk[0..<count])
        return true
    }
}
