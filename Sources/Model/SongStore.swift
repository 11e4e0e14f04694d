// SPDX-License-Identifier: GPL-3.0-or-later

/// Immutable songs numbered from 0 that others refer to by number instead of copying them: the library's
/// snapshot, which queue entries of database songs point into (as `mpd`'s queue shares its songs' tags).
///
/// A store never changes once built, so a number keeps naming the same song for as long as the store lives.
public protocol SongStore: AnyObject, Sendable {
    /// The URI of song `song`, relative to the music directory.
    func uri(_ song: Int32) -> String
    /// Its modification time, seconds since the epoch.
    func modificationTime(_ song: Int32) -> Int64
    /// Its tags and audio properties, built.
    func info(_ song: Int32) -> SongInfo
    /// Whether song `song` has the same modification time, tags and audio properties as `otherSong` of `other`.
    func isSame(_ song: Int32, as other: any SongStore, _ otherSong: Int32) -> Bool
}
