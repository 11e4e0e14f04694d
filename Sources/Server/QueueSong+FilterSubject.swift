// SPDX-License-Identifier: GPL-3.0-or-later

import Library
import Model
import Playback

/// `playlistfind` and `playlistsearch` match queue songs as `mpd` does: through its light view of a queue song,
/// which carries no audio format (so an `AudioFormat` filter never matches).
extension QueueSong: FilterSubject {
    public var lastModified: Int64? { self.modificationTime }

    public var audioFormat: AudioFormat? { nil }

    public var presentTags: TagMask { TagMask(self.info.tags.lazy.map(\.type)) }

    public func tagValues(_ type: TagType) -> LazyMapSequence<LazyFilterSequence<[TagItem]>, String> {
        self.info.tags.lazy.filter { $0.type == type }.map(\.value)
    }
}

extension Queue {
    /// The positions of the songs `filter` matches (`playlistfind`, `playlistsearch`), in order: those of the
    /// snapshot matched together by the query engine (`Database.queuedSongsMatch`), the others one by one.
    func positions(matching filter: SongFilter, snapshot: SongPrinter.Snapshot?) -> [Int] {
        guard let snapshot else { return self.items.indices.filter { filter.matches(self.items[$0].song) } }
        let database = snapshot.database
        var matched = [Bool](repeating: false, count: self.items.count)
        var songs: [Int32] = []
        var songPositions: [Int] = []
        songs.reserveCapacity(self.items.count)
        songPositions.reserveCapacity(self.items.count)
        for (position, song) in self.songNumbers(at: self.items.indices, inStore: ObjectIdentifier(database))
            .enumerated()
        {
            if song >= 0 {
                songs.append(song)
                songPositions.append(position)
            } else {
                matched[position] = filter.matches(self.items[position].song)
            }
        }
        for (index, matches) in database.queuedSongsMatch(songs, filter).enumerated() where matches {
            matched[songPositions[index]] = true
        }
        return matched.indices.filter { matched[$0] }
    }
}
