// SPDX-License-Identifier: GPL-3.0-or-later

import Library
import Model
import Posix
import SMBClient

/// An SMB share mounted with `mount smb://server[:port]/share[/path]`, as `mpd`'s smbclient storage plugin reads
/// it: anonymously, through a libsmbclient context of its own. Paths below it are appended to its URI (kept as given, as
/// `listmounts` shows it).
///
/// The format plugins read tags from files, so a song is copied to a temporary file (same suffix) for the scan,
/// which `mpd` instead streams; the player streams it from the share (the smbclient input plugin).
struct SMBStorage: Storage {
    let uri: String
    private let context: SMBContext

    /// A storage for `uri` (an `smb://` URI: the plugin's check was made): no traffic until it is used.
    init(uri: String) throws(SystemCallError) {
        self.uri = uri
        self.context = try SMBContext()
    }

    func playableURI(_ path: String) -> String {
        path.isEmpty ? self.uri : self.uri + (self.uri.hasSuffix("/") ? "" : "/") + path
    }

    func status(_ path: String) throws -> StorageFileStatus {
        try self.context.status(self.playableURI(path))
    }

    func names(in path: String) throws -> [String] { try self.context.names(in: self.playableURI(path)) }

    func withLocalFile<Result>(_ path: String, _ body: (String) throws -> Result) throws -> Result {
        let file = try self.context.open(self.playableURI(path))
        return try withTemporaryCopy(of: path, read: { buffer in try file.read(into: buffer) }, body)
    }
}
