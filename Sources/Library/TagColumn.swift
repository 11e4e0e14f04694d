// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// One tag type across the whole database, with `mpd`'s fallbacks resolved (AlbumArtist → Artist…, or ""
/// when a song has neither): the distinct values in byte order, and for every song the numbers of its
/// values in that table. `list`, `list … group` and `count … group` work on these small integers instead
/// of strings, and since the numbers follow byte order, sorting them sorts the values.
///
/// Immutable once built; `Sendable`.
public struct TagColumn: Sendable {
    /// The distinct values, sorted by their UTF-8 bytes.
    public let values: [String]
    /// Song `song`'s values, in the order `mpd` visits them (duplicates kept, as `mpd` counts them).
    private let lists: SongValueLists
    /// Each value's number in `table` (the songs' value table), -1 for the "" of songs without one: the values'
    /// bytes in place, for replies written without a `String` per line.
    let tableNumbers: [Int32]
    let table: TagValueTable
    /// Whether every song has exactly one value (or the "" of none): song `song`'s value number is then the
    /// `song`-th of the ids (`withUnsafeIDs(_:)`).
    let isSingleValued: Bool

    /// Resolves `type` for every song.
    init(_ type: TagType, songs: SongTable) {
        // Each song's values as numbers of the songs' value table (by bytes), -1 for "".
        var perSong: [Int32] = []
        var offsets: [Int32] = [0]
        offsets.reserveCapacity(songs.count + 1)
        perSong.reserveCapacity(songs.count)
        let chain = [type] + type.fallbackTags
        for song in 0..<Int32(songs.count) {
            var found = false
            for candidate in chain where !found {
                found = songs.forEachValue(song, candidate) { perSong.append($0) }
            }
            if !found { perSong.append(-1) }
            offsets.append(Int32(perSong.count))
        }
        // The distinct values in byte order ("" first), and the column's number for each table number.
        var used = [Bool](repeating: false, count: songs.values.count)
        var usesEmpty = false
        for value in perSong { if value < 0 { usesEmpty = true } else { used[Int(value)] = true } }
        let sorted = used.indices.filter { used[$0] }.map { Int32($0) }.sorted { songs.values.precedes($0, $1) }
        var number = [Int32](repeating: 0, count: songs.values.count)
        // An empty value in the table (if any) sorts first and is the "" of songs without one.
        if usesEmpty, let empty = sorted.first, songs.values.withBytes(empty, \.isEmpty) { usesEmpty = false }
        let first: Int32 = usesEmpty ? 1 : 0
        for (position, value) in sorted.enumerated() { number[Int(value)] = Int32(position) + first }
        self.values = (usesEmpty ? [""] : []) + sorted.map { songs.values[$0] }
        self.tableNumbers = (usesEmpty ? [-1] : []) + sorted
        self.table = songs.values
        self.isSingleValued = perSong.count == songs.count
        self.lists = SongValueLists(offsets: offsets, ids: perSong.map { $0 < 0 ? 0 : number[Int($0)] })
    }

    /// The value numbers of song `song`.
    @inline(__always)
    public func ids(of song: Int32) -> ArraySlice<Int32> { self.lists.ids(of: song) }

    /// Calls `body` with the value numbers of every song in place (`SongValueLists.withUnsafeIDs(_:)`).
    func withUnsafeIDs<Result>(
        _ body: (_ offsets: UnsafeBufferPointer<Int32>, _ ids: UnsafeBufferPointer<Int32>) -> Result
    ) -> Result { self.lists.withUnsafeIDs(body) }
}

/// Value numbers of every song, one list per song: song `song`'s are `ids[offsets[song]..<offsets[song + 1]]`.
struct SongValueLists: Sendable {
    let offsets: [Int32]
    let ids: [Int32]

    /// The numbers of song `song`'s values.
    @inline(__always)
    func ids(of song: Int32) -> ArraySlice<Int32> {
        self.ids[Int(self.offsets[Int(song)])..<Int(self.offsets[Int(song) + 1])]
    }

    /// Calls `body` with the value numbers of every song without slicing per song: song `song`'s are
    /// `ids[offsets[song]..<offsets[song + 1]]`.
    func withUnsafeIDs<Result>(
        _ body: (_ offsets: UnsafeBufferPointer<Int32>, _ ids: UnsafeBufferPointer<Int32>) -> Result
    ) -> Result {
        self.offsets.withUnsafeBufferPointer { offsets in self.ids.withUnsafeBufferPointer { body(offsets, $0) } }
    }
}
