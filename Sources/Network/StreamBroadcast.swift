// SPDX-License-Identifier: GPL-3.0-or-later

import Posix
import Synchronization

/// What a stream output's thread (httpd, snapcast) hands the thread serving its listeners: the encoded stream in
/// a ring of bytes, where its pages start, the header every new listener gets first, and a metadata block (the
/// httpd output's ICY metadata, the snapcast output's stream tags).
///
/// One writer (the output thread) and one reader (the server thread, which serves every listener from it at
/// its own position). The stream is written and published through atomics, never a lock, so the audio path
/// never waits for a listener; a reader copies out, then checks that the writer did not lap it meanwhile.
/// The header and the metadata change only when a stream opens or a song changes, behind a mutex.
///
/// `@unchecked Sendable`: the ring's bytes are written only by the output thread ahead of `written`, and read
/// by the server thread behind it with the lap check; everything else is atomic or behind a mutex.
public final class StreamBroadcast: @unchecked Sendable {
    /// Bytes the ring keeps: far more than a listener may lag behind (``listenerBacklog``).
    public static let capacity = 1 << 20
    /// The backlog a listener may have before it is dropped (`mpd`'s 256 KiB per client queue).
    public static let listenerBacklog = 256 * 1024
    private static let pageSlots = 256
    /// How far behind `written` bytes are intact: the page being written may overwrite up to a quarter of
    /// the ring beyond it.
    private static let safeLag = StreamBroadcast.capacity / 4 * 3

    private let storage: UnsafeMutableRawBufferPointer
    /// Bytes of the stream written so far (the end of the newest page).
    public let written = Atomic<UInt64>(0)
    /// Where the newest pages start (a ring of `pageSlots`; `pages` counts them).
    private let pageStarts: [PageSlot] = (0..<StreamBroadcast.pageSlots).map { _ in PageSlot() }
    private let pages = Atomic<UInt64>(0)

    /// Whether a stream is open (listeners are served; otherwise turned away).
    public let isOpen = Atomic<Bool>(false)
    /// Bumped when the stream closes: every listener is disconnected, as `mpd` does.
    public let closeCount = Atomic<UInt64>(0)
    /// Bumped by a cancel (seek, skip): listeners skip what they did not get yet, up to ``cancelledAt``.
    public let cancelCount = Atomic<UInt64>(0)
    /// Where the stream stood at the latest cancel: what came before is skipped, what the output published after
    /// it (a new song's headers) is not, however late the server thread sees the cancel.
    private let cancelledAt = Atomic<UInt64>(0)
    /// Whether listeners may ask for ICY metadata (the encoder does not put tags in the stream itself).
    public let metadataSupported = Atomic<Bool>(false)
    /// Listeners being served; the output encodes only while there is one.
    public let listeners = Atomic<Int>(0)

    private let header = Mutex<[UInt8]>([])
    private let metadata = Mutex<[UInt8]?>(nil)
    /// Bumped with every new metadata block.
    public let metadataVersion = Atomic<UInt64>(0)

    /// Wakes the server thread: new pages, a close, a cancel, a new metadata block.
    public let wakeFD: FileDescriptor

    public init() throws(SystemCallError) {
        self.wakeFD = try EventFD.eventfd()
        self.storage = .allocate(byteCount: Self.capacity, alignment: 16)
    }

    deinit {
        self.storage.deallocate()
        self.wakeFD.close()
    }

    // MARK: - Writer (output thread)

    /// Appends one page of the stream (no allocation, no lock). Pages larger than a quarter of the ring are
    /// cut, so a reader always finds a recent page start.
    public func publish(_ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < bytes.count {
            let count = min(bytes.count - offset, Self.capacity / 4)
            let start = self.written.load(ordering: .relaxed)
            var position = Int(start % UInt64(Self.capacity))
            var done = 0
            while done < count {
                let run = min(count - done, Self.capacity - position)
                UnsafeMutableRawBufferPointer(rebasing: self.storage[position..<(position + run)]).copyMemory(
                    from: UnsafeRawBufferPointer(rebasing: bytes[(offset + done)..<(offset + done + run)]))
                done += run
                position = 0
            }
            let page = self.pages.load(ordering: .relaxed)
            self.pageStarts[Int(page % UInt64(Self.pageSlots))].value.store(start, ordering: .releasing)
            self.written.store(start + UInt64(count), ordering: .releasing)
            self.pages.store(page + 1, ordering: .releasing)
            offset += count
        }
    }

    /// Wakes the server thread (once per batch of pages).
    public func signal() { EventFD.signal(self.wakeFD) }

    /// A cancel (seek, skip): listeners drop what was published so far and not sent yet, as `mpd` clears its
    /// clients' queues before the output goes on. Wakes the server thread.
    public func cancel() {
        self.cancelledAt.store(self.written.load(ordering: .relaxed), ordering: .releasing)
        self.cancelCount.add(1, ordering: .releasing)
        self.signal()
    }

    /// A stream opened: `header` is what every new listener gets first; listeners are served from now on.
    public func open(header: [UInt8]) {
        self.setHeader(header)
        self.isOpen.store(true, ordering: .releasing)
    }

    /// The stream closed (stop): every listener is hung up on, as `mpd` does; header and metadata go.
    public func close() {
        self.isOpen.store(false, ordering: .releasing)
        self.closeCount.add(1, ordering: .releasing)
        self.signal()
        self.setHeader([])
        self.setMetadata(nil)
    }

    /// Sets the page every new listener gets first (Ogg or FLAC headers, the WAV header). Stream open, tag.
    public func setHeader(_ bytes: [UInt8]) { self.header.withLock { $0 = bytes } }

    /// Sets the ICY metadata block listeners that asked for it get at their next interval. Song change.
    public func setMetadata(_ block: [UInt8]?) {
        self.metadata.withLock { $0 = block }
        self.metadataVersion.add(1, ordering: .releasing)
        self.signal()
    }

    // MARK: - Reader (server thread)

    /// The header page.
    public var currentHeader: [UInt8] { self.header.withLock { $0 } }
    /// The metadata block, `nil` when there is none.
    public var currentMetadata: [UInt8]? { self.metadata.withLock { $0 } }

    /// Where a listener at `position` goes on after a cancel: past what was published before the latest cancel,
    /// not past what came after it. Read after ``cancelCount``.
    public func positionAfterCancel(from position: UInt64) -> UInt64 {
        max(position, self.cancelledAt.load(ordering: .acquiring))
    }

    /// Where the newest page starts (where a new or dropped-behind listener goes on).
    public var newestPageStart: UInt64 {
        let count = self.pages.load(ordering: .acquiring)
        guard count > 0 else { return self.written.load(ordering: .acquiring) }
        return self.pageStarts[Int((count - 1) % UInt64(Self.pageSlots))].value.load(ordering: .acquiring)
    }

    /// Copies the stream from `position` into `buffer`, at most up to `written`.
    ///
    /// - Returns: the bytes copied, or `nil` when `position` was overwritten (the listener fell a ring
    ///   behind).
    public func copy(from position: UInt64, into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        let end = self.written.load(ordering: .acquiring)
        guard end >= position, end - position <= UInt64(Self.safeLag) else { return nil }
        let count = min(buffer.count, Int(end - position))
        var ring = Int(position % UInt64(Self.capacity))
        var done = 0
        while done < count {
            let run = min(count - done, Self.capacity - ring)
            UnsafeMutableRawBufferPointer(rebasing: buffer[done..<(done + run)]).copyMemory(
                from: UnsafeRawBufferPointer(rebasing: self.storage[ring..<(ring + run)]))
            done += run
            ring = 0
        }
        // The writer may have lapped us while we copied: then what we copied is not the stream.
        let after = self.written.load(ordering: .acquiring)
        guard after - position <= UInt64(Self.safeLag) else { return nil }
        return count
    }
}

/// One page start. `@unchecked Sendable`: a single atomic.
private final class PageSlot: @unchecked Sendable {
    let value = Atomic<UInt64>(0)
}
