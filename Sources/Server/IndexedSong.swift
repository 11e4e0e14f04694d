// SPDX-License-Identifier: GPL-3.0-or-later

import Library
import Model

/// A filter prepared for matching the songs of one snapshot: its top-level case-insensitive tag items answered
/// from the snapshot's `FoldedTagIndex`es (each distinct value compared with the needle once), the other items
/// matched on the songs in place.
struct PreparedFilter {
    /// The top-level case-insensitive tag items.
    private let folded: [FoldedTagTest]
    /// The other items.
    private let others: SongFilter
    private let tables: FoldedTables

    init(_ database: Database, filter: SongFilter) {
        var folded: [FoldedTagTest] = []
        var others: [FilterItem] = []
        for item in filter.items {
            if case .tag(let type, let matcher) = item, matcher.usesFoldedHaystack {
                folded.append(FoldedTagTest(database, type, matcher))
            } else {
                others.append(item)
            }
        }
        self.folded = folded
        self.others = SongFilter(others)
        self.tables = FoldedTables(database, filter: self.others)
    }

    /// Whether every song matches.
    var isEmpty: Bool { self.folded.isEmpty && self.others.isEmpty }

    /// Whether song `index` of `songs` (the snapshot's songs) matches.
    @inline(__always)
    func matches(_ index: Int32, in songs: UnsafeBufferPointer<Database.Song>) -> Bool {
        for test in self.folded where !test.matches(index) { return false }
        if self.others.isEmpty { return true }
        // A filter folding `any` reads values the tables do not hold: match a copy of the song.
        if self.tables.foldsAnyTag { return self.others.matches(songs[Int(index)]) }
        return self.others.matches(IndexedSong(song: songs.baseAddress! + Int(index), index: index, folded: self.tables))
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

/// A database song as a filter subject whose folded tag values come from the snapshot's `FoldedTagIndex`es,
/// so a case-insensitive filter folds only its needle.
///
/// Points into `Database.songs` (valid only inside `withUnsafeBufferPointer`) so that matching copies no song.
struct IndexedSong: FilterSubject {
    let song: UnsafePointer<Database.Song>
    let index: Int32
    /// The folded values the filter reads.
    unowned(unsafe) let folded: FoldedTables

    var uri: String { self.song.pointee.uri }

    var lastModified: Int64? { self.song.pointee.modificationTime }

    var audioFormat: AudioFormat? { self.song.pointee.info.audioFormat }

    var presentTags: TagMask { self.song.pointee.info.presentTags }

    func tagValues(_ type: TagType) -> SongInfo.TagValues { self.song.pointee.info.tagValues(type) }

    func foldedTagValues(_ type: TagType) -> LazyMapSequence<ArraySlice<Int32>, FoldedText> {
        guard let index = self.folded.indexes[type.rawValue] else {
            preconditionFailure("no folded index prepared for \(type.name)")
        }
        return index.values(of: self.index)
    }
}

/// The folded indexes a filter reads below its top level (inside `(!(… AND …))`): every tag type (with its
/// fallbacks) that a case-folding tag item compares.
final class FoldedTables {
    let indexes: [FoldedTagIndex?]
    /// Whether the filter folds `any` (every tag type: not worth indexing all of them for one query), so that
    /// `IndexedSong` cannot serve it.
    let foldsAnyTag: Bool

    /// The tables `filter` needs from `database` (none when it folds `any`).
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
        self.foldsAnyTag = !collect(filter.items)
        if !self.foldsAnyTag {
            for type in types { indexes[type.rawValue] = database.foldedIndex(type) }
        }
        self.indexes = indexes
    }
}
