// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Model

/// An NFS export mounted with `mount` (`mpd`'s nfs storage plugin): `nfs://server/export`. Its files and
/// directories are listed through the pooled connection to the export (``NFSConnectionPool``), which the streams of
/// its songs share, made when first needed and made again after a failure; the
/// export is registered as a base, so that songs below it (`nfs://server/export/dir/song.flac`) are opened through
/// the export rather than through their directory, as `mpd`'s `nfs_set_base` does.
///
/// Any thread.
public final class NFSExport: Sendable {
    /// The URI it was made from.
    public let uri: String
    private let server: String
    private let export: String

    /// A storage for `uri`: no traffic until it is used.
    ///
    /// - Throws: `NFSError.failed("Malformed nfs:// URI")` without a server and an export path.
    public init(uri: String) throws(NFSError) {
        let (server, path) = try NFSLocation.serverAndPath(uri)
        self.uri = uri
        self.server = server
        var export = String(Substring(path))
        while export.count > 1 && export.hasSuffix("/") { export.removeLast() }
        self.export = export
        NFSLocation.addBase(server: self.server, export: export)
    }

    /// The status of the file or directory at `path` (relative to the export; "" is the export itself).
    public func status(_ path: String) throws(NFSError) -> StorageFileStatus {
        try self.withConnection { connection, waiter throws(NFSError) in
            try connection.status(path: "/" + path, waiter: waiter)
        }
    }

    /// The names in the directory at `path` (relative to the export), without `.` and `..`, in `mpd`'s order:
    /// the reverse of libnfs's (`mpd` puts each entry in front of the ones before).
    public func names(in path: String) throws(NFSError) -> [String] {
        try self.withConnection { connection, waiter throws(NFSError) in
            try connection.names(in: "/" + path, waiter: waiter).reversed()
        }
    }

    private func withConnection<T>(_ body: (NFSConnection, NFSWaiter) throws(NFSError) -> T) throws(NFSError) -> T {
        let lease = try NFSConnection.pool.lease(server: self.server, export: self.export)
        return try body(lease.connection, NFSWaiter(cancellation: InputCancellation()))
    }
}
