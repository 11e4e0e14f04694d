// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Model
import Synchronization

/// An NFS export mounted with `mount` (`mpd`'s nfs storage plugin): `nfs://server/export`. Its files and
/// directories are listed through one connection, made when first needed and made again after a failure; the
/// export is registered as a base, so that songs below it (`nfs://server/export/dir/song.flac`) are opened through
/// the export rather than through their directory, as `mpd`'s `nfs_set_base` does.
///
/// Any thread; one call at a time reaches the server.
public final class NFSExport: Sendable {
    /// The URI it was made from.
    public let uri: String
    private let server: String
    private let export: String
    private let connection = Mutex<ConnectionBox>(ConnectionBox())

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
        try self.withConnection { connection throws(NFSError) in try connection.status(path: "/" + path) }
    }

    /// The names in the directory at `path` (relative to the export), without `.` and `..`, in `mpd`'s order:
    /// the reverse of libnfs's (`mpd` puts each entry in front of the ones before).
    public func names(in path: String) throws(NFSError) -> [String] {
        try self.withConnection { connection throws(NFSError) in try connection.names(in: "/" + path).reversed() }
    }

    private func withConnection<T>(_ body: (NFSConnection) throws(NFSError) -> T) throws(NFSError) -> T {
        let result: Result<T, NFSError> = self.connection.withLock { box in
            do throws(NFSError) {
                if box.connection == nil {
                    box.connection = try NFSConnection(
                        server: self.server, export: self.export, cancellation: InputCancellation())
                }
                return .success(try body(box.connection!))
            } catch {
                // Connect again for the next call: the server may be back.
                box.connection = nil
                return .failure(error)
            }
        }
        return try result.get()
    }
}

/// The connection of an ``NFSExport``, only used under its mutex.
private struct ConnectionBox: @unchecked Sendable {
    var connection: NFSConnection?
}
