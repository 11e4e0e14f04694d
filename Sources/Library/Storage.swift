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
    /// Runs `body` with the path of a local file holding the bytes of the file at `path` (the storage itself, or
    /// a temporary copy with the same suffix, removed when `body` returns): what the format plugins read tags from.
    func withLocalFile<Result>(_ path: String, _ body: (String) throws -> Result) throws -> Result
    /// The URI the player opens for the file at `path`.
    func playableURI(_ path: String) -> String
}

extension Storage {
    public func entries(in path: String) throws -> [(name: String, status: StorageFileStatus?)] {
        try self.names(in: path).map { ($0, nil) }
    }
}
