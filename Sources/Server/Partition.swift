// SPDX-License-Identifier: GPL-3.0-or-later

import MPDProtocol
import Playback

/// The services a client's commands act on in its partition, as `mpd`'s `Partition`: the queue with the player
/// it drives, its volume memento and play time, and the idle events raised there.
///
/// Fermata has one partition, `default`, that every client is in; the partitions issue adds more (each with its
/// queue and player, its events reaching its own clients).
///
/// Loop-confined.
final class Partition {
    /// The name `partition` and `listpartitions` show.
    let name: String
    /// The queue and playback state; drives the player.
    let playlist: Playlist
    /// The volume last set by a client or the state file (`mpd`'s mixer memento, saved as `sw_volume`); kept even
    /// without a mixer.
    var softwareVolume = 100
    /// Time its player spent playing, for `stats`.
    var playTime = PlayTime()
    private let raise: (IdleEvent) -> Void

    /// A partition over `playlist` whose idle events go to `raise`.
    init(name: String, playlist: Playlist, raise: @escaping (IdleEvent) -> Void) {
        self.name = name
        self.playlist = playlist
        self.raise = raise
    }

    /// The player the queue drives.
    var player: any PlayerControl { self.playlist.player }

    /// Raises `event` for the clients of this partition.
    func emit(_ event: IdleEvent) { self.raise(event) }
}
