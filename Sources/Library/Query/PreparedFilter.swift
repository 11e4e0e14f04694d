// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// A filter prepared for matching the songs of one snapshot: its top-level case-insensitive tag items answered
/// from the snapshot's `FoldedTagIndex`es (each distinct value compared with the needle once), its top-level
/// `any` items and (with `valueCache`) its top-level case-sensitive tag items from one comparison per distinct
/// value of the snapshot, the other items matched on the songs in place.
struct PreparedFilter {
    /// The top-level case-insensitive tag items.
    private let folded: [FoldedTagTest]
    /// The top-level `any` items.
    private let anyTag: [AnyTagTest]
    /// The top-level case-sensitive tag items (with `valueCache`).
    private let tagValues: [TagValueTest]
    /// The other items.
    private let others: SongFilter
    private let tables: FoldedTables

    /// - Parameter valueCache: whether case-sensitive tag items (`!=`, `contains`, `=~`…) remember their answer
    ///   for each distinct value: worth it when many songs are matched (a buffer as long as the snapshot's value
    ///   table is set up for each such item), not for a few candidates.
    init(_ database: Database, filter: SongFilter, valueCache: Bool = true) {
        var folded: [FoldedTagTest] = []
        var anyTag: [AnyTagTest] = []
        var tagValues: [TagValueTest] = []
        var others: [FilterItem] = []
        for item in filter.items {
            if case .tag(let type, let matcher) = item, matcher.usesFoldedHaystack {
                folded.append(FoldedTagTest(database, type, matcher))
            } else if case .tag(let type, let matcher) = item, valueCache {
                tagValues.append(TagValueTest(database, type, matcher))
            } else if case .anyTag(let matcher) = item {
                anyTag.append(AnyTagTest(database, matcher))
            } else {
                others.append(item)
            }
        }
        self.folded = folded
        self.anyTag = anyTag
        self.tagValues = tagValues
        self.others = SongFilter(others)
        self.tables = FoldedTables(database, filter: self.others)
    }

    /// Whether every song matches.
    var isEmpty: Bool {
        self.folded.isEmpty && self.anyTag.isEmpty && self.tagValues.isEmpty && self.others.isEmpty
    }

    /// Whether song `index` of `songs` (the snapshot's songs) matches.
    @inline(__always)
    func matches(_ index: Int32, in songs: UnsafePointer<SongTable>) -> Bool {
        for test in self.folded where !test.matches(index) { return false }
        for test in self.tagValues where !test.matches(index, in: songs) { return false }
        for test in self.anyTag where !test.matches(index, in: songs) { return false }
        if self.others.isEmpty { return true }
        return self.others.matches(IndexedSong(songs: songs, index: index, folded: self.tables))
    }
}

/// The answers of one matcher for the values of a snapshot's value table, each worked out the first time a song
/// has that value: 0 not compared yet, 1 matches (ignoring negation), 2 does not. A buffer of its own, not an
/// array property: no exclusivity check per song.
///
/// One per query, used on one thread.
private final class ValueAnswers {
    private let matcher: StringMatcher
    private let values: TagValueTable
    /// The values folded, for a case-folding matcher.
    private let folded: FoldedValueTable?
    private let states: UnsafeMutableBufferPointer<UInt8>

    init(_ database: Database, _ matcher: StringMatcher) {
        self.matcher = matcher
        self.values = database.songs.values
        self.folded = matcher.usesFoldedHaystack ? database.foldedValues() : nil
        let values = self.values
        self.states = .allocate(capacity: values.count)
        self.states.initialize(repeating: 0)
    }

    deinit { self.states.deallocate() }

    /// Whether value `number` matches, ignoring negation.
    @inline(__always)
    func matches(_ number: Int32) -> Bool {
        switch self.states[Int(number)] {
        case 1: return true
        case 2: return false
        default: return self.compare(number)
        }
    }

    private func compare(_ number: Int32) -> Bool {
        // The value's bytes (folded once per snapshot for a case-folding matcher) are compared in place: no
        // `String` for each distinct value.
        let matches =
            if let folded = self.folded {
                folded.withFoldedBytes(number) { self.matcher.matchesIgnoringNegation(foldedBytes: $0) }
            } else {
                self.values.withBytes(number) { self.matcher.matchesIgnoringNegation(bytes: $0) }
            }
        self.states[Int(number)] = matches ? 1 : 2
        return matches
    }
}

/// One case-sensitive tag comparison (`FilterItem.matchTag`'s rule: any value of the tag decides; a song without
/// it defers to its first fallback that it has; with none, an empty operand matches), with the needle compared
/// at most once with each distinct value (`ValueAnswers`) instead of with every song's values.
private struct TagValueTest {
    /// The tag and its fallbacks, in order.
    private let chain: [TagType]
    private let answers: ValueAnswers
    private let negated: Bool
    private let matchesAbsent: Bool

    init(_ database: Database, _ type: TagType, _ matcher: StringMatcher) {
        self.chain = [type] + type.fallbackTags
        self.answers = ValueAnswers(database, matcher)
        self.negated = matcher.negated
        self.matchesAbsent = matcher.isEmpty
    }

    @inline(__always)
    func matches(_ song: Int32, in songs: UnsafePointer<SongTable>) -> Bool {
        let positions = songs.pointee.tagPositions(song)
        for type in self.chain {
            var present = false
            for position in positions where songs.pointee.tagType(at: position) == type {
                if self.answers.matches(songs.pointee.valueNumber(at: position)) { return !self.negated }
                present = true
            }
            if present { return self.negated }
        }
        return self.matchesAbsent != self.negated
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
private struct AnyTagTest {
    private let answers: ValueAnswers
    private let negated: Bool

    init(_ database: Database, _ matcher: StringMatcher) {
        self.answers = ValueAnswers(database, matcher)
        self.negated = matcher.negated
    }

    @inline(__always)
    func matches(_ song: Int32, in songs: UnsafePointer<SongTable>) -> Bool {
        for position in songs.pointee.tagPositions(song)
        where self.answers.matches(songs.pointee.valueNumber(at: position)) {
            return !self.negated
        }
        return self.negated
    }
}
