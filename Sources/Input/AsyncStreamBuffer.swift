// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Posix

/// What the transfer thread and the reading (decoder) thread share, as `mpd`'s `AsyncInputStream`: the bounded
/// read-ahead ring buffer, the pause/resume hand-shake, the response's headers once they are in, the end or
/// the error, and cancellation. Everything is guarded by ``condition``'s mutex; ``wake`` (an eventfd) interrupts
/// the transfer thread's wait in `curl_multi_poll`.
///
/// Any thread: `@unchecked Sendable` because every mutable field is touched with the mutex held (or, for
/// ``storage``'s bytes, only in the region the mutex-guarded indices give to one side).
final class AsyncStreamBuffer: @unchecked Sendable {
    /// Guards every field; signalled when data, the headers, the end, an error or a cancellation arrives.
    let condition = Condition()
    /// Bumped to wake the transfer thread (a resume, a cancel, a stop). Closed at deinit.
    let wake: FileDescriptor
    /// The buffer's bytes (``capacity`` of them), allocated once.
    private let storage: UnsafeMutableRawPointer
    /// The buffer's size.
    let capacity: Int
    /// Resume a paused transfer below this many buffered bytes.
    let resumeAt: Int
    /// Where the oldest buffered byte is.
    private var head = 0
    /// Buffered bytes.
    private(set) var count = 0

    /// Which transfer may write: each new request (open, seek) gets the next number, and a transfer whose
    /// number is not current stops at its next callback.
    var generation = 0
    /// The transfer returned `CURL_WRITEFUNC_PAUSE`: a block did not fit.
    var paused = false
    /// The reader asked the transfer thread to unpause.
    var resumeRequested = false
    /// The response's headers are in (or the request failed): `open` and `seek` may return.
    var ready = false
    /// The transfer finished (`mpd`'s `!open`): after the buffered bytes, the stream ends.
    var ended = false
    /// The error to report to the reader (`mpd`'s postponed exception), thrown once.
    var failure: InputError?
    /// Someone cancelled the stream: every wait ends, every later call fails.
    private(set) var cancelled = false
    /// The response's headers, taken by `open` once ``ready``.
    var headers = CurlResponseHeaders()

    /// A buffer of `capacity` bytes that resumes below `resumeAt`.
    ///
    /// - Throws: `SystemCallError` when no eventfd can be made.
    init(capacity: Int, resumeAt: Int) throws(SystemCallError) {
        self.wake = try EventFD.eventfd()
        self.capacity = max(1, capacity)
        self.resumeAt = min(resumeAt, self.capacity)
        self.storage = .allocate(byteCount: self.capacity, alignment: 16)
    }

    deinit {
        self.storage.deallocate()
        self.wake.close()
    }

    /// Free space, with the mutex held.
    var space: Int { self.capacity - self.count }

    /// Appends `bytes` (at most ``space``), with the mutex held.
    func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        let tail = (self.head + self.count) % self.capacity
        let first = min(bytes.count, self.capacity - tail)
        (self.storage + tail).copyMemory(from: source, byteCount: first)
        if first < bytes.count { self.storage.copyMemory(from: source + first, byteCount: bytes.count - first) }
        self.count += bytes.count
    }

    /// Moves up to `buffer.count` buffered bytes into `buffer`, with the mutex held; returns how many.
    func take(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let total = min(buffer.count, self.count)
        guard total > 0, let destination = buffer.baseAddress else { return 0 }
        let first = min(total, self.capacity - self.head)
        destination.copyMemory(from: self.storage + self.head, byteCount: first)
        if first < total { (destination + first).copyMemory(from: self.storage, byteCount: total - first) }
        self.discard(total)
        return total
    }

    /// Drops the `count` oldest buffered bytes (at most ``count``), with the mutex held.
    func discard(_ count: Int) {
        self.head = (self.head + count) % self.capacity
        self.count -= count
        if self.count == 0 { self.head = 0 }
    }

    /// Forgets everything of the current request before a new one, with the mutex held; returns the new
    /// request's generation.
    func restart() -> Int {
        self.generation += 1
        self.head = 0
        self.count = 0
        self.paused = false
        self.resumeRequested = false
        self.ready = false
        self.ended = false
        self.failure = nil
        self.headers = CurlResponseHeaders()
        return self.generation
    }

    /// Cancels the stream: wakes every wait and the transfer thread. Any thread, without the mutex.
    func cancel() {
        self.condition.lock()
        self.cancelled = true
        self.condition.broadcast()
        self.condition.unlock()
        EventFD.signal(self.wake)
    }
}
