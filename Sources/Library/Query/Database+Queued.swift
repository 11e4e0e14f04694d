// SPDX-License-Identifier: GPL-3.0-or-later

import Model

extension Database {
    /// Whether `filter` matches each of `songs` (numbers of this snapshot in any order, repeats allowed: the songs
    /// of a queue) as `mpd` matches queued songs (`playlistfind`, `playlistsearch`): through its light view of a
    /// queue song, which carries no audio format (so an `AudioFormat` item never matches) and whose URI is the
    /// full one.
    ///
    /// The filter is prepared as for `select(_:)`: a case-insensitive tag item reads the snapshot's folded index
    /// and compares its needle once with each distinct value, instead of folding every queued song's values.
    public func queuedSongsMatch(_ songs: [Int32], _ filter: SongFilter) -> [Bool] {
        let prepared = PreparedFilter(self, filter: filter, valueCache: songs.count > 1024, queued: true)
        if prepared.isEmpty { return [Bool](repeating: true, count: songs.count) }
        let kept = withUnsafePointer(to: self.songs) { prepared.filter(songs, in: $0) }
        // `kept` is the subsequence of `songs` that matches, and a song matches wherever it is: the next kept song
        // is the song at hand exactly when that one matches (a later repeat of it would match too).
        var matches = [Bool](repeating: false, count: songs.count)
        var next = 0
        for (position, song) in songs.enumerated() where next < kept.count && kept[next] == song {
            matches[position] = true
            next += 1
        }
        return matches
    }
}
