// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// A filter prepared for matching the songs of one snapshot: its top-level case-insensitive tag items answered
/// from the snapshot's `FoldedTagIndex`es and (with `valueCache`) its top-level case-sensitive tag items from its
/// `TagIndex`es (each distinct value compared with the needle once), its top-level `any` items from one
/// comparison per distinct value of the snapshot, the other items matched on the songs in place.
///
/// With `queued`, songs are matched as `mpd` matches queued songs (`playlistfind`, `playlistsearch`): through its
/// light view of a queue song, which carries no audio format (so an `AudioFormat` item never matches) and whose
/// URI is the full one, even below a mount point.
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
    /// Whether the songs are matched as queued songs.
    private let queued: Bool

    /// - Parameter valueCache: whether case-sensitive tag items (`!=`, `contains`, `=~`…) remember their answer
    ///   for each distinct value of the tag: worth it when many songs are matched (the tag's `TagIndex` is built
    ///   once per snapshot, and an answer per value set up for each such item), not for a few candidates.
    /// - Parameter queued: whether songs are matched as queued songs (no audio format, the full URI).
    /// - Parameter valueSongsFrom: from how many candidates tag items read the songs of the values that match
    ///   rather than each candidate's values; by default an eighth of the library.
    init(
        _ database: Database, filter: SongFilter, valueCache: Bool = true, queued: Bool = false,
        valueSongsFrom: Int? = nil
    ) {
        let valueSongsFrom = valueSongsFrom ?? database.songs.count / 8
        var folded: [FoldedTagTest] = []
        var anyTag: [AnyTagTest] = []
        var tagValues: [TagValueTest] = []
        var formats: [AudioFormatMask] = []
        var modifiedSince: [Int64] = []
        var others: [FilterItem] = []
        for item in filter.items {
            if case .tag(let type, let matcher) = item, matcher.usesFoldedHaystack {
                folded.append(FoldedTagTest(database, type, matcher, valueSongsFrom: valueSongsFrom))
            } else if case .tag(let type, let matcher) = item, valueCache {
                tagValues.append(TagValueTest(database, type, matcher, valueSongsFrom: valueSongsFrom))
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
        self.tables = FoldedTables(database, filter: self.others, queued: queued)
        self.queued = queued
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
            for test in self.tagValues where !kept.isEmpty { kept = test.filter(kept) }
            for test in self.anyTag where !kept.isEmpty { kept = test.filter(kept, view) }
            // `FilterItem`'s rules, on the records in place: a song of unknown format (or rate) never matches;
            // times compare in nanoseconds with 64-bit wrap-around. A queued song has no format.
            for mask in self.formats where !kept.isEmpty {
                if self.queued {
                    kept = []
                    break
                }
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

/// Whether the answers of a tag and its fallbacks keep each song of `candidates` by `FilterItem.matchTag`'s rule
/// (any value of the tag decides; a song without it defers to its first fallback that it has; with none, an empty
/// operand matches), read from the songs of the values that match (`TagIndex.songBits(where:songCount:)`) rather
/// than from each candidate's values: the way for much of the library, where every distinct value is compared
/// anyway.
///
/// - Parameter chain: the tag and its fallbacks, in order: each index and whether each of its values matches.
private func keptByValueSongs(
    _ candidates: [Int32], _ chain: [(index: TagIndex, matches: [Bool])], negated: Bool, matchesAbsent: Bool,
    songCount: Int
) -> [Int32] {
    let levels = chain.map { $0.index.songBits(where: $0.matches, songCount: songCount) }
    let absent = matchesAbsent != negated
    if chain.count == 1 && absent == negated && candidates.count == songCount && isEverySongInOrder(candidates) {
        // Every song a candidate, in order, and a song without the tag kept as one whose values do not match: the
        // kept songs are the bits (negated: the bits not set), read a word of 64 songs at a time. (A queue's songs
        // may be as many as the library's in another order: `queuedSongsMatch` wants them in their own.)
        return songsOfBits(levels[0], flipped: negated, songCount: songCount)
    }
    if chain.count == 1 {
        // A tag without fallbacks (most): one pass in place over the bits and the songs' value lists.
        return levels[0].withUnsafeBufferPointer { bits in
            chain[0].index.withUnsafeIDs { offsets, _ in
                candidates.withUnsafeBufferPointer { candidates in
                    [Int32](unsafeUninitializedCapacity: candidates.count) { kept, count in
                        var written = 0
                        for song in candidates {
                            let index = Int(song)
                            let keep =
                                bits[index &>> 6] & (1 &<< UInt64(index & 63)) != 0
                                ? !negated : offsets[index] != offsets[index + 1] ? negated : absent
                            if keep {
                                kept[written] = song
                                written += 1
                            }
                        }
                        count = written
                    }
                }
            }
        }
    }
    return candidates.filter { song in
        let index = Int(song)
        for (level, (tags, _)) in chain.enumerated() {
            if levels[level][index &>> 6] & (1 &<< UInt64(index & 63)) != 0 { return !negated }
            if tags.hasValue(index) { return negated }
        }
        return absent
    }
}

/// The numbers of the songs whose bit is set in `bits` (with `flipped`, not set), below `songCount`, in order.
func songsOfBits(_ bits: [UInt64], flipped: Bool, songCount: Int) -> [Int32] {
    let flip: UInt64 = flipped ? ~0 : 0
    var count = 0
    for (index, word) in bits.enumerated() { count += wordBits(word ^ flip, index, songCount).nonzeroBitCount }
    return bits.withUnsafeBufferPointer { bits in
        [Int32](unsafeUninitializedCapacity: count) { songs, written in
            written = 0
            for index in bits.indices {
                var word = wordBits(bits[index] ^ flip, index, songCount)
                while word != 0 {
                    songs[written] = Int32(truncatingIfNeeded: index &* 64 &+ word.trailingZeroBitCount)
                    written &+= 1
                    word &= word &- 1
                }
            }
        }
    }
}

/// Whether `songs` are the numbers 0, 1, 2, … in order.
private func isEverySongInOrder(_ songs: [Int32]) -> Bool {
    songs.withUnsafeBufferPointer { songs in
        // No early exit: a loop the compiler can run several songs at a time.
        var differences: Int32 = 0
        for index in songs.indices { differences |= songs[index] ^ Int32(truncatingIfNeeded: index) }
        return differences == 0
    }
}

/// Word `index` of a song bitmap with the bits past song `songCount - 1` cleared.
@inline(__always)
private func wordBits(_ word: UInt64, _ index: Int, _ songCount: Int) -> UInt64 {
    let end = songCount &- index &* 64
    return end >= 64 ? word : word & ((1 &<< UInt64(end)) &- 1)
}

/// One case-sensitive tag comparison (`FilterItem.matchTag`'s rule: any value of the tag decides; a song without
/// it defers to its first fallback that it has; with none, an empty operand matches), with the needle compared
/// at most once with each distinct value of the tag (`TagIndex`) instead of with every song's values.
private struct TagValueTest {
    /// The tag and its fallbacks, in order.
    private let chain: [TagIndex]
    private let matcher: StringMatcher
    private let values: TagValueTable
    private let songCount: Int
    /// From how many candidates the songs of the matching values are read (see `PreparedFilter.init`).
    private let valueSongsFrom: Int

    init(_ database: Database, _ type: TagType, _ matcher: StringMatcher, valueSongsFrom: Int) {
        self.chain = ([type] + type.fallbackTags).map { database.tagIndex($0) }
        self.matcher = matcher
        self.values = database.songs.values
        self.songCount = database.songs.count
        self.valueSongsFrom = valueSongsFrom
    }

    /// The songs of `songs` that match, in order.
    func filter(_ songs: [Int32]) -> [Int32] {
        let (matcher, values) = (self.matcher, self.values)
        let (negated, matchesAbsent) = (matcher.negated, matcher.isEmpty)
        if songs.count >= self.valueSongsFrom {
            // Every distinct value compared once, then the songs of those that match.
            let chain = self.chain.map { index in
                (
                    index: index,
                    matches: index.tableNumbers.map { number in
                        values.withBytes(number) { matcher.matchesIgnoringNegation(bytes: $0) }
                    }
                )
            }
            return keptByValueSongs(
                songs, chain, negated: negated, matchesAbsent: matchesAbsent, songCount: self.songCount)
        }
        // A few candidates: each value compared the first time a candidate has it (0 not yet, 1 matches, 2 not).
        // The indexes are read in place: a copy per song would retain and release each of their arrays.
        let states = self.chain.map { UnsafeMutableBufferPointer<UInt8>.allocate(capacity: $0.count) }
        defer { for state in states { state.deallocate() } }
        for state in states { state.initialize(repeating: 0) }
        let tableNumbers = self.chain.map(\.tableNumbers)
        return withUnsafeLevels(self.chain.map { ($0, []) }[...]) { levels in
            states.withUnsafeBufferPointer { states in
                songs.filter { song in
                    for level in levels.indices {
                        let (start, end) = levels[level].positions(song)
                        if start == end { continue }
                        for position in start..<end {
                            let id = Int(levels[level].ids[position])
                            var state = states[level][id]
                            if state == 0 {
                                let matches = values.withBytes(tableNumbers[level][id]) {
                                    matcher.matchesIgnoringNegation(bytes: $0)
                                }
                                state = matches ? 1 : 2
                                states[level][id] = state
                            }
                            if state == 1 { return !negated }
                        }
                        return negated
                    }
                    return matchesAbsent != negated
                }
            }
        }
    }
}

/// One level of a tag's chain (the tag, then its fallbacks) read in place: each song's value numbers are
/// `ids[offsets[song]..<offsets[song + 1]]`, and `flags` what the caller keeps per value number (may be empty).
private struct ChainLevel {
    let offsets: UnsafeBufferPointer<Int32>
    let ids: UnsafeBufferPointer<Int32>
    let flags: UnsafeBufferPointer<Bool>

    /// Where song `song`'s value numbers start and end in `ids`.
    @inline(__always)
    func positions(_ song: Int32) -> (Int, Int) { (Int(self.offsets[Int(song)]), Int(self.offsets[Int(song) + 1])) }
}

/// Calls `body` with every level of `chain` in place (its index's value numbers and its flags), so that a filter
/// over many songs retains no array per song.
private func withUnsafeLevels<Result>(
    _ chain: ArraySlice<(index: TagIndex, flags: [Bool])>, _ levels: [ChainLevel] = [],
    _ body: (UnsafeBufferPointer<ChainLevel>) -> Result
) -> Result {
    guard let (index, flags) = chain.first else { return levels.withUnsafeBufferPointer(body) }
    return index.withUnsafeIDs { offsets, ids in
        flags.withUnsafeBufferPointer { flags in
            withUnsafeLevels(chain.dropFirst(), levels + [ChainLevel(offsets: offsets, ids: ids, flags: flags)], body)
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
    let songCount: Int
    /// From how many candidates the songs of the matching values are read (see `PreparedFilter.init`).
    let valueSongsFrom: Int

    init(_ database: Database, _ type: TagType, _ matcher: StringMatcher, valueSongsFrom: Int) {
        self.chain = ([type] + type.fallbackTags).map { type in
            let index = database.foldedIndex(type)
            if matcher.operation == .contains, var needle = matcher.foldedOperand {
                return (index, needle.withUTF8 { index.containing($0) })
            }
            return (index, index.map { matcher.matchesIgnoringNegation(foldedBytes: $0) })
        }
        self.negated = matcher.negated
        self.matchesAbsent = matcher.isEmpty
        self.songCount = database.songs.count
        self.valueSongsFrom = valueSongsFrom
    }

    /// The songs of `songs` that match, in order.
    func filter(_ songs: [Int32]) -> [Int32] {
        let (negated, matchesAbsent) = (self.negated, self.matchesAbsent)
        if songs.count >= self.valueSongsFrom {
            return keptByValueSongs(
                songs, self.chain.map { ($0.index.tags, $0.matches) }, negated: negated, matchesAbsent: matchesAbsent,
                songCount: self.songCount)
        }
        // Song by song (the tag, then its fallbacks), the indexes read in place.
        return withUnsafeLevels(self.chain.map { ($0.index.tags, $0.matches) }[...]) { levels in
            songs.filter { song in
                for level in levels {
                    let (start, end) = level.positions(song)
                    if start == end { continue }
                    for position in start..<end where level.flags[Int(level.ids[position])] { return !negated }
                    return negated
                }
                return matchesAbsent != negated
            }
        }
    }
}

/// One `any` comparison (`FilterItem.anyTag`: some value of some tag matches), with the needle compared at most
/// once with each distinct value of the snapshot instead of with every value of every song; a value is compared
/// the first time a song has it, so a narrow selection compares only its own values.
///
/// A case-sensitive `==` compares value numbers instead: the table numbers values by bytes, so one number at most
/// has the operand's bytes.
private struct AnyTagTest {
    /// The answers for each distinct value (none for a case-sensitive `==`).
    private let answers: ValueAnswers?
    private let negated: Bool
    /// For a case-sensitive `==`: the number of the value with the operand's bytes, -1 when there is none.
    private let equalNumber: Int32?

    init(_ database: Database, _ matcher: StringMatcher) {
        self.negated = matcher.negated
        if matcher.operation == .equals && !matcher.usesFoldedHaystack {
            self.equalNumber = database.songs.values.number(of: matcher.value) ?? -1
            self.answers = nil
        } else {
            self.equalNumber = nil
            self.answers = ValueAnswers(database, matcher)
        }
    }

    /// The songs of `songs` that match, in order.
    func filter(_ songs: [Int32], _ view: TagView) -> [Int32] {
        let negated = self.negated
        guard let answers = self.answers else {
            let number = self.equalNumber ?? -1
            guard number >= 0 else { return negated ? songs : [] }
            return songs.filter { song in
                for position in view.positions(song) where view.values[position] == number { return !negated }
                return negated
            }
        }
        return songs.filter { song in
            for position in view.positions(song) where answers.matches(view.values[position]) { return !negated }
            return negated
        }
    }
}
