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
        case .tag(let type):
            let table = self.songs
            let keyed = songs.map { song in (song, SongInfo.sortValue(type) { table.firstValue(song, $0) }) }
            let numeric = type == .track || type == .disc
            return keyed.enumerated().sorted { a, b in
                var (x, y) = (a.element.1, b.element.1)
                if descending { swap(&x, &y) }
                let less: Bool
                let greater: Bool
                if numeric {
                    let (p, q) = (Database.leadingInteger(x), Database.leadingInteger(y))
                    (less, greater) = (p < q, q < p)
                } else {
                    (less, greater) = (
                        x.utf8.lexicographicallyPrecedes(y.utf8), y.utf8.lexicographicallyPrecedes(x.utf8)
                    )
                }
                if less { return true }
                if greater { return false }
                return a.offset < b.offset
            }.map(\.element.0)
        }
    }
}
