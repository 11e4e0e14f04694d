// SPDX-License-Identifier: GPL-3.0-or-later

import Synchronization

/// The buffer between the output thread (the one producer) and libpipewire's realtime thread (the one consumer):
/// whole frames in a byte ring allocated once per stream, with no lock: each side moves its own counter (bytes
/// ever written, ever read), and the producer drops what is unread by moving a third (`discarded`) that the
/// consumer skips to.
///
/// `@unchecked Sendable`: the storage is written by the producer only where the consumer does not read (ahead of
/// `written`), and read by the consumer only behind it; the counters are atomics.
public final class PipeWireRing: @unchecked Sendable {
    /// Bytes it holds at most (a whole number of frames).
    public let capacity: Int
    /// Bytes per frame: every push and pop moves whole frames.
    public let frameSize: Int
    private let storage: UnsafeMutableRawPointer
    private let written = Atomic<Int>(0)
    private let read = Atomic<Int>(0)
    private let discarded = Atomic<Int>(0)

    /// A ring of `capacity` bytes (rounded down to whole frames, at least one frame).
    public init(capacity: Int, frameSize: Int) {
        self.frameSize = max(1, frameSize)
        self.capacity = max(self.frameSize, capacity - capacity % self.frameSize)
        self.storage = UnsafeMutableRawPointer.allocate(byteCount: self.capacity, alignment: 16)
    }

    deinit { self.storage.deallocate() }

    /// Where the consumer is: past what it read and what was dropped.
    private func readPosition() -> Int {
        max(self.read.load(ordering: .acquiring), self.discarded.load(ordering: .acquiring))
    }

    /// Bytes the consumer can take now. Any thread.
    public var readable: Int { self.written.load(ordering: .acquiring) - self.readPosition() }

    /// Copies as many whole frames of `data` as there is room for. Producer only.
    ///
    /// - Returns: bytes taken (0 when full).
    public func push(_ data: UnsafeRawBufferPointer) -> Int {
        guard let source = data.baseAddress else { return 0 }
        let end = self.written.load(ordering: .relaxed)
        let room = self.capacity - (end - self.readPosition())
        var count = min(room, data.count)
        count -= count % self.frameSize
        guard count > 0 else { return 0 }
        self.copy(at: end, count: count) { target, offset, length in
            target.copyMemory(from: source + offset, byteCount: length)
        }
        self.written.store(end + count, ordering: .releasing)
        return count
    }

    /// Moves up to `limit` bytes (whole frames) to `destination`. Consumer only.
    ///
    /// - Returns: bytes moved.
    public func pop(into destination: UnsafeMutableRawPointer, limit: Int) -> Int {
        let start = self.readPosition()
        var count = min(limit, self.written.load(ordering: .acquiring) - start)
        count -= count % self.frameSize
        guard count > 0 else { return 0 }
        self.copy(at: start, count: count) { source, offset, length in
            (destination + offset).copyMemory(from: source, byteCount: length)
        }
        self.read.store(start + count, ordering: .releasing)
        return count
    }

    /// Drops everything not read yet. Producer only.
    public func discard() { self.discarded.store(self.written.load(ordering: .relaxed), ordering: .releasing) }

    /// Runs `body` on the one or two stretches of storage from byte `position` on (`count` bytes), with each
    /// stretch's offset in the caller's buffer.
    @inline(__always)
    private func copy(
        at position: Int, count: Int, _ body: (UnsafeMutableRawPointer, Int, Int) -> Void
    ) {
        let offset = position % self.capacity
        let first = min(count, self.capacity - offset)
        body(self.storage + offset, 0, first)
        if first < count { body(self.storage, first, count - first) }
    }
}
