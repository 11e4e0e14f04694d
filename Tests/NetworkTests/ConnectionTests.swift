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
    /// Runs a connection over one end of a socket pair on a loop, sends a request from the other end, lets the loop
    /// run `turns` more turns of its task queue, and returns how often the delegate was read and drained.
    private func run(reply: String, turns: Int) throws -> (reads: Int, drains: Int) {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds) == 0)
        let (ours, theirs) = (fds[0], fds[1])
        defer { close(theirs) }
        let loop = try EventLoop()
        let delegate = PausingDelegate(reply: reply)
        let counts = Mutex<(Int, Int)>((0, 0))
        loop.execute {
            let connection = try? Connection(
                loop: loop, fd: FileDescriptor(rawValue: ours), peer: nil, id: 1, inputCapacity: 4096)
            connection?.delegate = delegate
            delegate.connection = connection
            _ = "ping\n".withCString { write(theirs, $0, 5) }
        }
        // Once the request is read: `turns` tasks, each posting the next, then the counts and the stop.
        @Sendable func step(_ left: Int) {
            guard delegate.reads > 0 else {
                loop.execute { step(left) }
                return
            }
            guard left == 0 else {
                loop.execute { step(left - 1) }
                return
            }
            counts.withLock { $0 = (delegate.reads, delegate.drains) }
            delegate.connection?.closeNow()
            loop.stop()
        }
        loop.execute { step(turns) }
        try loop.run()
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
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds) == 0)
        let (ours, theirs) = (fds[0], fds[1])
        defer { close(theirs) }
        let size = 4 << 20
        let loop = try EventLoop()
        let delegate = PausingDelegate(reply: String(repeating: "x", count: size))
        let sizes = Mutex<(before: Int32, after: Int32)>((0, 0))
        let received = Mutex(0)
        loop.execute {
            let connection = try? Connection(
                loop: loop, fd: FileDescriptor(rawValue: ours), peer: nil, id: 1, inputCapacity: 4096)
            connection?.delegate = delegate
            delegate.connection = connection
            sizes.withLock { $0.before = Self.sendBuffer(ours) }
            _ = "ping\n".withCString { write(theirs, $0, 5) }
        }
        // Each turn of the loop's task queue, the peer reads what it can (when it reads), until it has the reply or
        // (when it does not) for 2000 turns.
        @Sendable func step(_ left: Int) {
            if peerReads {
                var buffer = [UInt8](repeating: 0, count: 1 << 16)
                let count = read(theirs, &buffer, buffer.count)
                if count > 0 { received.withLock { $0 += count } }
            }
            // (A reading peer gets at most 500,000 more turns: a test that fails, not one that hangs.)
            let more = peerReads ? received.withLock { $0 } < size && left > -500_000 : left > 0
            guard more else {
                sizes.withLock { $0.after = Self.sendBuffer(ours) }
                delegate.connection?.closeNow()
                loop.stop()
                return
            }
            loop.execute { step(left - 1) }
        }
        loop.execute { step(2000) }
        try loop.run()
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
