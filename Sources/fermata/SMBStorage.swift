// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Library
import Model
import Posix
import SMBClient

/// An SMB share mounted with `mount smb://server[:port]/share[/path]`, as `mpd`'s smbclient storage plugin reads
/// it: anonymously, through a libsmbclient context of its own. Paths below it are appended to its URI (kept as given, as
/// `listmounts` shows it).
///
/// An update scans a song, and the player streams it, through the smbclient input plugin (as `mpd`).
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

    /// Through the smbclient input plugin, as `mpd` opens a `.mpdignore` of a storage.
    func contents(of path: String) throws -> [UInt8] {
        try SMBInputStream(url: self.playableURI(path), cancellation: InputCancellation())
            .readToEnd(limit: storageFileLimit)
    }
}
