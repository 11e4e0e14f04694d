// SPDX-License-Identifier: GPL-3.0-or-later

import Library
import Model

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

    func foldedTagValues(_ type: TagType) -> ArraySlice<FoldedText> {
        guard let index = self.folded.indexes[type.rawValue] else {
            preconditionFailure("no folded index prepared for \(type.name)")
        }
        return index.values(of: self.index)
    }
}

/// The folded indexes one filter reads: every tag type (with its fallbacks) that a case-folding tag item
/// compares.
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
