// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Posix
import Synchronization

/// Song files kept in memory (`mpd`'s `input_cache`, `InputCacheManager`): the decoder opens a local file through
/// the cache, and the queue's next song is prefetched into it, so playback does not wait on the disk.
///
/// As `mpd` 0.23.12:
/// - Only local files (absolute paths) are cached, and only those of a known size above zero of at most half the
///   capacity; anything else is opened directly (``open(_:)`` returns `nil`).
/// - An item is filled by the cache's own thread (`input_cache`), reading the file from start to end into
///   memory allocated once at its size; a stream opened while that goes on reads the filled part from memory and
///   the rest from the file (through the descriptor the item holds, so the file may go away meanwhile).
/// - Items are evicted least recently used first (a look-up counts as a use), and only when a new item needs the
///   room; an item a stream reads is never evicted (the total may then stay above the capacity for a while).
/// - ``flush()`` (`SIGHUP`) drops every item no stream reads.
///
/// Any thread: the index, the order and the job queue are touched only with
/// the cache's mutex held; items share their bytes as ``InputCacheItem`` explains. Nothing here runs on the
/// event loop but ``prefetch(_:)``, which only queues a job.
public final class InputCache: Sendable {
    /// The capacity in bytes (`input_cache { size }`).
    public let capacity: Int
    private let shared: Shared
    private let worker: NamedThread

    /// A cache of `capacity` bytes with its filling thread.
    ///
    /// - Parameters:
    ///   - capacity: The bound on the bytes of all items no stream reads.
    ///   - chunkSize: How many bytes the filler reads at a time.
    ///   - logger: Gets `mpd`'s debug lines (`Prefetch '/path'`, and `Cached '/path' (N bytes)` once it is in
    ///     memory) and errors (`Prefetch '/path' failed: …`), on the cache's thread.
    ///   - onChunk: Called on the cache's thread after each chunk an item got (its path and its filled bytes): for
    ///     tests that hold the filler half-way.
    public init(
        capacity: Int, chunkSize: Int = 256 * 1024,
        logger: Logger = .discarding,
        onChunk: (@Sendable (_ path: String, _ filled: Int) -> Void)? = nil
    ) {
        self.capacity = max(0, capacity)
        let shared = Shared(capacity: self.capacity, chunkSize: max(1, chunkSize), logger: logger, onChunk: onChunk)
        self.shared = shared
        self.worker = NamedThread("input_cache") { shared.run() }
    }

    deinit {
        self.shared.stop()
        self.worker.join()
    }

    /// A stream over the cached file at `path` (`mpd`'s `InputCacheManager::Get(uri, true)` and
    /// `CacheInputStream`), creating its item when the file is eligible: the file is opened here (the decoder
    /// thread; never the event loop) and filled by the cache's thread. A use: the item becomes the most recent.
    ///
    /// - Returns: `nil` when `path` is not absolute, cannot be opened, or is not eligible (empty, not a regular
    ///   file, or larger than half the capacity): the caller opens the file itself and reports its errors.
    public func open(_ path: String) -> InputCacheStream? {
        self.shared.stream(path, create: true)
    }

    /// Whether `path` has an item (a use, as `mpd`'s `Contains`).
    public func contains(_ path: String) -> Bool {
        self.shared.stream(path, create: false) != nil
    }

    /// Queues `path` for the cache's thread to open and fill, unless it has an item already (`mpd`'s
    /// `PrefetchSong`). Never waits on the disk: the event loop calls it.
    public func prefetch(_ path: String) {
        self.shared.enqueue(path)
    }

    /// Drops every item no stream reads (`mpd`'s `Flush`, on `SIGHUP`).
    public func flush() {
        self.shared.flush()
    }

    /// The bytes of all items.
    public var totalSize: Int { self.shared.withLock { $0.total } }

    /// The paths of the items, least recently used first.
    public var paths: [String] { self.shared.withLock { $0.order.map(\.path) } }

    /// How many bytes of `path`'s item are in memory, or `nil` when it has none. Does not count as a use.
    public func filledBytes(_ path: String) -> Int? {
        self.shared.withLock { $0.items[path] }?.filled
    }

    /// Waits until the cache's thread has nothing left to open or fill: for tests and diagnostics.
    public func waitUntilIdle() {
        self.shared.waitUntilIdle()
    }
}

extension InputCache {
    /// What the cache's thread and its callers share, guarded by ``condition``.
    fileprivate final class Shared: @unchecked Sendable {
        struct State {
            var items: [String: InputCacheItem] = [:]
            /// Least recently used first.
            var order: [InputCacheItem] = []
            var total = 0
            /// Paths to prefetch and items to fill, in order.
            var jobs: [Job] = []
            var busy = false
            var stopping = false
        }

        enum Job {
            case prefetch(String)
            case fill(InputCacheItem)
        }

        let capacity: Int
        let chunkSize: Int
        let logger: Logger
        let onChunk: (@Sendable (String, Int) -> Void)?
        let condition = Condition()
        private var state = State()

        init(
            capacity: Int, chunkSize: Int, logger: Logger, onChunk: (@Sendable (String, Int) -> Void)?
        ) {
            self.capacity = capacity
            self.chunkSize = chunkSize
            self.logger = logger
            self.onChunk = onChunk
        }

        func withLock<Result>(_ body: (inout State) -> Result) -> Result {
            self.condition.lock()
            defer { self.condition.unlock() }
            return body(&self.state)
        }

        // MARK: Callers

        func stream(_ path: String, create: Bool) -> InputCacheStream? {
            guard path.hasPrefix("/") else { return nil }
            if let item = self.lease(path) { return InputCacheStream(item: item, release: { self.release(item) }) }
            guard create, let item = try? self.makeItem(path) else { return nil }
            let leased = self.insert(item, leased: true)
            self.withLock { $0.jobs.append(.fill(item)) }
            self.condition.broadcast()
            return InputCacheStream(item: leased, release: { self.release(leased) })
        }

        func enqueue(_ path: String) {
            guard path.hasPrefix("/") else { return }
            self.withLock { $0.jobs.append(.prefetch(path)) }
            self.condition.broadcast()
        }

        func flush() {
            self.withLock { state in
                let unused = state.order.filter { $0.users == 0 }
                for item in unused { Self.remove(item, from: &state) }
            }
        }

        func stop() {
            self.withLock { $0.stopping = true }
            self.condition.broadcast()
        }

        func waitUntilIdle() {
            self.condition.lock()
            while !self.state.jobs.isEmpty || self.state.busy { self.condition.wait() }
            self.condition.unlock()
        }

        /// The item for `path`, counted as used by one more stream and made the most recent.
        private func lease(_ path: String) -> InputCacheItem? {
            self.withLock { state in
                guard let item = state.items[path] else { return nil }
                Self.touch(item, in: &state)
                item.users += 1
                return item
            }
        }

        private func release(_ item: InputCacheItem) {
            self.withLock { _ in item.users -= 1 }
        }

        /// Opens `path` as a new item when it is eligible (no lock held: this waits on the disk).
        ///
        /// - Returns: `nil` for a file that is not regular, empty, or larger than half the capacity.
        /// - Throws: `open`'s error.
        private func makeItem(_ path: String) throws(SystemCallError) -> InputCacheItem? {
            let descriptor = try FileDescriptor.openForReading(path)
            guard let status = try? descriptor.status(), status.kind == .regular, status.size > 0,
                status.size <= Int64(self.capacity / 2)
            else {
                descriptor.close()
                return nil
            }
            return InputCacheItem(path: path, descriptor: descriptor, size: Int(status.size))
        }

        /// Adds `item` as the most recent (unless another caller added `path` first: that one is returned),
        /// evicting the least recently used items no stream reads until the total fits.
        private func insert(_ item: InputCacheItem, leased: Bool) -> InputCacheItem {
            self.withLock { state in
                if let existing = state.items[item.path] {
                    Self.touch(existing, in: &state)
                    if leased { existing.users += 1 }
                    return existing
                }
                if leased { item.users += 1 }
                state.total += item.size
                while state.total > self.capacity, let oldest = state.order.first(where: { $0.users == 0 }) {
                    Self.remove(oldest, from: &state)
                }
                state.items[item.path] = item
                state.order.append(item)
                return item
            }
        }

        private static func touch(_ item: InputCacheItem, in state: inout State) {
            guard let index = state.order.firstIndex(where: { $0 === item }) else { return }
            state.order.remove(at: index)
            state.order.append(item)
        }

        private static func remove(_ item: InputCacheItem, from state: inout State) {
            guard let index = state.order.firstIndex(where: { $0 === item }) else { return }
            state.order.remove(at: index)
            state.items[item.path] = nil
            state.total -= item.size
        }

        // MARK: The cache's thread

        func run() {
            while let job = self.nextJob() {
                switch job {
                case .prefetch(let path):
                    self.prefetch(path)
                case .fill(let item):
                    self.fill(item)
                }
                self.withLock { $0.busy = false }
                self.condition.broadcast()
            }
        }

        private func nextJob() -> Job? {
            self.condition.lock()
            defer { self.condition.unlock() }
            while true {
                if self.state.stopping { return nil }
                if !self.state.jobs.isEmpty {
                    self.state.busy = true
                    return self.state.jobs.removeFirst()
                }
                self.condition.broadcast()
                self.condition.wait()
            }
        }

        private func prefetch(_ path: String) {
            if self.withLock({ $0.items[path] }) != nil { return }
            self.logger.debug("Prefetch '\(path)'")
            let made: InputCacheItem?
            do {
                made = try self.makeItem(path)
            } catch {
                self.logger.error("Prefetch '\(path)' failed: Failed to open '\(path)': \(error.errno)")
                return
            }
            guard let made else { return }
            let item = self.insert(made, leased: false)
            self.fill(item)
        }

        /// Reads the rest of `item`'s file into its memory, chunk by chunk, unless another job filled it. A failed
        /// read (or a file that shrank) drops the item, as nothing could be cached of it.
        private func fill(_ item: InputCacheItem) {
            while item.filled < item.size {
                // Stop when the daemon does, or when the item was dropped before anyone read it.
                let dropped = self.withLock { $0.stopping || ($0.items[item.path] !== item && item.users == 0) }
                if dropped { return }
                let read: Int
                do {
                    read = try item.fillChunk(self.chunkSize)
                } catch {
                    self.logger.error("Prefetch '\(item.path)' failed: \(InputError.io(error, uri: item.path))")
                    read = 0
                }
                if read == 0 {
                    self.withLock { state in
                        if state.items[item.path] === item { Self.remove(item, from: &state) }
                    }
                    return
                }
                self.onChunk?(item.path, item.filled)
                if item.filled == item.size { self.logger.debug("Cached '\(item.path)' (\(item.size) bytes)") }
            }
        }
    }
}

/// One cached file (`mpd`'s `InputCacheItem`): its descriptor, held open while the item lives, and memory of the
/// file's size, filled from the start by the cache's thread alone.
///
/// `@unchecked Sendable`: the bytes below ``filled`` (published with release ordering after they are written) are
/// never written again and are read by streams on any thread; the bytes above are written only by the filler.
/// ``users`` is guarded by the cache's mutex.
final class InputCacheItem: @unchecked Sendable {
    let path: String
    let size: Int
    let descriptor: FileDescriptor
    private let storage: UnsafeMutableRawPointer
    private let filledBytes = Atomic<Int>(0)
    /// How many streams read the item; with the cache's mutex held.
    var users = 0

    init(path: String, descriptor: FileDescriptor, size: Int) {
        self.path = path
        self.descriptor = descriptor
        self.size = size
        self.storage = .allocate(byteCount: size, alignment: 16)
    }

    deinit {
        self.storage.deallocate()
        self.descriptor.close()
    }

    /// The bytes from the start that are in memory.
    var filled: Int { self.filledBytes.load(ordering: .acquiring) }

    /// Reads the next chunk of at most `limit` bytes of the file into memory. The filler's thread only.
    ///
    /// - Returns: the bytes read; 0 when the file ended early.
    func fillChunk(_ limit: Int) throws(SystemCallError) -> Int {
        let start = self.filledBytes.load(ordering: .relaxed)
        let count = min(limit, self.size - start)
        let read = try self.descriptor.read(
            into: UnsafeMutableRawBufferPointer(start: self.storage + start, count: count), at: Int64(start))
        self.filledBytes.store(start + read, ordering: .releasing)
        return read
    }

    /// Reads at `offset`: from memory what is filled, else from the file. Does not allocate or lock.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(InputError) -> Int {
        guard !buffer.isEmpty, offset < self.size else { return 0 }
        let filled = self.filled
        if offset < filled {
            let count = min(buffer.count, filled - offset)
            buffer.baseAddress!.copyMemory(from: self.storage + offset, byteCount: count)
            return count
        }
        let wanted = UnsafeMutableRawBufferPointer(rebasing: buffer[..<min(buffer.count, self.size - offset)])
        do {
            return try self.descriptor.read(into: wanted, at: Int64(offset))
        } catch {
            throw .io(error, uri: self.path)
        }
    }
}

/// A stream over a cached file (`mpd`'s `CacheInputStream`): seekable, of the file's size when it was opened;
/// reads come from memory once the cache's thread has filled the item. Releases its item when it goes away.
///
/// Confined to one thread at a time. Reads never allocate or lock.
public final class InputCacheStream: InputStream {
    /// The file's path.
    public var uri: String { self.item.path }
    /// The size the file had when it was cached.
    public var size: UInt64? { UInt64(self.item.size) }
    /// Always `true`.
    public var isSeekable: Bool { true }
    /// Always `nil`: files announce no type.
    public var mimeType: String? { nil }
    /// Where the next read starts.
    public private(set) var offset: UInt64 = 0
    private let item: InputCacheItem
    private let release: () -> Void

    init(item: InputCacheItem, release: @escaping () -> Void) {
        self.item = item
        self.release = release
    }

    deinit { self.release() }

    /// Whether the whole file is in memory.
    public var isFilled: Bool { self.item.filled == self.item.size }

    /// Reads at the current offset and moves past what was read. Does not allocate or lock.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        let count = try self.item.read(into: buffer, at: Int(self.offset))
        self.offset += UInt64(count)
        return count
    }

    /// Moves to `offset`, which may be at most the size.
    ///
    /// - Throws: `InputError.notSeekable` past the end.
    public func seek(to offset: UInt64) throws(InputError) {
        guard offset <= UInt64(self.item.size) else { throw .notSeekable(uri: self.uri) }
        self.offset = offset
    }
}
