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

/// A queued song of the library's snapshot, matched as its `QueueSong` is (no audio format) but read from the
/// snapshot's columns: nothing is built for a song the filter rejects.
struct StoredQueueSong: FilterSubject {
    let database: Database
    let index: Int32

    var uri: String { self.database.songs.uri(self.index) }

    var lastModified: Int64? { self.database.songs.modificationTime(self.index) }

    var audioFormat: AudioFormat? { nil }

    var presentTags: TagMask { self.database.songs.presentTags(self.index) }

    func tagValues(_ type: TagType) -> LazyMapSequence<LazyFilterSequence<Range<Int>>, String> {
        let songs = self.database.songs
        return songs.tagPositions(self.index).lazy.filter { songs.tagType(at: $0) == type }.map {
            songs.values[songs.valueNumber(at: $0)]
        }
    }
}

extension Queue.Item {
    /// Whether `filter` matches the song (`playlistfind`, `playlistsearch`): read from `database`'s columns
    /// when the item holds a song of that snapshot.
    func matches(_ filter: SongFilter, database: Database?) -> Bool {
        if let stored = self.stored, let database, stored.store === database {
            return filter.matches(StoredQueueSong(database: database, index: stored.song))
        }
        return filter.matches(self.song)
    }
}
