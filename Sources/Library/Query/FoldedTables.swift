// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// The folded indexes a filter reads below its top level (inside `(!(… AND …))`): every tag type (with its
/// fallbacks) that a case-folding tag item compares.
final class FoldedTables {
    let indexes: [FoldedTagIndex?]
    /// The snapshot, when it has mount points and the songs are not matched as queued songs (see
    /// `IndexedSong.uri`).
    let mounted: Database?
    /// Whether the songs are matched as queued songs: no audio format, the full URI (see `PreparedFilter`).
    let queued: Bool
    /// The tables `filter` needs from `database` (none when it folds `any`, which reads every tag type: not worth
    /// indexing all of them for one query; `IndexedSong` folds them as it reads them).
    init(_ database: Database, filter: SongFilter, queued: Bool = false) {
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
        if collect(filter.items) {
            for type in types { indexes[type.rawValue] = database.foldedIndex(type) }
        }
        self.indexes = indexes
        self.mounted = database.hasMountPoints && !queued ? database : nil
        self.queued = queued
    }
}
