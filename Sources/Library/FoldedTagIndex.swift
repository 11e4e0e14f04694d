// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Model
import Synchronization

/// One tag type's values for every song, folded once with `FilterCaseFold`, so that a case-insensitive filter
/// (`search`, `count` and `list` with `contains`…) folds only its needle instead of every haystack of every song,
/// and compares it with each distinct value once.
///
/// The values are numbered as in the type's `TagIndex` (the song's own values, no fallbacks, byte-identical values
/// once), whose numbers and songs it shares: each distinct value is folded and stored once, as numbered byte
/// strings. Immutable once built; `Sendable`.
public struct FoldedTagIndex: Sendable {
    /// The values' numbers and songs.
    let tags: TagIndex
    /// Folded value `id` is `bytes[starts[id]..<starts[id + 1]]` (UTF-8).
    private let bytes: [UInt8]
    private let starts: [Int32]

    /// Folds each distinct value of `tags`, whose values are numbers of `values`.
    init(_ tags: TagIndex, values: TagValueTable) {
        var bytes: [UInt8] = []
        var starts: [Int32] = [0]
        starts.reserveCapacity(tags.count + 1)
        for number in tags.tableNumbers {
            bytes.append(contentsOf: FilterCaseFold.fold(values[number]).utf8)
            starts.append(Int32(bytes.count))
        }
        self.tags = tags
        self.bytes = bytes
        self.starts = starts
    }

    /// The number of distinct values.
    public var count: Int { self.starts.count - 1 }

    /// The numbers of song `song`'s folded values, in stored order (empty when it has none).
    @inline(__always)
    public func ids(of song: Int32) -> ArraySlice<Int32> { self.tags.ids(of: song) }

    /// Calls `body` with the value numbers of every song without slicing per song: song `song`'s are
    /// `ids[offsets[song]..<offsets[song + 1]]`.
    func withUnsafeIDs<Result>(
        _ body: (_ offsets: UnsafeBufferPointer<Int32>, _ ids: UnsafeBufferPointer<Int32>) -> Result
    ) -> Result {
        self.tags.withUnsafeIDs(body)
    }

    /// Folded value number `id`.
    public func value(_ id: Int32) -> FoldedText {
        let range = Int(self.starts[Int(id)])..<Int(self.starts[Int(id) + 1])
        return FoldedText(alreadyFolded: String(decoding: self.bytes[range], as: UTF8.self))
    }

    /// Song `song`'s folded values, in stored order (empty when it has none).
    public func values(of song: Int32) -> LazyMapSequence<ArraySlice<Int32>, FoldedText> {
        self.ids(of: song).lazy.map { self.value($0) }
    }

    /// Whether `needle` (UTF-8 bytes) occurs in each distinct folded value, by value number: one scan of all
    /// the values' bytes, one after the other, instead of a search in each value. A hit that runs past
    /// the end of a value belongs to none; the scan goes on from the byte after it.
    public func containing(_ needle: UnsafeBufferPointer<UInt8>) -> [Bool] {
        var found = [Bool](repeating: needle.isEmpty, count: self.count)
        guard let needleStart = needle.baseAddress, !needle.isEmpty, !self.bytes.isEmpty else { return found }
        self.bytes.withUnsafeBufferPointer { bytes in
            self.starts.withUnsafeBufferPointer { starts in
                let base = bytes.baseAddress!
                let (first, rest) = (needle[0], needle.count - 1)
                var from = 0
                // The first byte by `memchr`, then the others compared.
                while from + needle.count <= bytes.count,
                    let hit = memchr(base + from, Int32(first), bytes.count - from - rest)
                {
                    let offset = UnsafeRawPointer(hit) - UnsafeRawPointer(base)
                    guard rest == 0 || memcmp(base + offset + 1, needleStart + 1, rest) == 0 else {
                        from = offset + 1
                        continue
                    }
                    // The value holding byte `offset`: the last one starting at or before it (an empty value
                    // starts where the next one does).
                    var (low, high) = (0, self.count)
                    while high - low > 1 {
                        let middle = (low + high) / 2
                        if Int(starts[middle]) <= offset { low = middle } else { high = middle }
                    }
                    let end = Int(starts[low + 1])
                    if offset + needle.count <= end {
                        found[low] = true
                        from = end
                    } else {
                        from = offset + 1
                    }
                }
            }
        }
        return found
    }

    /// `predicate` of every distinct folded value (its UTF-8 bytes), by value number.
    public func map<T>(_ predicate: (UnsafeBufferPointer<UInt8>) -> T) -> [T] {
        self.bytes.withUnsafeBufferPointer { bytes in
            self.starts.withUnsafeBufferPointer { starts in
                (0..<self.count).map { id in
                    predicate(UnsafeBufferPointer(rebasing: bytes[Int(starts[id])..<Int(starts[id + 1])]))
                }
            }
        }
    }
}

/// Every distinct value of a snapshot's value table, folded once with `FilterCaseFold`, by value number: what a
/// case-insensitive `any` filter (`search any`), which reads every tag type, compares its needle with.
///
/// Most values fold to themselves (lower-case ASCII, such as MusicBrainz ids): only the others are stored, so
/// the table costs four bytes per value plus the folded bytes of the values that change. Immutable once built;
/// `Sendable`.
struct FoldedValueTable: Sendable {
    /// For each value number, the number of its folded form in `starts`, or -1 when folding changes nothing.
    private let changed: [Int32]
    /// Folded form `n` is `bytes[starts[n]..<starts[n + 1]]` (UTF-8).
    private let bytes: [UInt8]
    private let starts: [UInt32]
    private let values: TagValueTable

    /// Folds every value of `values`.
    init(_ values: TagValueTable) {
        var changed = [Int32](repeating: -1, count: values.count)
        var bytes: [UInt8] = []
        var starts: [UInt32] = [0]
        for number in 0..<Int32(values.count) {
            let folds = values.withBytes(number) { value in
                value.contains { $0 >= 0x80 || $0 &- 0x41 < 26 }
            }
            guard folds else { continue }
            let value = values[number]
            let folded = FilterCaseFold.fold(value)
            guard !ByteString.sameBytes(folded, value) else { continue }
            changed[Int(number)] = Int32(starts.count - 1)
            bytes.append(contentsOf: folded.utf8)
            starts.append(UInt32(bytes.count))
        }
        self.changed = changed
        self.bytes = bytes
        self.starts = starts
        self.values = values
    }

    /// Calls `body` with the UTF-8 bytes of value `number` folded.
    @inline(__always)
    func withFoldedBytes<Result>(_ number: Int32, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        let folded = self.changed[Int(number)]
        guard folded >= 0 else { return self.values.withBytes(number, body) }
        let range = Int(self.starts[Int(folded)])..<Int(self.starts[Int(folded) + 1])
        return self.bytes.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[range])) }
    }
}

/// The query indexes of one snapshot, each built on first use (per tag type for the tag and folded indexes).
final class QueryIndexes: Sendable {
    private let tags = Mutex<[TagIndex?]>(Array(repeating: nil, count: TagType.allCases.count))
    private let folded = Mutex<[FoldedTagIndex?]>(Array(repeating: nil, count: TagType.allCases.count))
    private let foldedValues = Mutex<FoldedValueTable?>(nil)
    private let directoryPaths = Mutex<TagValueTable?>(nil)
    private let subtreeEnds = Mutex<[Int32]?>(nil)

    /// For each directory, the end of the one run of song numbers its subtree holds in walk order, or -1 when its
    /// songs are not one run (see `Database.subtreeSongs`): one walk of the tree for every `base` query after it.
    func subtreeEnds(_ directories: [Database.Directory]) -> [Int32] {
        Database.cached(self.subtreeEnds) { Self.computeSubtreeEnds(directories) }
    }

    /// The directories in walk order from the root (a directory, then each child's subtree in turn); a subtree's
    /// songs are one run when each directory of it after the first starts where the one before it in that order
    /// ended. Directories the walk does not reach get -1.
    static func computeSubtreeEnds(_ directories: [Database.Directory]) -> [Int32] {
        var ends = [Int32](repeating: -1, count: directories.count)
        guard !directories.isEmpty else { return ends }
        var order: [Int32] = []
        order.reserveCapacity(directories.count)
        var stack: [Int32] = [0]
        while let directory = stack.popLast() {
            order.append(directory)
            stack.append(contentsOf: directories[Int(directory)].children.reversed())
        }
        // Breaks before each position (a directory that does not start where the one before it ended), summed,
        // and each subtree's size in that order, from the leaves up.
        var breaks = [Int32](repeating: 0, count: order.count + 1)
        for position in order.indices {
            let starts = directories[Int(order[position])].songs.lowerBound
            let broken = position > 0 && starts != directories[Int(order[position - 1])].songs.upperBound
            breaks[position + 1] = breaks[position] + (broken ? 1 : 0)
        }
        var size = [Int32](repeating: 1, count: directories.count)
        for directory in order.reversed() {
            for child in directories[Int(directory)].children { size[Int(directory)] += size[Int(child)] }
        }
        for (position, directory) in order.enumerated() {
            let last = position + Int(size[Int(directory)]) - 1
            // No break after the subtree's first directory, up to its last.
            if breaks[last + 1] == breaks[position + 1] {
                ends[Int(directory)] = directories[Int(order[last])].songs.upperBound
            }
        }
        return ends
    }

    func directoryPaths(_ directories: [Database.Directory]) -> TagValueTable {
        Database.cached(self.directoryPaths) {
            var builder = TagValueTable.Builder()
            for directory in directories { _ = builder.append(directory.path.utf8) }
            return builder.build()
        }
    }

    func tags(_ type: TagType, songs: SongTable) -> TagIndex {
        Database.cached(self.tags, type) { TagIndex(type, songs: songs) }
    }

    func folded(_ type: TagType, songs: SongTable) -> FoldedTagIndex {
        Database.cached(self.folded, type) { FoldedTagIndex(self.tags(type, songs: songs), values: songs.values) }
    }

    func foldedValues(_ values: TagValueTable) -> FoldedValueTable {
        Database.cached(self.foldedValues) { FoldedValueTable(values) }
    }

    /// The tag types whose `TagIndex`es are built.
    var builtTags: Set<TagType> { Self.built(self.tags) }
    /// The tag types whose `FoldedTagIndex`es are built.
    var builtFolded: Set<TagType> { Self.built(self.folded) }
    var hasFoldedValues: Bool { self.foldedValues.withLock { $0 != nil } }
    var hasDirectoryPaths: Bool { self.directoryPaths.withLock { $0 != nil } }

    static func built<Value>(_ cache: borrowing Mutex<[Value?]>) -> Set<TagType> {
        cache.withLock { slots in Set(TagType.allCases.filter { slots[$0.rawValue] != nil }) }
    }
}

extension Database {
    /// `type`'s values of every song, numbered, and each value's songs (see `TagIndex`). Built once per snapshot,
    /// on first use.
    public func tagIndex(_ type: TagType) -> TagIndex {
        self.queryIndexes.tags(type, songs: self.songs)
    }

    /// Every directory's path, by directory index, in one table (its bytes one after the other): a listing of
    /// thousands of directories reads them in order, not a `String` of its own on the heap each (a cache miss
    /// each: half of `lsinfo` of a directory of 6,000 artists). Built once per snapshot, on first use.
    public func directoryPathTable() -> TagValueTable {
        self.queryIndexes.directoryPaths(self.directories)
    }

    /// `type`'s values of every song, folded (see `FoldedTagIndex`). Built once per snapshot, on first use.
    public func foldedIndex(_ type: TagType) -> FoldedTagIndex {
        self.queryIndexes.folded(type, songs: self.songs)
    }

    /// Every distinct tag value of the snapshot, folded (see `FoldedValueTable`). Built once per snapshot, on
    /// first use.
    func foldedValues() -> FoldedValueTable {
        self.queryIndexes.foldedValues(self.songs.values)
    }

    /// Whether each of `type`'s value lists (`songs(with:value:)`) holds songs with one and the same UTF-8 value:
    /// the lists are keyed by Swift strings, which merge canonically equivalent values (a Kelvin sign and a K),
    /// but when the library holds no two such values, there is nothing to merge. Worked out once per snapshot,
    /// on first use.
    public func hasByteExactPostings(_ type: TagType) -> Bool {
        let postings = self.postings(type)
        return postings.byteDistinctCount == postings.numbers.count
    }
}
