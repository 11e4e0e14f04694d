// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// What `find`, `search`, `findadd`, `searchadd` and `searchaddpl` select (`mpd`'s `DatabaseSelection`): the songs
/// a filter matches, in walk order, then stably sorted when a sort is given, then cut to a window.
///
/// `Database.select(_:)` answers it with song numbers of the snapshot; `count` and `list` take a plain filter.
public struct SongQuery: Sendable {
    /// The filter; empty selects every song.
    public var filter: SongFilter
    /// The order, or `nil` for walk order.
    public var sort: SortOrder?
    /// The positions of the (sorted) results to keep.
    public var window: WindowRange

    /// Creates a query.
    public init(filter: SongFilter = SongFilter(), sort: SortOrder? = nil, window: WindowRange = .all) {
        self.filter = filter
        self.sort = sort
        self.window = window
    }
}

/// Why a query has no answer.
public enum QueryError: Error, Sendable, Hashable {
    /// The filter's `base` is neither a directory nor a song of the database (`mpd`'s `No such directory`).
    case noSuchDirectory
}

/// The songs and total play time that `count` reports for a selection or for one group of it.
public struct SongCount: Sendable, Hashable {
    /// The number of songs.
    public var songs: Int
    /// The sum of their durations, in milliseconds (songs of unknown duration add nothing).
    public var milliseconds: UInt64

    /// Creates a count.
    public init(songs: Int = 0, milliseconds: UInt64 = 0) {
        self.songs = songs
        self.milliseconds = milliseconds
    }
}

/// The answer to `list TYPE [group G]…`: the distinct value tuples of the selected songs as `mpd`'s nested maps
/// print them, outermost group first, each level a line when it or an outer level changed.
///
/// Each line is its level and its value's number in the snapshot's value table: the bytes are read in place
/// (`forEachLine(_:)`), so a reply of a hundred thousand lines makes no `String` for them.
public struct TagList: Sendable {
    /// The levels, outermost first: the groups in the order `mpd` nests them, the listed tag last.
    public let types: [TagType]
    /// Each line's level (an index of `types`), in printing order.
    let depths: [UInt8]
    /// Each line's value: its number in `table`, -1 for "".
    let numbers: [Int32]
    let table: TagValueTable

    /// The number of lines.
    public var count: Int { self.numbers.count }

    /// Each line's level (an index of `types`) and value, in printing order, as strings.
    public var lines: [(depth: Int, value: String)] {
        zip(self.depths, self.numbers).map { (Int($0), $1 < 0 ? "" : self.table[$1]) }
    }

    /// Calls `body` with each line's level (an index of `types`) and value's UTF-8 bytes, in printing order.
    public func forEachLine(_ body: (_ depth: Int, _ value: UnsafeBufferPointer<UInt8>) -> Void) {
        self.table.bytes.withUnsafeBufferPointer { bytes in
            self.table.offsets.withUnsafeBufferPointer { offsets in
                for (depth, number) in zip(self.depths, self.numbers) {
                    guard number >= 0 else {
                        body(Int(depth), UnsafeBufferPointer(start: nil, count: 0))
                        continue
                    }
                    let start = Int(offsets[Int(number)])
                    let end = Int(offsets[Int(number) + 1])
                    body(Int(depth), UnsafeBufferPointer(rebasing: bytes[start..<end]))
                }
            }
        }
    }
}

extension Database {
    /// The songs `query` selects, as song numbers of this snapshot: walk order (ascending numbers within a
    /// directory's subtree), then sorted and windowed as the query says.
    ///
    /// Any thread may call it: the snapshot is immutable.
    ///
    /// - Throws: `QueryError.noSuchDirectory` for a `base` that is neither a directory nor a song.
    public func select(_ query: SongQuery) throws(QueryError) -> [Int32] {
        var songs = try self.select(query.filter)
        if let sort = query.sort { songs = self.sorted(songs, by: sort) }
        let window = query.window.indices(count: songs.count)
        if window.count == songs.count { return songs }
        return Array(songs[window])
    }

    /// What `count FILTER` reports: the selected songs and their total play time.
    ///
    /// - Throws: `QueryError.noSuchDirectory` for a `base` that is neither a directory nor a song.
    public func count(_ filter: SongFilter) throws(QueryError) -> SongCount {
        let songs = try self.select(filter)
        var total = SongCount(songs: songs.count)
        total.milliseconds = self.songs.playedMilliseconds(of: songs)
        return total
    }

    /// What `count FILTER group TYPE` reports: for each value of `type` (with `mpd`'s fallbacks, "" for none)
    /// that a selected song has, in byte order, the songs having it and their play time.
    ///
    /// - Throws: `QueryError.noSuchDirectory` for a `base` that is neither a directory nor a song.
    public func count(_ filter: SongFilter, groupedBy type: TagType) throws(QueryError) -> [(
        value: String, count: SongCount
    )] {
        self.groupCounts(try self.select(filter), by: type)
    }

    /// What `list TYPE FILTER group G1 group G2…` reports: the distinct values of `type` among the selected
    /// songs, nested under the distinct values of the groups (`groups` outermost first: the last `group` of the
    /// command is the outermost level), each tag with `mpd`'s fallbacks.
    ///
    /// - Throws: `QueryError.noSuchDirectory` for a `base` that is neither a directory nor a song.
    public func list(_ type: TagType, groupedBy groups: [TagType] = [], filter: SongFilter) throws(QueryError)
        -> TagList
    {
        self.tagList(try self.select(filter), types: groups + [type])
    }
}
