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
    /// Reads the tags and audio properties of a song of a storage without local files (`uri`: the URL the player
    /// opens, `smb://`, `nfs://` or `http(s)://`) through its input stream, as `mpd`'s `tag_stream_scan` does.
    ///
    /// - Throws: when the song cannot be opened or no plugin's stream scan takes it; the updater then leaves it out.
    func readInfo(uri: String) throws -> SongInfo
    /// The songs inside a container file (`mpd`'s `container_scan`): names relative to the file, with their
    /// information; `nil` when the file is not a container (then it may be an ordinary song).
    func containerSongs(path: String) -> [(name: String, info: SongInfo)]?
    /// The songs of a playlist file listed as a directory (`mpd`'s playlist plugins with `as_directory`: cue
    /// sheets), in the playlist's order; `nil` when no such plugin takes `suffix` (then the file is only a
    /// playlist), empty when the file cannot be read or names nothing.
    func playlistDirectorySongs(path: String, suffix: String) -> [PlaylistDirectoryEntry]?
    /// Whether a file with this suffix that is no song is also listed as a directory of its songs (cue sheets).
    func listsPlaylistAsDirectory(suffix: String) -> Bool
    /// Whether a file with this suffix that is no song is listed as a playlist (`mpd`'s
    /// `FindPlaylistPluginBySuffix` over its enabled playlist plugins).
    func listsPlaylist(suffix: String) -> Bool
    /// The reader a database update reads its files with, asked from the update's thread when it starts; the
    /// update calls its ``readingFinished()`` once it has read every file. It may hold what only an update needs
    /// (scan worker processes).
    func startReading() -> any SongInfoReader
    /// As ``startReading()``, for an update that reads every file again (`rescan`): the reader forgets what it kept
    /// of earlier updates' reads (the scan workers' verdicts on files they could not read).
    func startRereading() -> any SongInfoReader
    /// Called once an update has read every file it queued, from the update's thread, on the reader
    /// ``startReading()`` gave: the reader may give back what it keeps only for reading (libraries loaded on first
    /// use, worker processes).
    func readingFinished()
}

extension SongInfoReader {
    /// No containers.
    public func containerSongs(path: String) -> [(name: String, info: SongInfo)]? { nil }
    /// No playlist is a directory.
    public func playlistDirectorySongs(path: String, suffix: String) -> [PlaylistDirectoryEntry]? { nil }
    /// No playlist is a directory.
    public func listsPlaylistAsDirectory(suffix: String) -> Bool { false }
    /// The suffixes of every playlist plugin Debian's `mpd` 0.23.12 has, all enabled.
    public func listsPlaylist(suffix: String) -> Bool { Updater.playlistSuffixes.contains(suffix.lowercased()) }
    /// This reader.
    public func startReading() -> any SongInfoReader { self }
    /// ``startReading()``: nothing kept.
    public func startRereading() -> any SongInfoReader { self.startReading() }
    /// Nothing to give back.
    public func readingFinished() {}
}

/// One song a playlist file listed as a directory names: the URI as the playlist writes it (relative to the
/// playlist's directory, absolute, or a URL), the tags it gives and the range of that file.
public struct PlaylistDirectoryEntry: Sendable, Hashable {
    /// The URI as written.
    public var uri: String
    /// The tags (and length, if any) the playlist gives.
    public var info: SongInfo
    /// Where the song starts in the file, in milliseconds.
    public var startMilliseconds: UInt64
    /// Where it ends, in milliseconds; 0 is the end of the file.
    public var endMilliseconds: UInt64

    /// Creates an entry.
    public init(uri: String, info: SongInfo, startMilliseconds: UInt64 = 0, endMilliseconds: UInt64 = 0) {
        self.uri = uri
        self.info = info
        self.startMilliseconds = startMilliseconds
        self.endMilliseconds = endMilliseconds
    }
}
