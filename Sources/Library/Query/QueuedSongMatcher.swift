// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// Matches songs of a snapshot's table as `mpd` matches queued songs (`playlistfind`, `playlistsearch`): through
/// its light view of a queue song, which carries no audio format (so an `AudioFormat` filter never matches).
/// Values are read from the table's columns as the filter asks for them: nothing is built for a song the filter
/// rejects. Valid only inside `SongTable.withQueuedSongMatcher(_:)`.
public struct QueuedSongMatcher {
    private let songs: UnsafePointer<SongTable>

    fileprivate init(songs: UnsafePointer<SongTable>) { self.songs = songs }

    /// Whether `filter` matches song `index` of the table.
    public func matches(_ filter: SongFilter, song index: Int32) -> Bool {
        filter.matches(TableQueueSong(songs: self.songs, index: index))
    }
}

extension SongTable {
    /// Runs `body` with a matcher over this table, which reads the table in place (it copies no column).
    public func withQueuedSongMatcher<Result>(_ body: (QueuedSongMatcher) throws -> Result) rethrows -> Result {
        try withUnsafePointer(to: self) { try body(QueuedSongMatcher(songs: $0)) }
    }
}

/// A song of the table as a filter subject without an audio format (see `QueuedSongMatcher`).
private struct TableQueueSong: FilterSubject {
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
