// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// `single` mode.
public enum SingleMode: Sendable, Equatable {
    case off, on, oneshot

    /// The value `status` prints and `single` accepts: `0`, `1`, `oneshot`.
    public var wireValue: String {
        switch self {
        case .off: "0"
        case .on: "1"
        case .oneshot: "oneshot"
        }
    }

    /// Parses `0`, `1` or `oneshot`.
    public init?(wireValue: String) {
        switch wireValue {
        case "0": self = .off
        case "1": self = .on
        case "oneshot": self = .oneshot
        default: return nil
        }
    }
}

/// The play queue: songs with stable ids, positions, priorities, per-item versions and the play order.
///
/// A value with no I/O, owned by the `Playlist` on the event loop thread. Mirrors `mpd`'s queue: ids start at
/// 1 and are not reused until they wrap at four times the maximum length; the version counter starts at 1 and
/// each item remembers the version at which it was last touched (`plchanges`); with `random` on, `order` is a
/// permutation of positions grouped by descending priority.
public struct Queue: Sendable {
    /// One queue entry.
    ///
    /// Small (a reference to the song, the id, the version and the priority, as `mpd`'s queue item holds a
    /// pointer to its song): `shuffle`, `move` and `delete` move items, not songs.
    public struct Item: Sendable {
        /// What holds the song: the store of a stored song (`number` ≥ 0), else a `SongBox` (a `QueueSong` is a
        /// large value). One reference and 32-bit numbers keep an item at 24 bytes: `shuffle` and `move` move
        /// items, and a 100k-song queue is 2.4 MB of them.
        private var holder: any AnyObject & Sendable
        /// The song's number in the store, or -1 for a boxed song.
        private var number: Int32
        private var storedID: Int32
        /// The queue version at which this item was last changed.
        public var version: UInt32
        /// 0...255; higher plays earlier in random mode.
        public var priority: UInt8

        /// The stable id (`Id:`).
        public var id: Int { Int(self.storedID) }

        /// The song (built from the store for a stored one). Setting it boxes the new value.
        public var song: QueueSong {
            get {
                if let stored = self.stored { return QueueEntry.song(stored.song, of: stored.store) }
                return self.box.song
            }
            set { self.entry = .song(newValue) }
        }

        /// What the item holds. Setting it stores or boxes the new value.
        public var entry: QueueEntry {
            get {
                if let stored = self.stored { return .stored(stored.store, stored.song) }
                return .song(self.box.song)
            }
            set { (self.holder, self.number) = Self.hold(newValue) }
        }

        /// What holds `entry`'s song, and its number (-1 for a boxed song).
        private static func hold(_ entry: QueueEntry) -> (any AnyObject & Sendable, Int32) {
            switch entry {
            case .stored(let store, let number): (store, number)
            case .song(let song): (SongBox(song), -1)
            }
        }

        /// The box of a song of its own.
        private var box: SongBox { unsafeDowncast(self.holder, to: SongBox.self) }

        /// The store and song number of a song of the library's snapshot; `nil` for a song of its own.
        public var stored: (store: any SongStore, song: Int32)? {
            guard self.number >= 0 else { return nil }
            // Only a `SongStore` is held with a number.
            guard let store = self.holder as? any SongStore else { preconditionFailure("a number without a store") }
            return (store, self.number)
        }

        /// The song number when the item holds a song of `store`.
        public func song(in store: any SongStore) -> Int32? { self.song(inStore: ObjectIdentifier(store)) }

        /// ``song(in:)`` for the store `identity` names (`ObjectIdentifier(store)`, taken once for many items): no
        /// reference to the store is taken and given back for each item.
        public func song(inStore identity: ObjectIdentifier) -> Int32? {
            self.number >= 0 && ObjectIdentifier(self.holder) == identity ? self.number : nil
        }

        /// The song's URI (built without its tags).
        public var uri: String {
            if let stored = self.stored { return stored.store.uri(stored.song) }
            return self.box.song.uri
        }

        /// The URI the player opens (built without tags): a cue track's audio file (`QueueSong.realURI`), else
        /// `uri`. A stored song has no `realURI`.
        public var playableURI: String {
            if let stored = self.stored { return stored.store.uri(stored.song) }
            return self.box.song.realURI ?? self.box.song.uri
        }

        /// The song's modification time (read without its tags).
        public var modificationTime: Int64? {
            if let stored = self.stored { return stored.store.modificationTime(stored.song) }
            return self.box.song.modificationTime
        }

        /// Whether the song lives in the music directory (`QueueSong.isInDatabase`); a stored one always does.
        public var isInDatabase: Bool { self.number >= 0 || self.box.song.isInDatabase }

        init(entry: QueueEntry, id: Int, version: UInt32, priority: UInt8) {
            (self.holder, self.number) = Self.hold(entry)
            self.storedID = Int32(id)
            self.version = version
            self.priority = priority
        }
    }

    /// An immutable song shared by the item that holds it.
    final class SongBox: Sendable {
        let song: QueueSong
        init(_ song: QueueSong) { self.song = song }
    }

    /// The most songs the queue holds (`max_playlist_length`).
    public let maximumLength: Int
    /// The entries, by position.
    public private(set) var items: [Item] = []
    /// The play order: `order[i]` is the position played `i`-th. Identity unless `random`.
    public private(set) var order: [Int] = []
    /// The version counter (`playlist:` in `status`).
    public private(set) var version: UInt32 = 1

    /// `repeat`.
    public var repeatMode = false
    /// `single`.
    public var single = SingleMode.off
    /// `consume`.
    public var consume = false
    /// `random`. Setting it does not touch `order`: the playlist shuffles or restores it.
    public var random = false

    /// The random source for shuffles.
    public var generator: QueueRandom

    /// id → position, or -1; index 0 is never used. 32-bit, as `mpd`'s table: one entry per id handed out so far,
    /// up to 4 × `max_playlist_length` (positions stay below 2³¹: a queue of that many songs would not fit in
    /// memory).
    private var positionByID: [Int32] = [-1]
    private var nextID = 1
    private let idLimit: Int

    /// Creates an empty queue.
    public init(maximumLength: Int = 16384, generator: QueueRandom = QueueRandom()) {
        precondition(maximumLength > 0)
        self.maximumLength = maximumLength
        // Items keep 32-bit ids: past 2³¹ − 1 (a `max_playlist_length` over 500 million) they wrap there.
        self.idLimit = maximumLength > Int(Int32.max) / 4 ? Int(Int32.max) : maximumLength * 4
        self.generator = generator
    }

    // MARK: - Lookups

    /// The number of songs.
    public var count: Int { self.items.count }
    /// Whether the queue is empty.
    public var isEmpty: Bool { self.items.isEmpty }
    /// Whether no song can be added.
    public var isFull: Bool { self.items.count >= self.maximumLength }

    /// The position of the song with `id`, if any.
    ///
    /// Id 0 is never given out, yet `mpd`'s table maps it to position 0 (an entry it never writes, zero in
    /// practice), even in an empty queue: commands then fail, or not, on that position (`deleteid 0` deletes the
    /// first song; on an empty queue it says `Bad song index`). Kept, as clients can observe it.
    public func position(ofID id: Int) -> Int? {
        if id == 0 { return 0 }
        guard id > 0, id < self.positionByID.count else { return nil }
        let position = self.positionByID[id]
        return position >= 0 ? Int(position) : nil
    }

    /// The order index of the song at `position`.
    public func order(ofPosition position: Int) -> Int {
        guard let index = self.order.firstIndex(of: position) else { preconditionFailure("position not in order") }
        return index
    }

    /// The item played `orderIndex`-th.
    public func item(atOrder orderIndex: Int) -> Item { self.items[self.order[orderIndex]] }

    /// Whether the item at `position` changed at or after `version` (`plchanges`): also when its version is 0
    /// (reset by a counter wrap) or when `version` is newer than the queue's.
    public func isNewer(at position: Int, than version: UInt32) -> Bool {
        let changed = self.items[position].version
        return version > self.version || changed >= version || changed == 0
    }

    /// Calls `body` with the item at each of `positions`, from `start` on, in order, read in place (a copy would
    /// retain and release its song), while `body` returns `true`.
    ///
    /// Inlinable, so it is specialized for its callers' positions: unspecialized, each item cost a generic copy
    /// and each index step a witness call.
    ///
    /// - Returns: the index of `positions` after the last item `body` was called with and said `true` to.
    @inlinable
    public func visitItems<Positions: Collection<Int>>(
        at positions: Positions, from start: Positions.Index, _ body: (borrowing Item, Int) -> Bool
    ) -> Positions.Index {
        self.items.withUnsafeBufferPointer { items in
            var index = start
            while index != positions.endIndex {
                let position = positions[index]
                guard body(items[position], position) else { break }
                positions.formIndex(after: &index)
            }
            return index
        }
    }

    /// The song number in the store `identity` names (``Item/song(inStore:)``) of the item at each of `positions`,
    /// in their order, -1 for an item of no song of that store: the items read in place (a copy of each would
    /// retain and release its song). Inlinable, so it is specialized for its callers' positions.
    @inlinable
    public func songNumbers(at positions: some Collection<Int>, inStore identity: ObjectIdentifier) -> [Int32] {
        var numbers: [Int32] = []
        numbers.reserveCapacity(positions.count)
        self.items.withUnsafeBufferPointer { items in
            for position in positions { numbers.append(items[position].song(inStore: identity) ?? -1) }
        }
        return numbers
    }

    /// Calls `body` with the position and id of each item of `positions` newer than `version` (`isNewer`), in
    /// order: a loop over two fields, no item copied.
    public func forEachNewer(in positions: Range<Int>, than version: UInt32, _ body: (Int, Int) -> Void) {
        let all = version > self.version
        self.items.withUnsafeBufferPointer { items in
            for position in positions {
                let changed = items[position].version
                if all || changed >= version || changed == 0 { body(position, items[position].id) }
            }
        }
    }

    /// The order index after `orderIndex` when a song ends: `mpd`'s `GetNextOrder`.
    ///
    /// - Returns: `nil` at the end of the queue.
    public func nextOrder(after orderIndex: Int) -> Int? {
        if self.single != .off && self.repeatMode && !self.consume { return orderIndex }
        if orderIndex + 1 < self.items.count { return orderIndex + 1 }
        if self.repeatMode && (orderIndex > 0 || !self.consume) { return 0 }
        return nil
    }

    // MARK: - Versions

    /// Bumps the version; at 2³¹−1 it restarts at 1 and every item is marked 0 (changed).
    public mutating func incrementVersion() {
        self.version += 1
        if self.version >= UInt32(1) << 31 - 1 {
            for index in self.items.indices { self.items[index].version = 0 }
            self.version = 1
        }
    }

    /// Marks the item at `position` as changed at the current version.
    public mutating func touch(position: Int) {
        self.items[position].version = self.version
    }

    /// Replaces the song at `position` (tags, range), marking it changed.
    public mutating func replaceSong(at position: Int, with song: QueueSong) {
        self.replaceEntry(at: position, with: .song(song))
    }

    /// Replaces what the item at `position` holds, marking it changed.
    public mutating func replaceEntry(at position: Int, with entry: QueueEntry) {
        self.items[position].entry = entry
        self.items[position].version = self.version
    }

    /// Holds the same song another way at `position` (in a newer snapshot, or as a value of its own), without
    /// marking it changed: the caller knows the song reads the same.
    public mutating func rehold(at position: Int, as entry: QueueEntry) {
        self.items[position].entry = entry
    }

    // MARK: - Ids

    private mutating func generateID() -> Int {
        while true {
            let id = self.nextID
            self.nextID += 1
            if self.nextID == self.idLimit { self.nextID = 1 }
            if id == self.positionByID.count {
                self.positionByID.append(-1)
                return id
            }
            if self.positionByID[id] < 0 { return id }
        }
    }

    // MARK: - Editing

    /// Appends a song with identity order for it; returns its id. The queue must not be full.
    @discardableResult
    public mutating func append(_ song: QueueSong, priority: UInt8 = 0) -> Int {
        self.append(.song(song), priority: priority)
    }

    /// Appends an entry with identity order for it; returns its id. The queue must not be full.
    @discardableResult
    public mutating func append(_ entry: QueueEntry, priority: UInt8 = 0) -> Int {
        precondition(!self.isFull)
        let position = self.items.count
        let id = self.generateID()
        self.positionByID[id] = Int32(position)
        self.items.append(Item(entry: entry, id: id, version: self.version, priority: priority))
        self.order.append(position)
        return id
    }

    private mutating func moveItem(from: Int, to: Int) {
        self.items[to] = self.items[from]
        self.items[to].version = self.version
        self.positionByID[self.items[to].id] = Int32(to)
    }

    /// Swaps two positions (both marked changed); `order` still refers to positions.
    public mutating func swapPositions(_ a: Int, _ b: Int) {
        // The buffer's swap moves the two items; `Array.swapAt` copies them (a retain and a release each).
        self.items.withUnsafeMutableBufferPointer { $0.swapAt(a, b) }
        self.items[a].version = self.version
        self.items[b].version = self.version
        self.positionByID[self.items[a].id] = Int32(a)
        self.positionByID[self.items[b].id] = Int32(b)
    }

    /// Swaps two order entries.
    public mutating func swapOrders(_ a: Int, _ b: Int) {
        self.order.swapAt(a, b)
    }

    /// Moves positions `start..<end` so the block starts at `to`; every shifted item is marked changed, and in
    /// random mode `order` follows the songs.
    public mutating func moveRange(_ start: Int, _ end: Int, to: Int) {
        let block = Array(self.items[start..<end])
        let count = end - start
        if to > start {
            for index in end..<(end + to - start) { self.moveItem(from: index, to: start + index - end) }
        }
        if to < start {
            for index in stride(from: start - 1, through: to, by: -1) { self.moveItem(from: index, to: index + count) }
        }
        for (offset, item) in block.enumerated() {
            self.items[to + offset] = item
            self.items[to + offset].version = self.version
            self.positionByID[item.id] = Int32(to + offset)
        }
        if self.random {
            for index in self.order.indices {
                let position = self.order[index]
                if position >= end && position < to + count {
                    self.order[index] -= count
                } else if position < start && position >= to {
                    self.order[index] += count
                } else if start <= position && position < end {
                    self.order[index] += to - start
                }
            }
        }
    }

    /// Moves an order entry; returns its new index.
    @discardableResult
    public mutating func moveOrder(from: Int, to: Int) -> Int {
        let position = self.order.remove(at: from)
        self.order.insert(position, at: to)
        return to
    }

    /// Moves order entry `from` just before `to` (as indexed before the move); returns its new index.
    public mutating func moveOrder(_ from: Int, before to: Int) -> Int {
        self.moveOrder(from: from, to: to - (from < to ? 1 : 0))
    }

    /// Moves order entry `from` just after `to` (as indexed before the move); returns its new index.
    public mutating func moveOrder(_ from: Int, after to: Int) -> Int {
        self.moveOrder(from: from, to: to + (from > to ? 1 : 0))
    }

    /// Removes the song at `position`; later items move up (marked changed).
    public mutating func delete(position: Int) {
        let orderIndex = self.order(ofPosition: position)
        self.positionByID[self.items[position].id] = -1
        for index in position..<(self.items.count - 1) { self.moveItem(from: index + 1, to: index) }
        self.items.removeLast()
        self.order.remove(at: orderIndex)
        for index in self.order.indices where self.order[index] > position { self.order[index] -= 1 }
    }

    /// Removes every song. Ids keep counting.
    public mutating func removeAll() {
        self.items.withUnsafeBufferPointer { items in
            for index in items.indices { self.positionByID[items[index].id] = -1 }
        }
        self.items = []
        self.order = []
    }

    // MARK: - Order

    /// Identity order (random off).
    public mutating func restoreOrder() {
        self.order = Array(self.items.indices)
    }

    private mutating func randomIndex(_ range: Range<Int>) -> Int {
        Int.random(in: range, using: &self.generator)
    }

    /// Shuffles order entries `start..<end`.
    public mutating func shuffleOrder(_ start: Int, _ end: Int) {
        guard end - start > 1 else { return }
        var slice = Array(self.order[start..<end])
        slice.shuffle(using: &self.generator)
        self.order.replaceSubrange(start..<end, with: slice)
    }

    /// Groups order entries `start..<end` by descending priority (stable), then shuffles each group.
    public mutating func shuffleOrderWithPriority(_ start: Int, _ end: Int) {
        guard start < end else { return }
        let items = self.items
        let grouped = self.order[start..<end].enumerated().sorted { a, b in
            let (p, q) = (items[a.element].priority, items[b.element].priority)
            return p != q ? p > q : a.offset < b.offset
        }.map(\.element)
        self.order.replaceSubrange(start..<end, with: grouped)
        var groupStart = start
        for index in (start + 1)..<(end + 1) {
            if index == end || self.item(atOrder: index).priority != self.item(atOrder: groupStart).priority {
                self.shuffleOrder(groupStart, index)
                groupStart = index
            }
        }
    }

    /// Shuffles the whole order by priority groups.
    public mutating func shuffleOrder() {
        self.shuffleOrderWithPriority(0, self.items.count)
    }

    /// Swaps order entry `start` with a random one in `start..<end`.
    public mutating func shuffleOrderFirst(_ start: Int, _ end: Int) {
        self.swapOrders(start, self.randomIndex(start..<end))
    }

    /// Swaps the last order entry (`end - 1`) with a random one of its priority group within `start..<end`.
    public mutating func shuffleOrderLastWithPriority(_ start: Int, _ end: Int) {
        let lastPriority = self.item(atOrder: end - 1).priority
        var start = start
        while self.item(atOrder: start).priority != lastPriority { start += 1 }
        self.swapOrders(end - 1, self.randomIndex(start..<end))
    }

    /// Shuffles positions `start..<end` (`shuffle`): each position swapped with a random one of the range.
    ///
    /// The swaps move items only; versions and the id table are set in one pass afterwards (every position of the
    /// range is swapped, so every item is marked changed), not twice per swap at random places.
    public mutating func shufflePositions(_ start: Int, _ end: Int) {
        guard start < end else { return }
        let version = self.version
        var generator = self.generator
        self.items.withUnsafeMutableBufferPointer { items in
            for index in start..<end { items.swapAt(index, Int.random(in: start..<end, using: &generator)) }
            for position in start..<end { items[position].version = version }
        }
        self.generator = generator
        let items = self.items
        items.withUnsafeBufferPointer { items in
            self.positionByID.withUnsafeMutableBufferPointer { positionByID in
                for position in start..<end { positionByID[items[position].id] = Int32(position) }
            }
        }
    }

    // MARK: - Priorities

    private func findPriorityOrder(from start: Int, priority: UInt8, excluding excluded: Int) -> Int {
        for index in start..<self.items.count where self.item(atOrder: index).priority <= priority && index != excluded
        {
            return index
        }
        return self.items.count
    }

    private func countSamePriority(from start: Int, priority: UInt8) -> Int {
        for index in start..<self.items.count where self.item(atOrder: index).priority != priority {
            return index - start
        }
        return self.items.count - start
    }

    /// Sets the priority at `position`; in random mode (with `reorder`) moves the song to the front of its
    /// priority group after `afterOrder` (the current song, or -1), as `mpd` does.
    ///
    /// - Returns: whether the priority changed.
    @discardableResult
    public mutating func setPriority(position: Int, _ priority: UInt8, afterOrder: Int, reorder: Bool = true) -> Bool {
        let oldPriority = self.items[position].priority
        guard oldPriority != priority else { return false }
        self.items[position].version = self.version
        self.items[position].priority = priority
        guard self.random && reorder else { return true }
        let orderIndex = self.order(ofPosition: position)
        if afterOrder >= 0 {
            if orderIndex == afterOrder { return true }
            if orderIndex < afterOrder {
                // Already played: queue it again only if its priority rose above the current song's.
                let afterPriority = self.item(atOrder: afterOrder).priority
                if priority <= oldPriority || priority <= afterPriority { return true }
            }
        }
        let before = self.findPriorityOrder(from: afterOrder + 1, priority: priority, excluding: orderIndex)
        let newOrder = before > orderIndex ? before - 1 : before
        self.moveOrder(from: orderIndex, to: newOrder)
        let groupCount = self.countSamePriority(from: newOrder, priority: priority)
        self.shuffleOrderFirst(newOrder, newOrder + groupCount)
        return true
    }

    /// Sets the priority of positions `start..<end`, keeping track of the current song (`afterOrder`).
    ///
    /// - Returns: whether any priority changed.
    @discardableResult
    public mutating func setPriorityRange(_ start: Int, _ end: Int, _ priority: UInt8, afterOrder: Int) -> Bool {
        var modified = false
        let afterPosition = afterOrder >= 0 ? self.order[afterOrder] : -1
        for position in start..<end {
            let after = afterPosition >= 0 ? self.order(ofPosition: afterPosition) : -1
            if self.setPriority(position: position, priority, afterOrder: after) { modified = true }
        }
        return modified
    }
}
