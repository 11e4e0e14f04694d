// SPDX-License-Identifier: GPL-3.0-or-later

import Posix

/// What a remote input's helper thread (the producer: a libcurl transfer, an SMB file's reads) and the reading
/// (decoder) thread share, as `mpd`'s `AsyncInputStream`: the bounded read-ahead ring buffer, the pause/resume
/// hand-shake, the producer's answer to an open or seek (`Response`: an HTTP response's headers, a file's size),
/// the end or the error, and cancellation. Everything is guarded by ``condition``'s mutex, which is signalled on
/// every change either side waits for; ``wake`` (an eventfd) also wakes a producer that waits in `poll`.
///
/// The reader's side (``waitReady(uri:)``, ``read(into:uri:atEnd:)``, ``cancel()``) never waits on the producer
/// once cancelled: a producer stuck in a blocking call is left behind, and the buffer lives as long as it holds
/// a reference.
///
/// Any thread: `@unchecked Sendable` because every mutable field is touched with the mutex held (or, for
/// ``storage``'s bytes, only in the region the mutex-guarded indices give to one side).
public final class AsyncStreamBuffer<Response: Sendable>: @unchecked Sendable {
    /// Guards every field; signalled when data, the response, the end, an error, a resume request or a
    /// cancellation arrives.
    public let condition = Condition()
    /// Bumped to wake a producer that polls (a resume, a cancel, a stop). Closed at deinit.
    public let wake: FileDescriptor
    /// The buffer's bytes (``capacity`` of them), allocated once.
    private let storage: UnsafeMutableRawPointer
    /// The buffer's size.
    public let capacity: Int
    /// Resume a paused producer below this many buffered bytes.
    public let resumeAt: Int
    /// Where the oldest buffered byte is.
    private var head = 0
    /// Buffered bytes.
    public private(set) var count = 0

    /// Which request may write: each new request (open, seek) gets the next number, and a producer whose
    /// number is not current stops writing.
    public var generation = 0
    /// The producer waits for room: a block did not fit.
    public var paused = false
    /// The reader asked the producer to go on.
    public var resumeRequested = false
    /// The producer answered the current request (or it failed): `open` and `seek` may return.
    public var ready = false
    /// The current request's answer, once ``ready``.
    public var response: Response?
    /// The data ended (`mpd`'s `!open`): after the buffered bytes, the stream ends.
    public var ended = false
    /// The error to report to the reader (`mpd`'s postponed exception), thrown once.
    public var failure: InputError?
    /// Someone cancelled the stream (or released it): every wait ends, every later call fails.
    public private(set) var cancelled = false

    /// A buffer of `capacity` bytes that resumes below `resumeAt`.
    ///
    /// - Throws: `SystemCallError` when no eventfd can be made.
    public init(capacity: Int, resumeAt: Int) throws(SystemCallError) {
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
    public var space: Int { self.capacity - self.count }

    /// Appends `bytes` (at most ``space``), with the mutex held.
    public func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        let tail = (self.head + self.count) % self.capacity
        let first = min(bytes.count, self.capacity - tail)
        (self.storage + tail).copyMemory(from: source, byteCount: first)
        if first < bytes.count { self.storage.copyMemory(from: source + first, byteCount: bytes.count - first) }
        self.count += bytes.count
    }

    /// Moves up to `buffer.count` buffered bytes into `buffer`, with the mutex held; returns how many.
    public func take(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let total = min(buffer.count, self.count)
        guard total > 0, let destination = buffer.baseAddress else { return 0 }
        let first = min(total, self.capacity - self.head)
        destination.copyMemory(from: self.storage + self.head, byteCount: first)
        if first < total { (destination + first).copyMemory(from: self.storage, byteCount: total - first) }
        self.discard(total)
        return total
    }

    /// Drops the `count` oldest buffered bytes (at most ``count``), with the mutex held.
    public func discard(_ count: Int) {
        self.head = (self.head + count) % self.capacity
        self.count -= count
        if self.count == 0 { self.head = 0 }
    }

    /// Forgets everything of the current request before a new one, with the mutex held; returns the new
    /// request's generation.
    public func restart() -> Int {
        self.generation += 1
        self.head = 0
        self.count = 0
        self.paused = false
        self.resumeRequested = false
        self.ready = false
        self.response = nil
        self.ended = false
        self.failure = nil
        return self.generation
    }

    /// Cancels the stream: wakes every wait and the producer. Any thread, without the mutex.
    public func cancel() {
        self.condition.lock()
        self.cancelled = true
        self.condition.broadcast()
        self.condition.unlock()
        EventFD.signal(self.wake)
    }

    /// Waits until the producer answered the current request; returns its answer (`nil` when it gave none).
    /// Reader thread, without the mutex.
    ///
    /// - Throws: a failure the producer met before or since answering (once: `mpd`'s postponed exception), or
    ///   `InputError.cancelled`.
    public func waitReady(uri: String) throws(InputError) -> Response? {
        let response = try self.waitResponse(uri: uri)
        self.condition.lock()
        defer { self.condition.unlock() }
        if let failure = self.failure {
            self.failure = nil
            throw failure
        }
        return response
    }

    /// Waits until the producer answered the current request and returns its answer, leaving a failure it met
    /// since to the next read (for a producer whose answer carries its own failure). Reader thread, without the
    /// mutex.
    ///
    /// - Throws: `InputError.cancelled`.
    public func waitResponse(uri: String) throws(InputError) -> Response? {
        self.condition.lock()
        defer { self.condition.unlock() }
        while !self.ready && !self.cancelled { self.condition.wait() }
        if self.cancelled { throw .cancelled(uri: uri) }
        return self.response
    }

    /// Moves buffered bytes into `destination` (`mpd`'s `AsyncInputStream::Read`), waiting until there are
    /// some, the data ended, the producer failed or the stream is cancelled; asks a paused producer to go on
    /// once fewer than ``resumeAt`` bytes are left. Reader thread, without the mutex; never allocates.
    ///
    /// - Parameter atEnd: Whether the reader is at the stream's known end (its size), with the mutex held.
    /// - Returns: 0 only at the end.
    /// - Throws: the producer's failure (once, before any bytes still buffered), or `InputError.cancelled`.
    public func read(
        into destination: UnsafeMutableRawBufferPointer, uri: String, atEnd: () -> Bool
    ) throws(InputError) -> Int {
        self.condition.lock()
        while true {
            if self.cancelled {
                self.condition.unlock()
                throw .cancelled(uri: uri)
            }
            if let failure = self.failure {
                self.failure = nil
                self.condition.unlock()
                throw failure
            }
            if self.count > 0 { break }
            if self.ended || atEnd() {
                self.condition.unlock()
                return 0
            }
            self.condition.wait()
        }
        let count = self.take(into: destination)
        let resume = self.paused && !self.resumeRequested && self.count < self.resumeAt
        if resume {
            self.resumeRequested = true
            self.condition.broadcast()
        }
        self.condition.unlock()
        if resume { EventFD.signal(self.wake) }
        return count
    }
}
