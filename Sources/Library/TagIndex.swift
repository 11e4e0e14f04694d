// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// One tag type's values for every song as numbers of its distinct values, and each distinct value's songs: a
/// filter on one tag compares its needle once with each distinct value, then reads the songs of the values that
/// match (or, for a few candidates, each candidate's numbers) instead of walking every song's tags.
///
/// The values are the song's own values of that type, in stored order, with no fallbacks: a filter resolves
/// fallbacks itself, and needs to know when a song has no value at all. Distinct means byte-distinct: the values
/// are numbered in the order songs first have them. Immutable once built; `Sendable`.
public struct TagIndex: Sendable {
    /// The numbers of each song's values.
    let lists: SongValueLists
    /// Each distinct value's number in the songs' `TagValueTable`.
    let tableNumbers: [Int32]
    /// `songs[songStarts[id]..<songStarts[id + 1]]` are the songs having value `id`, ascending (a song that
    /// repeats the value, as often as it does).
    let songStarts: [Int32]
    let songs: [Int32]

    /// Indexes `type`'s values of every song.
    init(_ type: TagType, songs table: SongTable) {
        var offsets: [Int32] = [0]
        offsets.reserveCapacity(table.count + 1)
        var ids: [Int32] = []
        var tableNumbers: [Int32] = []
        // The table numbers values by bytes: each gets its number the first time it is seen.
        var number = [Int32](repeating: -1, count: table.values.count)
        for song in 0..<Int32(table.count) {
            table.forEachValue(song, type) { value in
                var id = number[Int(value)]
                if id < 0 {
                    id = Int32(tableNumbers.count)
                    number[Int(value)] = id
                    tableNumbers.append(value)
                }
                ids.append(id)
            }
            offsets.append(Int32(ids.count))
        }
        // Each value's songs: counted, then placed (songs in ascending order, so each list is ascending).
        var starts = [Int32](repeating: 0, count: tableNumbers.count + 1)
        for id in ids { starts[Int(id) + 1] += 1 }
        for id in tableNumbers.indices { starts[id + 1] += starts[id] }
        var next = starts
        var songs = [Int32](repeating: 0, count: ids.count)
        for song in 0..<table.count {
            for position in Int(offsets[song])..<Int(offsets[song + 1]) {
                let id = Int(ids[position])
                songs[Int(next[id])] = Int32(song)
                next[id] += 1
            }
        }
        self.lists = SongValueLists(offsets: offsets, ids: ids)
        self.tableNumbers = tableNumbers
        self.songStarts = starts
        self.songs = songs
    }

    /// The number of distinct values.
    public var count: Int { self.tableNumbers.count }

    /// The numbers of song `song`'s values, in stored order (empty when it has none).
    @inline(__always)
    public func ids(of song: Int32) -> ArraySlice<Int32> { self.lists.ids(of: song) }

    /// Whether song `song` has a value.
    @inline(__always)
    func hasValue(_ song: Int) -> Bool { self.lists.offsets[song] != self.lists.offsets[song + 1] }

    /// Calls `body` with the value numbers of every song in place (`SongValueLists.withUnsafeIDs(_:)`).
    func withUnsafeIDs<Result>(
        _ body: (_ offsets: UnsafeBufferPointer<Int32>, _ ids: UnsafeBufferPointer<Int32>) -> Result
    ) -> Result { self.lists.withUnsafeIDs(body) }

    /// The songs having some value whose entry of `matches` (by value number) is set, as bits: song `song` is bit
    /// `song % 64` of word `song / 64`, over `songCount` songs.
    func songBits(where matches: [Bool], songCount: Int) -> [UInt64] {
        var bits = [UInt64](repeating: 0, count: (songCount + 63) / 64)
        bits.withUnsafeMutableBufferPointer { bits in
            self.songStarts.withUnsafeBufferPointer { starts in
                self.songs.withUnsafeBufferPointer { songs in
                    for (id, matches) in matches.enumerated() where matches {
                        for position in Int(starts[id])..<Int(starts[id + 1]) {
                            let song = Int(songs[position])
                            bits[song &>> 6] |= 1 &<< UInt64(song & 63)
                        }
                    }
                }
            }
        }
        return bits
    }
}
