// SPDX-License-Identifier: GPL-3.0-or-later

import EventLoop
import Glibc
import Posix
import Synchronization
import Testing

@testable import Network

/// Pauses reading at the first request, writing `reply` (possibly nothing), and counts the wake-ups after it.
private final class PausingDelegate: ConnectionDelegate, @unchecked Sendable {  // touched on the loop thread only
    let reply: String
    var reads = 0
    var drains = 0
    var connection: Connection?

    init(reply: String) { self.reply = reply }

    func connectionDidRead(_ connection: Connection) {
        self.reads += 1
        if !self.reply.isEmpty { connection.write(self.reply) }
        connection.isReadingPaused = true
    }

    func connectionDidDrain(_ connection: Connection) {
        self.drains += 1
        // Still waiting (a deferred reply): stays paused.
        connection.isReadingPaused = true
    }

    func connectionDidClose(_ connection: Connection) {}
}

@Suite(.serialized)
struct ConnectionTests {
    /// Runs a connection with a `PausingDelegate` answering `reply` over one end of a socket pair on a loop: calls
    /// `opened` with our end once the connection exists, sends a request from the other end, then calls `step` once
    /// per turn of the loop's task queue (with the turn's number, from 0, and the peer's end) until it returns
    /// false; then closes the connection and stops the loop.
    private func drive(
        reply: String, opened: @escaping @Sendable (_ ours: Int32) -> Void = { _ in },
        step: @escaping @Sendable (_ turn: Int, _ theirs: Int32, _ delegate: PausingDelegate) -> Bool
    ) throws {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds) == 0)
        let (ours, theirs) = (fds[0], fds[1])
        defer { close(theirs) }
        let loop = try EventLoop()
        let delegate = PausingDelegate(reply: reply)
        loop.execute {
            let connection = try? Connection(
                loop: loop, fd: FileDescriptor(rawValue: ours), peer: nil, id: 1, inputCapacity: 4096)
            connection?.delegate = delegate
            delegate.connection = connection
            opened(ours)
            _ = "ping\n".withCString { write(theirs, $0, 5) }
        }
        @Sendable func turn(_ number: Int) {
            guard step(number, theirs, delegate) else {
                delegate.connection?.closeNow()
                loop.stop()
                return
            }
            loop.execute { turn(number + 1) }
        }
        loop.execute { turn(0) }
        try loop.run()
    }

    /// Sends a request, lets the loop run `turns` more turns of its task queue once it is read, and returns how
    /// often the delegate was read and drained.
    private func run(reply: String, turns: Int) throws -> (reads: Int, drains: Int) {
        let counts = Mutex<(Int, Int)>((0, 0))
        let readAt = Mutex<Int?>(nil)
        try self.drive(reply: reply) { turn, _, delegate in
            guard delegate.reads > 0 else { return true }
            let first = readAt.withLock { at in
                if at == nil { at = turn }
                return at!
            }
            guard turn - first == turns else { return true }
            counts.withLock { $0 = (delegate.reads, delegate.drains) }
            return false
        }
        return counts.withLock { $0 }
    }

    @Test func aDelegateThatPausesWithNothingToWriteIsNotWokenWhileItWaits() throws {
        let (reads, drains) = try self.run(reply: "", turns: 50)
        #expect(reads == 1)
        #expect(drains == 0)
    }

    /// `SO_SNDBUF` as the kernel reports it (twice what was asked for, which it caps at `net.core.wmem_max`).
    private static func sendBuffer(_ fd: Int32) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        #expect(getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &value, &length) == 0)
        return value
    }

    /// `net.core.wmem_max`, if it can be read.
    private static func largestSendBufferAllowed() -> Int32? {
        let fd = open("/proc/sys/net/core/wmem_max", O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = read(fd, &buffer, buffer.count)
        guard count > 0 else { return nil }
        return Int32(String(decoding: buffer[..<count].filter { (48...57).contains($0) }, as: UTF8.self))
    }

    /// A reply of 4 MiB to a peer that reads all of it, or none: the socket's send buffer before and after.
    private func sendBuffers(peerReads: Bool) throws -> (before: Int32, after: Int32) {
        let size = 4 << 20
        let sizes = Mutex<(before: Int32, after: Int32)>((0, 0))
        let received = Mutex(0)
        let socket = Mutex<Int32>(-1)
        // Each turn of the loop's task queue, the peer reads what it can (when it reads), until it has the reply or
        // (when it does not) for 2000 turns; a reading peer gets at most 500,000 turns (a test that fails, not one
        // that hangs).
        try self.drive(
            reply: String(repeating: "x", count: size),
            opened: { ours in
                socket.withLock { $0 = ours }
                sizes.withLock { $0.before = Self.sendBuffer(ours) }
            }
        ) { turn, theirs, _ in
            if peerReads {
                var buffer = [UInt8](repeating: 0, count: 1 << 16)
                let count = read(theirs, &buffer, buffer.count)
                if count > 0 { received.withLock { $0 += count } }
            }
            let more = peerReads ? received.withLock { $0 } < size && turn < 500_000 : turn < 2000
            if !more { sizes.withLock { $0.after = Self.sendBuffer(socket.withLock { $0 }) } }
            return more
        }
        if peerReads { #expect(received.withLock { $0 } == size) }
        return sizes.withLock { $0 }
    }

    @Test func theSendBufferGrowsWhileThePeerReadsAndNotOtherwise() throws {
        let idle = try self.sendBuffers(peerReads: false)
        #expect(idle.after == idle.before)
        let reading = try self.sendBuffers(peerReads: true)
        #expect(reading.before == idle.before)
        // Grown (up to 1 MiB asked for, 2 MiB reported), unless the kernel caps it lower than the first size.
        if let cap = Self.largestSendBufferAllowed(), cap > Int32(Connection.sendBufferSize) {
            #expect(reading.after == 2 * min(cap, Int32(Connection.largestSendBufferSize)))
        }
    }

    @Test func aDelegateThatPausesAfterWritingIsWokenOnceTheOutputIsGone() throws {
        let (reads, drains) = try self.run(reply: "OK\n", turns: 50)
        #expect(reads == 1)
        // Woken once: it pauses again with nothing more to write, and is left alone.
        #expect(drains == 1)
    }
}
