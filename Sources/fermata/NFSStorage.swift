// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Library
import Model
import NFS

/// An NFS export mounted with `mount nfs://server/export`, as `mpd`'s nfs storage plugin reads it (NFSv3, through
/// libnfs). Paths below it are appended to its URI.
///
/// The format plugins read tags from files, so a song is copied to a temporary file (same suffix) for the scan,
/// which `mpd` instead streams; the player streams it from the export (the nfs input plugin).
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

    func withLocalFile<Result>(_ path: String, _ body: (String) throws -> Result) throws -> Result {
        let file = try NFSInputStream(url: self.playableURI(path), cancellation: InputCancellation())
        return try withTemporaryCopy(of: path, read: { buffer in try file.read(into: buffer) }, body)
    }
}
