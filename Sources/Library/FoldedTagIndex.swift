// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Synchronization

/// One tag type's values for every song, folded once with `FilterCaseFold` (as `FoldedText`), so that a
/// case-insensitive filter (`search`, `count` and `list` with `contains`…) folds only its needle instead of
/// every haystack of every song.
///
/// The values are the song's own values of that type, in stored order, with no fallbacks: a filter resolves
/// fallbacks itself, and needs to know when a song has no value at all. Byte-identical values are folded once
/// and share storage. Immutable once built; `Sendable`.
public struct FoldedTagIndex: Sendable {
    /// `values[offsets[song]..<offsets[song + 1]]` are song `song`'s folded values.
    private let offsets: [Int32]
    private let values: [FoldedText]

    /// Folds `type`'s values of every song.
    init(_ type: TagType, songs: [Database.Song]) {
        var offsets: [Int32] = [0]
        offsets.reserveCapacity(songs.count + 1)
        var values: [FoldedText] = []
        var folded: [ByteString: FoldedText] = [:]
        for song in songs {
            for item in song.info.tags where item.type == type {
                let key = ByteString(item.value)
                if let known = folded[key] {
                    values.append(known)
                } else {
                    let text = FoldedText(folding: item.value)
                    folded[key] = text
                    values.append(text)
                }
            }
            offsets.append(Int32(values.count))
        }
        self.offsets = offsets
        self.values = values
    }

    /// Song `song`'s folded values, in stored order (empty when it has none).
    @inline(__always)
    public func values(of song: Int32) -> ArraySlice<FoldedText> {
        self.values[Int(self.offsets[Int(song)])..<Int(self.offsets[Int(song) + 1])]
    }
}

/// The folded indexes of one snapshot, built on first use per tag type.
final class FoldedTagIndexes: Sendable {
    private let indexes = Mutex<[FoldedTagIndex?]>(Array(repeating: nil, count: TagType.allCases.count))

    func index(_ type: TagType, songs: [Database.Song]) -> FoldedTagIndex {
        if let index = self.indexes.withLock({ $0[type.rawValue] }) { return index }
        let index = FoldedTagIndex(type, songs: songs)
        self.indexes.withLock { $0[type.rawValue] = index }
        return index
    }
}

extension Database {
    /// `type`'s values of every song, folded (see `FoldedTagIndex`). Built once per snapshot, on first use.
    public func foldedIndex(_ type: TagType) -> FoldedTagIndex {
        self.foldedIndexes.index(type, songs: self.songs)
    }
}

extension TagColumn {
    /// The number of the value whose UTF-8 bytes are exactly `value`'s, or `nil` when no song has it.
    public func id(of value: String) -> Int32? {
        var low = 0
        var high = self.values.count
        while low < high {
            let middle = (low + high) / 2
            if self.values[middle].utf8.lexicographicallyPrecedes(value.utf8) { low = middle + 1 } else { high = middle }
        }
        guard low < self.values.count, self.values[low].utf8.elementsEqual(value.utf8) else { return nil }
        return Int32(low)
    }
}
