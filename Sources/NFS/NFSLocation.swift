// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Synchronization

/// Where an `nfs://` URL points, split as `mpd` splits it: the server (up to the first `/`), the export (the
/// directories) and the file inside it (its last component).
///
/// `nfs://host/srv/music/a.flac` is server `host`, export `/srv/music`, path `/a.flac`. Pure.
struct NFSLocation: Equatable {
    /// The host, as written (`host`, `host:port` is not `mpd`'s form).
    var server: String
    /// The exported directory, with its leading `/`.
    var export: String
    /// The file, relative to the export, with a leading `/`.
    var path: String

    /// Splits `url`.
    ///
    /// - Throws: `NFSError.failed("Malformed nfs:// URI")` without the scheme, a path, an export, or a file name.
    init(_ url: String) throws(NFSError) {
        let (server, location) = try Self.serverAndPath(url)
        // Below a mounted export, the export and the path inside it (`mpd`'s `nfs_check_base`).
        if let export = Self.base(server: server, path: Substring(location)) {
            self.server = server
            self.export = export
            let inside = String(Substring(location).dropFirst(export.count))
            self.path = inside.isEmpty ? "/" : inside
            return
        }
        // The last `/` after the path's first character; the file after it must not be empty.
        guard let last = location.dropFirst().lastIndex(of: UInt8(ascii: "/")),
            location.index(after: last) != location.endIndex
        else { throw .failed("Malformed nfs:// URI") }
        self.server = server
        self.export = String(Substring(location[..<last]))
        self.path = String(Substring(location[last...]))
    }

    /// The server (up to the first `/` after the scheme) and the path from that `/` on, as `mpd` splits them.
    ///
    /// - Throws: `NFSError.failed("Malformed nfs:// URI")` without the scheme or a path.
    static func serverAndPath(_ url: String) throws(NFSError) -> (server: String, path: Substring.UTF8View) {
        guard Self.hasScheme(url) else { throw .failed("Malformed nfs:// URI") }
        let rest = Substring(url).utf8.dropFirst(6)
        guard let slash = rest.firstIndex(of: UInt8(ascii: "/")) else { throw .failed("Malformed nfs:// URI") }
        return (String(Substring(rest[..<slash])), rest[slash...])
    }

    /// The exports mounted with `mount`, per server.
    private static let bases = Mutex<[String: Set<String>]>([:])

    /// Registers `export` of `server` as a base: URLs below it open it as their export.
    static func addBase(server: String, export: String) {
        bases.withLock { _ = $0[server, default: []].insert(export) }
    }

    /// The longest registered export of `server` that `path` is or lies below.
    private static func base(server: String, path: Substring) -> String? {
        bases.withLock { bases in
            bases[server]?.filter { path == $0 || path.hasPrefix($0 == "/" ? $0 : $0 + "/") }.max {
                $0.count < $1.count
            }
        }
    }

    /// Whether `url` starts with `nfs://`, in any case.
    static func hasScheme(_ url: String) -> Bool { URIScheme.hasPrefixIgnoringCase(url.utf8, "nfs://") }
}
