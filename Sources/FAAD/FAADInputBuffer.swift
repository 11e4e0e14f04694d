// SPDX-License-Identifier: GPL-3.0-or-later

import Input

/// A fixed-size window on an `InputStream` for feeding libfaad whole frames, allocated once: bytes are read into
/// its free tail and consumed from its head; it moves what is left to the front only when the tail reaches the
/// end (as `mpd`'s `DecoderBuffer`, so the same reads see the same bytes).
///
/// Confined to one thread at a time. Nothing allocates after `init`.
public final class FAADInputBuffer {
    /// The stream read from.
    public let input: any InputStream
    /// The most bytes the buffer holds.
    public let capacity: Int
    /// The first error the stream reported (reads then count as the end, as `mpd`'s `decoder_read` does).
    public private(set) var readError: InputError?
    private let storage: UnsafeMutableRawBufferPointer
    private var head = 0
    private var tail = 0

    /// Creates a buffer of `capacity` bytes over `input`.
    public init(input: any InputStream, capacity: Int) {
        self.input = input
        self.capacity = max(1, capacity)
        // Allocated once here (freed in deinit) so that no read allocates.
        self.storage = .allocate(byteCount: self.capacity, alignment: 16)
        self.storage.initializeMemory(as: UInt8.self, repeating: 0)
    }

    deinit { self.storage.deallocate() }

    /// Bytes read and not consumed.
    public var available: Int { self.tail - self.head }

    /// The bytes read and not consumed; valid until the next `fill()`, `need(_:)`, `consume(_:)` or `clear()`.
    public var bytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: self.storage[self.head..<self.tail])
    }

    /// Reads once from the stream into the free space.
    ///
    /// - Returns: `false` when the buffer is full or the stream ended (or failed).
    @discardableResult
    public func fill() -> Bool {
        if self.head == self.tail {
            self.head = 0
            self.tail = 0
        } else if self.tail == self.capacity, self.head > 0 {
            let count = self.tail - self.head
            self.storage.baseAddress!.copyMemory(from: self.storage.baseAddress! + self.head, byteCount: count)
            self.head = 0
            self.tail = count
        }
        guard self.tail < self.capacity else { return false }
        let free = UnsafeMutableRawBufferPointer(rebasing: self.storage[self.tail...])
        let count = self.read(into: free)
        guard count > 0 else { return false }
        self.tail += count
        return true
    }

    /// Reads until at least `count` bytes are available.
    ///
    /// - Returns: the available bytes, or `nil` when the stream ends first (or `count` exceeds the capacity).
    public func need(_ count: Int) -> UnsafeRawBufferPointer? {
        while self.available < count {
            guard self.fill() else { return nil }
        }
        return self.bytes
    }

    /// Drops `count` bytes (at most `available`) from the head.
    public func consume(_ count: Int) {
        self.head += min(max(0, count), self.available)
    }

    /// Drops every buffered byte.
    public func clear() {
        self.head = 0
        self.tail = 0
    }

    /// Skips `count` bytes: the buffered ones, then reads the rest from the stream and drops it.
    ///
    /// - Returns: `false` when the stream ended first.
    public func skip(_ count: Int) -> Bool {
        if self.available >= count {
            self.consume(count)
            return true
        }
        var remaining = count - self.available
        self.clear()
        while remaining > 0 {
            let chunk = UnsafeMutableRawBufferPointer(rebasing: self.storage[0..<min(remaining, self.capacity)])
            let read = self.read(into: chunk)
            if read == 0 { return false }
            remaining -= read
        }
        return true
    }

    private func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard self.readError == nil else { return 0 }
        do {
            return try self.input.read(into: buffer)
        } catch {
            self.readError = error
            return 0
        }
    }
}
