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

    @Test func aDelegateThatPausesAfterWritingIsWokenOnceTheOutputIsGone() throws {
        let (reads, drains) = try self.run(reply: "OK\n", turns: 50)
        #expect(reads == 1)
        // Woken once: it pauses again with nothing more to write, and is left alone.
        #expect(drains == 1)
    }
}
