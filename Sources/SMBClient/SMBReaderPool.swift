// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Posix

/// One stream's side of an ``SMBReader``: its read-ahead buffer, and where the helper is to read next after a
/// seek (guarded by the buffer's mutex).
final class SMBSession: @unchecked Sendable {
    let buffer: SMBStreamBuffer
    /// Where the current generation's reading starts (a seek's offset). Guarded by the buffer's mutex.
    var start: UInt64 = 0
    /// The generation of the open: the helper answers it with the file's size.
    let openGeneration: Int

    init(buffer: SMBStreamBuffer, openGeneration: Int) {
        self.buffer = buffer
        self.openGeneration = openGeneration
    }
}

/// The SMB helpers whose stream let them go (a cancellation, a released stream), kept with their open file so
/// that the next stream of the same URL takes one over instead of opening the file again on a new thread: the
/// player opens a remote song again for every seek, and on a share gone silent the helper stuck in libsmbclient
/// then serves the next open as soon as it returns, rather than one more stuck helper per seek.
///
/// At most one helper per URL and ``capacity`` in all wait to be taken over; one nobody took over for
/// ``idleTimeout`` closes its file and ends, as does one in excess (once its call into libsmbclient returned).
///
/// Any thread; nothing here waits on the network.
final class SMBReaderPool: @unchecked Sendable {
    /// The process's pool: a helper waits 10 s to be taken over.
    static let shared = SMBReaderPool(capacity: 4, idleTimeout: .seconds(10))

    /// How many helpers wait to be taken over, at most.
    let capacity: Int
    /// How long a helper with nothing to do waits to be taken over.
    let idleTimeout: Duration
    /// Guards everything below and every helper's ``SMBReader/handoff``.
    private let condition = Condition()
    /// The helpers waiting to be taken over, oldest first.
    private var waiting: [SMBReader] = []

    init(capacity: Int, idleTimeout: Duration) {
        self.capacity = capacity
        self.idleTimeout = idleTimeout
    }

    /// How many helpers wait to be taken over.
    var count: Int {
        self.condition.lock()
        defer { self.condition.unlock() }
        return self.waiting.count
    }

    /// Gives `session` to a helper of `url` that waits to be taken over, if any: it moves to the session's start
    /// and answers its open with the file's size.
    func adopt(url: String, session: SMBSession) -> SMBReader? {
        self.condition.lock()
        defer { self.condition.unlock() }
        guard let index = self.waiting.firstIndex(where: { $0.url == url }) else { return nil }
        let reader = self.waiting.remove(at: index)
        reader.handoff.session = session
        reader.handoff.next = session
        self.condition.broadcast()
        return reader
    }

    /// `session`'s stream let its helper go: the helper waits to be taken over, unless it failed, one of its URL
    /// waits already, or the pool is full (then the oldest goes).
    func abandon(_ reader: SMBReader, session: SMBSession) {
        self.condition.lock()
        defer { self.condition.unlock() }
        guard reader.handoff.session === session, !reader.handoff.isRetired,
            !self.waiting.contains(where: { $0 === reader })
        else { return }
        guard !reader.handoff.hasFailed, self.capacity > 0, !self.waiting.contains(where: { $0.url == reader.url })
        else {
            reader.handoff.isRetired = true
            self.condition.broadcast()
            return
        }
        if self.waiting.count >= self.capacity {
            self.waiting.removeFirst().handoff.isRetired = true
        }
        self.waiting.append(reader)
        self.condition.broadcast()
    }

    /// The helper's file failed: it is not taken over after its stream.
    func didFail(_ reader: SMBReader) {
        self.condition.lock()
        reader.handoff.hasFailed = true
        self.condition.unlock()
    }

    /// Called by a helper whose stream let it go: waits until another stream takes it over (its session), or
    /// until it is retired or nobody took it for ``idleTimeout`` (`nil`: close the file and end).
    func waitForNextSession(_ reader: SMBReader) -> SMBSession? {
        self.condition.lock()
        defer { self.condition.unlock() }
        let deadline = ContinuousClock.now + self.idleTimeout
        while true {
            if let next = reader.handoff.next {
                reader.handoff.next = nil
                return next
            }
            let left = deadline - ContinuousClock.now
            if reader.handoff.isRetired || left <= .zero {
                self.retire(reader)
                return nil
            }
            let (seconds, attoseconds) = left.components
            self.condition.wait(
                timeoutNanoseconds: UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000))
        }
    }

    /// The helper ends (its open failed, or it retires): nobody takes it over any more. With the lock held.
    private func retire(_ reader: SMBReader) {
        reader.handoff.isRetired = true
        self.waiting.removeAll { $0 === reader }
    }

    /// The helper's open failed: it ends, and the stream that took it over meanwhile (if any) gets the failure.
    ///
    /// - Returns: the session to answer.
    func endAfterFailedOpen(_ reader: SMBReader) -> SMBSession {
        self.condition.lock()
        defer { self.condition.unlock() }
        self.retire(reader)
        reader.handoff.next = nil
        return reader.handoff.session
    }
}

/// What an ``SMBReaderPool`` knows of a helper; guarded by the pool's lock.
struct SMBHandoff {
    /// The stream it serves (the last one that took it over).
    var session: SMBSession
    /// A stream that took it over and that it has not turned to yet.
    var next: SMBSession?
    /// It ends when it has nothing to do.
    var isRetired = false
    /// A call on its file failed.
    var hasFailed = false
}
