// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// A tree of files the database can be filled from, as `mpd`'s storage plugins are: the music directory, or a
/// storage mounted with `mount` (an SMB share). Paths are relative to the storage's root ("" is the root itself),
/// with `/` between names.
///
/// Called from update threads.
public protocol Storage: Sendable {
    /// The URI the storage was mounted from, as `listmounts` and the state file show it.
    var uri: String { get }
    /// The status of the file or directory at `path`.
    func status(_ path: String) throws -> StorageFileStatus
    /// The names in the directory at `path`, without `.` and `..`.
    func names(in path: String) throws -> [String]
    /// The names in the directory at `path` in the order an update takes them, each with its status when the
    /// listing itself tells it (`nil`: ask ``status(_:)``), as a WebDAV listing does. By default ``names(in:)``
    /// with no status.
    func entries(in path: String) throws -> [(name: String, status: StorageFileStatus?)]
    /// Reads the song at `path` with `reader`. By default through its input stream (`reader.readInfo(uri:)` of
    /// ``playableURI(_:)``), as `mpd` scans a song of a storage with no local files (`tag_stream_scan` of
    /// `MapUTF8`).
    func readSongInfo(_ path: String, reader: any SongInfoReader) throws -> SongInfo
    /// The bytes of the (small) file at `path`: how an update reads a directory's `.mpdignore`.
    func contents(of path: String) throws -> [UInt8]
    /// The URI the player opens for the file at `path`.
    func playableURI(_ path: String) -> String
    /// Lets go of what the storage holds outside the process once it is unmounted (`unmount`, or at exit), as
    /// `mpd`'s storage plugins do when they go: a UDisks2 file system is unmounted through UDisks2. Blocks: called
    /// off the loop, or after it stopped. By default nothing.
    func close()
}

extension Storage {
    public func readSongInfo(_ path: String, reader: any SongInfoReader) throws -> SongInfo {
        try reader.readInfo(uri: self.playableURI(path))
    }

    public func close() {}

    public func entries(in path: String) throws -> [(name: String, status: StorageFileStatus?)] {
        try self.names(in: path).map { ($0, nil) }
    }
}
