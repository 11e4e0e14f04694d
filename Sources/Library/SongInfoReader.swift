// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// Reads song information from files; the format plugins implement it.
///
/// Called from scanner worker threads, several at once.
public protocol SongInfoReader: Sendable {
    /// Whether files with this suffix (without the dot, in the file's own case) are songs.
    func supports(suffix: String) -> Bool
    /// Reads a file's tags and audio properties.
    ///
    /// - Throws: when the file is not a song this reader can read; the scanner then skips it.
    func readInfo(path: String) throws -> SongInfo
    /// The songs inside a container file (`mpd`'s `container_scan`): names relative to the file, with their
    /// information; `nil` when the file is not a container (then it may be an ordinary song).
    func containerSongs(path: String) -> [(name: String, info: SongInfo)]?
    /// Called once an update has read every file it queued, from the update's thread: the reader may give back
    /// what it keeps only for reading (libraries loaded on first use).
    func readingFinished()
}

extension SongInfoReader {
    /// No containers.
    public func containerSongs(path: String) -> [(name: String, info: SongInfo)]? { nil }
    /// Nothing to give back.
    public func readingFinished() {}
}
