// SPDX-License-Identifier: GPL-3.0-or-later

import Model

extension Database {
    /// `mpd`'s stable sort of a selection: by `Last-Modified`, by Track/Disc as `strtol` numbers, or by the tag's
    /// sort value (with fallbacks) compared byte-wise; descending swaps the operands, so equal keys keep their
    /// order either way.
    func sorted(_ songs: [Int32], by order: SortOrder) -> [Int32] {
        let descending = order.descending
        switch order.key {
        case .lastModified:
            let keyed = songs.map { ($0, self.songs.modificationTime($0)) }
            return keyed.enumerated().sorted { a, b in
                let (x, y) = (a.element.1, b.element.1)
                if x != y { return descending ? x > y : x < y }
                return a.offset < b.offset
            }.map(\.element.0)
        case .tag(let type) where type.sortsByColumn:
            return self.sortedByColumn(songs, type, descending: descending)
        case .tag(let type):
            let table = self.songs
            let keyed = songs.map { song in (song, SongInfo.sortValue(type) { table.firstValue(song, $0) }) }
            return keyed.enumerated().sorted { a, b in
                var (x, y) = (a.element.1, b.element.1)
                if descending { swap(&x, &y) }
                if x.utf8.lexicographicallyPrecedes(y.utf8) { return true }
                if y.utf8.lexicographicallyPrecedes(x.utf8) { return false }
                return a.offset < b.offset
            }.map(\.element.0)
        }
    }

    /// `sorted(_:by:)` for a tag whose sort value is the first value of its `TagColumn` (the tag's fallbacks for
    /// filters are its fallbacks for sorting, and "" stands for none): each song's key is a small integer, the
    /// value's number in the column (which follows byte order), or for Track and Disc the rank of the value's
    /// `strtol` number among the column's, so the sort compares integers, not strings.
    private func sortedByColumn(_ songs: [Int32], _ type: TagType, descending: Bool) -> [Int32] {
        let column = self.column(type)
        // Each column value's rank: equal ranks are equal keys.
        var ranks = [UInt32](unsafeUninitializedCapacity: column.values.count) { buffer, count in
            for id in 0..<column.values.count { buffer[id] = UInt32(id) }
            count = column.values.count
        }
        if type == .track || type == .disc {
            let numbers = column.values.map { Database.leadingInteger($0) }
            var rank: UInt32 = 0
            var previous: Int?
            for id in ranks.indices.sorted(by: { numbers[$0] < numbers[$1] }) {
                if let previous, previous != numbers[id] { rank += 1 }
                previous = numbers[id]
                ranks[id] = rank
            }
        }
        let highest = UInt32(max(column.values.count - 1, 0))
        // The rank in the high half and the position in the selection in the low half: unique keys, whose order
        // is the stable sort's.
        var keys: [UInt64] = []
        keys.reserveCapacity(songs.count)
        column.withUnsafeIDs { offsets, ids in
            for (position, song) in songs.enumerated() {
                let rank = ranks[Int(ids[Int(offsets[Int(song)])])]
                keys.append(UInt64(descending ? highest - rank : rank) << 32 | UInt64(position))
            }
        }
        keys.sort()
        return keys.map { songs[Int($0 & 0xFFFF_FFFF)] }
    }
}

extension TagType {
    /// Whether sorting by this tag is sorting by the first value of its `TagColumn`: the sort's fallbacks
    /// (`SongInfo.sortValue(_:firstValue:)`) are the filters' (`fallbackTags`) for every tag but
    /// MUSICBRAINZ_ALBUMARTISTID, which sorts by MUSICBRAINZ_ARTISTID when it has none.
    fileprivate var sortsByColumn: Bool { self != .musicBrainzAlbumArtistID }
}
