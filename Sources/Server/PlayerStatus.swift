// SPDX-License-Identifier: GPL-3.0-or-later

import Library
import MPDProtocol
import Model
import Playback
import Posix

/// Time spent in the `play` state, for `stats` (`playtime:`), sampled whenever the player changes.
///
/// Loop-confined.
struct PlayTime {
    private var total: UInt64 = 0
    private var playingSince: UInt64?

    /// Records the state the player is in now.
    mutating func sample(_ state: PlayerState, now: UInt64 = MonotonicClock.now()) {
        if state == .play {
            if self.playingSince == nil { self.playingSince = now }
        } else if let since = self.playingSince {
            self.total += now - since
            self.playingSince = nil
        }
    }

    /// Whole seconds played so far.
    func seconds(now: UInt64 = MonotonicClock.now()) -> UInt64 {
        (self.total + (self.playingSince.map { now - $0 } ?? 0)) / 1_000_000_000
    }
}

extension Server {
    /// Raises the idle events for what the playlist of `partition` reports changed, where `mpd` 0.23 raises them:
    /// the queue, its modes, its mixer and outputs for the partition's clients, the player's state for every
    /// client (`mpd`'s player thread raises it for the whole instance).
    func playlistChanged(_ changes: Playlist.Changes, in partition: Partition) {
        if changes.contains(.playlist) { partition.emit(.playlist) }
        if changes.contains(.player) {
            partition.playTime.sample(partition.player.snapshot.state)
            self.emit(.player)
        }
        if changes.contains(.options) { partition.emit(.options) }
        if changes.contains(.mixer) {
            // A mixer reported a change (mpd's `OnMixerVolumeChanged`): the volume read last is forgotten.
            partition.invalidateVolume()
            partition.emit(.mixer)
        }
        if changes.contains(.output) { partition.emit(.output) }
    }

    /// A queue entry for database song `index`: the snapshot's song by number (its tags shared, not copied), or
    /// for a cue sheet's track, a song of its own with its range.
    static func queueEntry(_ index: Int32, of database: Database) -> QueueEntry {
        guard database.songs.virtualSong(index) != nil else { return .stored(database, index) }
        return .song(Self.queueSong(database.songs[Int(index)]))
    }

    /// A queue song for a database song.
    static func queueSong(_ song: Database.Song) -> QueueSong {
        guard let virtual = song.virtual else {
            return QueueSong(uri: song.uri, modificationTime: song.modificationTime, info: song.info)
        }
        // A cue sheet's track: its range of the file the sheet names, which is what plays.
        // No time for a track whose file is no song of the database (an absolute path), as in mpd.
        return QueueSong(
            uri: song.uri, modificationTime: song.modificationTime > 0 ? song.modificationTime : nil, info: song.info,
            startMilliseconds: virtual.track.startMilliseconds, endMilliseconds: virtual.track.endMilliseconds,
            realURI: virtual.targetURI ?? virtual.track.target)
    }

    /// A new database snapshot replaced the old one: queued songs whose file is gone leave the queue, changed
    /// ones get their new tags.
    /// `replaced`: songs the update deleted and made again (the tracks of a changed cue sheet), which leave the
    /// queue as `mpd`'s deleted songs do.
    func databaseChanged(_ database: Database, replaced: Set<String> = []) {
        for partition in self.partitions.all {
            partition.playlist.databaseModified(
                database,
                lookup: { uri in
                    guard !replaced.contains(uri) else { return nil }
                    return database.song(at: uri).map { Self.queueEntry($0, of: database) }
                },
                isKept: { uri in self.library?.wasRemovedByLastJob(uri) == false })
        }
    }

    /// A storage was mounted or unmounted: queued songs stay as they are (songs of an unmounted storage too, as
    /// in `mpd`), held in the new snapshot where it has them unchanged, else as songs of their own.
    func snapshotReplaced(_ database: Database) {
        for partition in self.partitions.all {
            partition.playlist.snapshotReplaced(database) { uri in
                database.song(at: uri).map { Self.queueEntry($0, of: database) }
            }
        }
    }
}
