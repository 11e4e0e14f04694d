// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Library
import Model
import NFS

/// The most a storage's small file (a `.mpdignore`) gives an update: what follows is left out.
let storageFileLimit = 16 * 1024 * 1024

/// An NFS export mounted with `mount nfs://server/export`, as `mpd`'s nfs storage plugin reads it (NFSv3, through
/// libnfs). Paths below it are appended to its URI.
///
/// An update scans a song, and the player streams it, through the nfs input plugin (as `mpd`).
struct NFSStorage: Storage {
    let uri: String
    private let export: NFSExport

    /// A storage for `uri` (an `nfs://` URI: the plugin's check was made): no traffic until it is used.
    init(uri: String) throws(NFSError) {
        self.uri = uri
        self.export = try NFSExport(uri: uri)
    }

    func playableURI(_ path: String) -> String {
        path.isEmpty ? self.uri : self.uri + (self.uri.hasSuffix("/") ? "" : "/") + path
    }

    func status(_ path: String) throws -> StorageFileStatus { try self.export.status(path) }

    func names(in path: String) throws -> [String] { try self.export.names(in: path) }

    /// Through the nfs input plugin, as `mpd` opens a `.mpdignore` of a storage.
    func contents(of path: String) throws -> [UInt8] {
        try NFSInputStream(url: self.playableURI(path), cancellation: InputCancellation())
            .readToEnd(limit: storageFileLimit)
    }
}
