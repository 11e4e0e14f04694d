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
    /// snapshot read from its columns (`QueuedSongMatcher`).
    func positions(matching filter: SongFilter, snapshot: SongPrinter.Snapshot?) -> [Int] {
        guard let snapshot else { return self.items.indices.filter { filter.matches(self.items[$0].song) } }
        let database = snapshot.database
        return snapshot.songs.withQueuedSongMatcher { matcher in
            var positions: [Int] = []
            // Items read in place through the buffer (a copy of each would retain and release its song's holder;
            // `Queue.visitItems`, generic over its positions, is not specialized here and costs more than the copy).
            self.items.withUnsafeBufferPointer { items in
                for position in items.indices {
                    let matched =
                        if let song = items[position].song(in: database) {
                            matcher.matches(filter, song: song)
                        } else {
                            filter.matches(items[position].song)
                        }
                    if matched { positions.append(position) }
                }
            }
            return positions
        }
    }
}
