// SPDX-License-Identifier: GPL-3.0-or-later

import Library
import Model

/// A filter prepared for matching the songs of one snapshot: its top-level case-insensitive tag items answered
/// from the snapshot's `FoldedTagIndex`es (each distinct value compared with the needle once), its top-level
/// `any` items from one comparison per distinct value of the snapshot, the other items matched on the songs in
/// place.
struct PreparedFilter {
    /// The top-level case-insensitive tag items.
    private let folded: [FoldedTagTest]
    /// The top-level `any` items.
    private let anyTag: [AnyTagTest]
    /// The other items.
    private let others: SongFilter
    private let tables: FoldedTables

    init(_ database: Database, filter: SongFilter) {
        var folded: [FoldedTagTest] = []
        var anyTag: [AnyTagTest] = []
        var others: [FilterItem] = []
        for item in filter.items {
            if case .tag(let type, let matcher) = item, matcher.usesFoldedHaystack {
                folded.append(FoldedTagTest(database, type, matcher))
            } else if case .anyTag(let matcher) = item {
                anyTag.append(AnyTagTest(database.songs.values, matcher))
            } else {
                others.append(item)
            }
        }
        self.folded = folded
        self.anyTag = anyTag
        self.others = SongFilter(others)
        self.tables = FoldedTables(database, filter: self.others)
    }

    /// Whether every song matches.
    var isEmpty: Bool { self.folded.isEmpty && self.anyTag.isEmpty && self.others.isEmpty }

    /// Whether song `index` of `songs` (the snapshot's songs) matches.
    @inline(__always)
    func matches(_ index: Int32, in songs: UnsafePointer<SongTable>) -> Bool {
        for test in self.folded where !test.matches(index) { return false }
        for test in self.anyTag where !test.matches(index, in: songs) { return false }
        if self.others.isEmpty { return true }
        return self.others.matches(IndexedSong(songs: songs, index: index, folded: self.tables))
    }
}

/// One case-insensitive tag comparison answered from folded indexes: `FilterItem.matchTag`'s rule (any value of
/// the tag decides; a song without it defers to its first fallback that it has; with none, an empty operand
/// matches), with the needle compared once with each distinct folded value.
private struct FoldedTagTest {
    /// The tag and its fallbacks, in order: each index and whether each of its distinct values matches.
    let chain: [(index: FoldedTagIndex, matches: [Bool])]
    let negated: Bool
    let matchesAbsent: Bool

    init(_ database: Database, _ type: TagType, _ matcher: StringMatcher) {
        self.chain = ([type] + type.fallbackTags).map { type in
            let index = database.foldedIndex(type)
            return (index, index.map { matcher.matchesIgnoringNegation(foldedBytes: $0) })
        }
        self.negated = matcher.negated
        self.matchesAbsent = matcher.isEmpty
    }

    @inline(__always)
    func matches(_ song: Int32) -> Bool {
        for (index, matches) in self.chain {
            let ids = index.ids(of: song)
            if ids.isEmpty { continue }
            for id in ids where matches[Int(id)] { return !self.negated }
            return self.negated
        }
        return self.matchesAbsent != self.negated
    }
}

/// One `any` comparison (`FilterItem.anyTag`: some value of some tag matches), with the needle compared at most
/// once with each distinct value of the snapshot instead of with every value of every song; a value is compared
/// the first time a song has it, so a narrow selection compares only its own values.
///
/// One per query, used on one thread.
private final class AnyTagTest {
    private let matcher: StringMatcher
    private let values: TagValueTable
    /// For each value of the songs' value table: 0 not compared yet, 1 matches (ignoring negation), 2 does not.
    /// A buffer of its own, not an array property: no exclusivity check per song.
    private let states: UnsafeMutableBufferPointer<UInt8>

    init(_ values: TagValueTable, _ matcher: StringMatcher) {
        self.matcher = matcher
        self.values = values
        self.states = .allocate(capacity: values.count)
        self.states.initialize(repeating: 0)
    }

    deinit { self.states.deallocate() }

    @inline(__always)
    func matches(_ song: Int32, in songs: UnsafePointer<SongTable>) -> Bool {
        for position in songs.pointee.tagPositions(song) where self.valueMatches(songs.pointee.valueNumber(at: position)) {
            return !self.matcher.negated
        }
        return self.matcher.negated
    }

    @inline(__always)
    private func valueMatches(_ number: Int32) -> Bool {
        switch self.states[Int(number)] {
        case 1: return true
        case 2: return false
        default: return self.compare(number)
        }
    }

    private func compare(_ number: Int32) -> Bool {
        let value = self.values[number]
        let matches =
            self.matcher.usesFoldedHaystack
            ? self.matcher.matchesIgnoringNegation(folded: FoldedText(folding: value))
            : self.matcher.matchesIgnoringNegation(value)
        self.states[Int(number)] = matches ? 1 : 2
        return matches
    }
}

/// A database song as a filter subject whose folded tag values come from the snapshot's `FoldedTagIndex`es,
/// so a case-insensitive filter folds only its needle.
///
/// Points to the snapshot's `SongTable` (valid only inside `withUnsafePointer`) so that matching copies no song
/// and no table: values are read from its columns as the filter asks for them.
struct IndexedSong: FilterSubject {
    let songs: UnsafePointer<SongTable>
    let index: Int32
    /// The folded values the filter reads.
    unowned(unsafe) let folded: FoldedTables

    var uri: String { self.songs.pointee.uri(self.index) }

    var lastModified: Int64? { self.songs.pointee.modificationTime(self.index) }

    var audioFormat: AudioFormat? { self.songs.pointee.audioFormat(self.index) }

    var presentTags: TagMask { self.songs.pointee.presentTags(self.index) }

    func tagValues(_ type: TagType) -> LazyMapSequence<LazyFilterSequence<Range<Int>>, String> {
        let songs = self.songs
        return songs.pointee.tagPositions(self.index).lazy.filter { songs.pointee.tagType(at: $0) == type }.map {
            songs.pointee.values[songs.pointee.valueNumber(at: $0)]
        }
    }

    func foldedTagValues(_ type: TagType) -> FoldedValues {
        if let index = self.folded.indexes[type.rawValue] {
            return FoldedValues(source: .index(index, index.ids(of: self.index)))
        }
        return FoldedValues(source: .table(self.songs, self.songs.pointee.tagPositions(self.index), type))
    }
}

/// A song's folded values of one tag type: from a `FoldedTagIndex` when the filter prepared one, otherwise
/// folded from the table as they are read (a filter folding `any`, which reads every tag type).
struct FoldedValues: Sequence, IteratorProtocol {
    enum Source {
        /// The index and the numbers of the song's values in it.
        case index(FoldedTagIndex, ArraySlice<Int32>)
        /// The song's tag positions in the table, and the type wanted.
        case table(UnsafePointer<SongTable>, Range<Int>, TagType)
    }

    var source: Source

    mutating func next() -> FoldedText? {
        switch self.source {
        case .index(let index, var ids):
            guard let id = ids.popFirst() else { return nil }
            self.source = .index(index, ids)
            return index.value(id)
        case .table(let songs, var positions, let type):
            while let position = positions.popFirst() {
                guard songs.pointee.tagType(at: position) == type else { continue }
                self.source = .table(songs, positions, type)
                return FoldedText(folding: songs.pointee.values[songs.pointee.valueNumber(at: position)])
            }
            self.source = .table(songs, positions, type)
            return nil
        }
    }
}

/// The folded indexes a filter reads below its top level (inside `(!(… AND …))`): every tag type (with its
/// fallbacks) that a case-folding tag item compares.
final class FoldedTables {
    let indexes: [FoldedTagIndex?]
    /// The tables `filter` needs from `database` (none when it folds `any`, which reads every tag type: not worth
    /// indexing all of them for one query; `IndexedSong` folds them as it reads them).
    init(_ database: Database, filter: SongFilter) {
        var types = Set<TagType>()
        func collect(_ items: [FilterItem]) -> Bool {
            for item in items {
                switch item {
                case .tag(let type, let matcher) where matcher.usesFoldedHaystack:
                    types.insert(type)
                    types.formUnion(type.fallbackTags)
                case .anyTag(let matcher) where matcher.usesFoldedHaystack: return false
                case .not(let inner): if !collect([inner]) { return false }
                case .and(let inner): if !collect(inner) { return false }
                default: break
                }
            }
            return true
        }
        var indexes = [FoldedTagIndex?](repeating: nil, count: TagType.allCases.count)
        if collect(filter.items) {
            for type in types { indexes[type.rawValue] = database.foldedIndex(type) }
        }
        self.indexes = indexes
    }
}
