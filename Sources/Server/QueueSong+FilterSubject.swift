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
/// snapshot's columns: nothing is built for a song the filter rejects. Points to the snapshot's table (valid
/// only inside `withUnsafePointer`), so that matching copies no table.
struct StoredQueueSong: FilterSubject {
    let songs: UnsafePointer<SongTable>
    let index: Int32

    var uri: String { self.songs.pointee.uri(self.index) }

    var lastModified: Int64? { self.songs.pointee.modificationTime(self.index) }

    var audioFormat: AudioFormat? { nil }

    var presentTags: TagMask { self.songs.pointee.presentTags(self.index) }

    func tagValues(_ type: TagType) -> LazyMapSequence<LazyFilterSequence<Range<Int>>, String> {
        let songs = self.songs
        return songs.pointee.tagPositions(self.index).lazy.filter { songs.pointee.tagType(at: $0) == type }.map {
            songs.pointee.values[songs.pointee.valueNumber(at: $0)]
        }
    }
}

extension Queue {
    /// The positions of the songs `filter` matches (`playlistfind`, `playlistsearch`), in order: those of the
    /// snapshot read from its columns.
    func positions(matching filter: SongFilter, snapshot: SongPrinter.Snapshot?) -> [Int] {
        guard let snapshot else { return self.items.indices.filter { filter.matches(self.items[$0].song) } }
        return withUnsafePointer(to: snapshot.songs) { songs in
            self.items.withUnsafeBufferPointer { items in
                items.indices.filter { position in
                    guard let song = items[position].song(in: snapshot.database) else {
                        return filter.matches(items[position].song)
                    }
                    return filter.matches(StoredQueueSong(songs: songs, index: song))
                }
            }
        }
    }
}
