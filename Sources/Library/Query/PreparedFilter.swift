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
    /// The top-level `AudioFormat` items.
    private let formats: [AudioFormatMask]
    /// The top-level `modified-since` items (seconds since the epoch).
    private let modifiedSince: [Int64]
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
        var formats: [AudioFormatMask] = []
        var modifiedSince: [Int64] = []
        var others: [FilterItem] = []
        for item in filter.items {
            if case .tag(let type, let matcher) = item, matcher.usesFoldedHaystack {
                folded.append(FoldedTagTest(database, type, matcher))
            } else if case .tag(let type, let matcher) = item, valueCache {
                tagValues.append(TagValueTest(database, type, matcher))
            } else if case .anyTag(let matcher) = item {
                anyTag.append(AnyTagTest(database, matcher))
            } else if case .audioFormat(let mask) = item {
                formats.append(mask)
            } else if case .modifiedSince(let seconds) = item {
                modifiedSince.append(seconds)
            } else {
                others.append(item)
            }
        }
        self.folded = folded
        self.anyTag = anyTag
        self.tagValues = tagValues
        self.formats = formats
        self.modifiedSince = modifiedSince
        self.others = SongFilter(others)
        self.tables = FoldedTables(database, filter: self.others)
    }

    /// Whether every song matches.
    var isEmpty: Bool {
        self.folded.isEmpty && self.anyTag.isEmpty && self.tagValues.isEmpty && self.formats.isEmpty
            && self.modifiedSince.isEmpty && self.others.isEmpty
    }

    /// Whether song `index` of `songs` (the snapshot's songs) matches.
    func matches(_ index: Int32, in songs: UnsafePointer<SongTable>) -> Bool {
        !self.filter([index], in: songs).isEmpty
    }

    /// The songs of `candidates` that match, in the same order: each item in turn keeps the songs it matches, in
    /// a loop over the columns in place (the case-sensitive and `any` items first: one look-up per value).
    func filter(_ candidates: [Int32], in songs: UnsafePointer<SongTable>) -> [Int32] {
        var kept = candidates
        songs.pointee.withTagView { view in
            for test in self.tagValues where !kept.isEmpty { kept = test.filter(kept, view) }
            for test in self.anyTag where !kept.isEmpty { kept = test.filter(kept, view) }
            // `FilterItem`'s rules, on the records in place: a song of unknown format (or rate) never matches;
            // times compare in nanoseconds with 64-bit wrap-around.
            for mask in self.formats where !kept.isEmpty {
                kept = kept.filter { song in
                    let record = view.records[Int(song)]
                    guard record.sampleRate > 1 else { return false }
                    return mask.matches(
                        AudioFormat(
                            sampleRate: Int(record.sampleRate - 1), sampleFormat: record.sampleFormat,
                            channels: Int(record.channels)))
                }
            }
            for seconds in self.modifiedSince where !kept.isEmpty {
                let since = seconds &* 1_000_000_000
                kept = kept.filter { view.records[Int($0)].modificationTime &* 1_000_000_000 >= since }
            }
        }
        for test in self.folded where !kept.isEmpty { kept = test.filter(kept) }
        if self.others.isEmpty || kept.isEmpty { return kept }
        let (others, tables) = (self.others, self.tables)
        return kept.filter { others.matches(IndexedSong(songs: songs, index: $0, folded: tables)) }
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
    /// The tag and its fallbacks, in order, as raw `TagType` values (at most three: AlbumArtistSort,
    /// AlbumArtist, Artist); `TagValueTest.none` for none.
    private let chain: (UInt8, UInt8, UInt8)
    private let answers: ValueAnswers
    private let negated: Bool
    private let matchesAbsent: Bool

    static let none = UInt8.max

    init(_ database: Database, _ type: TagType, _ matcher: StringMatcher) {
        let raw = ([type] + type.fallbackTags).map { UInt8($0.rawValue) } + [Self.none, Self.none]
        precondition(raw.count <= 5, "a tag has at most two fallbacks")
        self.chain = (raw[0], raw[1], raw[2])
        self.answers = ValueAnswers(database, matcher)
        self.negated = matcher.negated
        self.matchesAbsent = matcher.isEmpty
    }

    /// The songs of `songs` that match, in order.
    func filter(_ songs: [Int32], _ view: TagView) -> [Int32] {
        let (answers, negated, matchesAbsent) = (self.answers, self.negated, self.matchesAbsent)
        let (first, second, third) = self.chain
        return songs.filter { song in
            let positions = view.positions(song)
            // Whether some value of `type` matches; `nil` when the song has none.
            func decide(_ type: UInt8) -> Bool? {
                var present = false
                for position in positions where view.types[position] == type {
                    if answers.matches(view.values[position]) { return true }
                    present = true
                }
                return present ? false : nil
            }
            if let found = decide(first) { return found != negated }
            if second != Self.none, let found = decide(second) { return found != negated }
            if third != Self.none, let found = decide(third) { return found != negated }
            return matchesAbsent != negated
        }
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
            if matcher.operation == .contains, var needle = matcher.foldedOperand {
                return (index, needle.withUTF8 { index.containing($0) })
            }
            return (index, index.map { matcher.matchesIgnoringNegation(foldedBytes: $0) })
        }
        self.negated = matcher.negated
        self.matchesAbsent = matcher.isEmpty
    }

    /// The songs of `songs` that match, in order.
    func filter(_ songs: [Int32]) -> [Int32] {
        let (negated, matchesAbsent) = (self.negated, self.matchesAbsent)
        guard self.chain.count == 1 else {
            // With fallbacks: song by song.
            return songs.filter { song in
                for (index, matches) in self.chain {
                    let ids = index.ids(of: song)
                    if ids.isEmpty { continue }
                    for id in ids where matches[Int(id)] { return !negated }
                    return negated
                }
                return matchesAbsent != negated
            }
        }
        let (index, matches) = self.chain[0]
        return index.withUnsafeIDs { offsets, ids in
            matches.withUnsafeBufferPointer { matches in
                songs.filter { song in
                    let (start, end) = (Int(offsets[Int(song)]), Int(offsets[Int(song) + 1]))
                    if start == end { return matchesAbsent != negated }
                    for position in start..<end where matches[Int(ids[position])] { return !negated }
                    return negated
                }
            }
        }
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

    /// The songs of `songs` that match, in order.
    func filter(_ songs: [Int32], _ view: TagView) -> [Int32] {
        let (answers, negated) = (self.answers, self.negated)
        return songs.filter { song in
            for position in view.positions(song) where answers.matches(view.values[position]) { return !negated }
            return negated
        }
    }
}
