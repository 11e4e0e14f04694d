// SPDX-License-Identifier: GPL-3.0-or-later

import Library
import MPDProtocol
import Network

/// Storage and neighbors: `config`, `listmounts`, `mount`, `unmount`, `listneighbors`, as `mpd` 0.23 answers them.
///
/// `mount` recognises the URIs of Debian's `mpd`'s storage plugins (`StoragePlugin.all`: smb, udisks, nfs, WebDAV)
/// and refuses the rest as it does. A mounted storage's songs live in a database of their own in `mpd`'s
/// `cache_directory` (see `LibraryService.mount`), shown under the mount point; without a `cache_directory` the
/// storage is mounted (clients waiting in `idle` hear `mount`), the simple database refuses, and the mount is
/// undone, as in `mpd`. Fermata mounts SMB shares, UDisks2 file systems (`udisks://ID[/PATH]`), NFS exports and
/// WebDAV directories (`http://`, `https://`). The storage is made off the loop, and its error is `mount`'s (a
/// udisks storage connects to the system bus then: `DBus connection error: …`); otherwise, as in `mpd`, `mount`
/// itself reads nothing: a storage that cannot be read (an unknown UDisks2 id, a UDisks2 `Mount` that fails) shows
/// as an empty mount point, and its error is logged by the update. The database's part of `mount` and `unmount`
/// (reading the storage's database, rebuilding the snapshot) runs off the loop too: the command's reply waits for
/// it, other clients do not. A udisks storage is unmounted through UDisks2 when it goes, after `unmount`'s reply.
/// There is no neighbor plugin.
enum StorageCommands {
    static let all: [Command] = [
        Command("config", .admin, 0, 0, config),
        Command("listmounts", .read, 0, 0, listmounts),
        // As mpd, which lists it only with a neighbor plugin configured, and answers it anyway.
        Command("listneighbors", .read, 0, 0) { _ throws(AckError) in
            throw AckError(.unknown, "No neighbor plugin configured")
        }.available(when: { _ in false }),
        Command("mount", .admin, 2, 2, mount),
        Command("unmount", .admin, 1, 1, unmount),
    ]

    /// The music directory as `mpd`'s local storage maps the root: without trailing slashes; `nil` without a
    /// music directory (`mpd` then has no storage, and no database).
    static func storagePath(_ context: CommandContext) -> String? {
        guard var path = context.services.options.musicDirectory, !path.isEmpty else { return nil }
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return path
    }

    /// `config`: the music directory, for local (Unix-socket) clients only.
    static func config(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        guard context.session.isLocal else {
            throw AckError(.permission, "Command only permitted to local clients")
        }
        if let path = Self.storagePath(context) { context.write("music_directory", path) }
        return .ok
    }

    /// `listmounts`: the root's mount (its local path only for local clients), then each mounted storage by mount
    /// point, as `mpd` keeps them (sorted by bytes), its URI without credentials.
    static func listmounts(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        guard let path = Self.storagePath(context) else { throw AckError(.noExist, "No database") }
        context.write(raw: "mount: \n")
        if context.session.isLocal { context.write("storage", path) }
        let mounts = context.services.library?.mounts ?? []
        for mount in mounts.sorted(by: { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }) {
            context.write("mount", mount.path)
            context.write("storage", Self.withoutCredentials(mount.storage.uri))
        }
        return .ok
    }

    /// `uri` without a `user:password@` before its host (`mpd`'s `uri_remove_auth`).
    static func withoutCredentials(_ uri: String) -> String {
        let bytes = Array(uri.utf8)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), bytes[colon...].starts(with: "://".utf8) else {
            return uri
        }
        let hostStart = colon + 3
        let hostEnd = bytes[hostStart...].firstIndex(of: UInt8(ascii: "/")) ?? bytes.endIndex
        guard let at = bytes[hostStart..<hostEnd].lastIndex(of: UInt8(ascii: "@")) else { return uri }
        return String(decoding: bytes[..<hostStart] + bytes[(at + 1)...], as: UTF8.self)
    }

    /// `mount PATH URI`: `mpd`'s checks, in its order, then the storage plugin's, then the database's; then an
    /// update of the mount point when its database has no file yet.
    static func mount(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        guard let path = Self.storagePath(context), let library = context.services.library else {
            throw AckError(.noExist, "No database")
        }
        let mountPoint = context.arguments[0]
        let uri = context.arguments[1]
        // Top-level mount points only, and "" is refused first.
        guard !mountPoint.isEmpty, !mountPoint.utf8.contains(UInt8(ascii: "/")) else {
            throw AckError(.arg, "Bad mount point")
        }
        if library.mounts.contains(where: { $0.path == mountPoint }) { throw AckError(.arg, "Mount point busy") }
        if uri == path || library.mounts.contains(where: { $0.storage.uri == uri }) {
            throw AckError(.arg, "This storage is already mounted")
        }
        guard let plugin = StoragePlugin.plugin(for: uri) else { throw AckError(.arg, "Unrecognized storage URI") }
        try plugin.check(uri)
        // The storage is made off the loop (a udisks storage connects to the system bus), its error the reply's,
        // before the database's checks, as in mpd.
        let opener = context.services.options.storageOpener
        return .deferred(
            DeferredReply(
                work: { _ -> Result<any Storage, AckError> in
                    do {
                        guard let made = try opener(uri) else {
                            return .failure(
                                AckError(.unknown, "Storage plugin \"\(plugin.name)\" is not supported by Fermata"))
                        }
                        return .success(made)
                    } catch let error as AckError {
                        return .failure(error)
                    } catch {
                        return .failure(AckError(.unknown, "\(error)"))
                    }
                },
                finish: { made, context throws(AckError) in
                    try Self.mount(mountPoint, storage: try made.get(), library: library, context: &context)
                }))
    }

    /// The rest of `mount` once the storage is made, on the loop: the database's part.
    private static func mount(
        _ mountPoint: String, storage: any Storage, library: LibraryService, context: inout CommandContext
    ) throws(AckError) -> CommandResult {
        // As mpd: the storage is mounted, which clients hear, before the database mounts it or refuses (the
        // storage is then unmounted again without an event).
        guard library.canMount else {
            context.services.emit(.mount)
            throw AckError(.noExist, "No 'cache_directory' configured")
        }
        // The database's mount rebuilds the snapshot off the loop; clients hear `mount` and `database` together
        // when it is done (or only `mount` when the database refuses), as `mpd`'s idle clients do.
        let services = context.services
        return .deferred(
            DeferredReply(
                begin: { (done: @escaping @Sendable (LibraryService.MountError?) -> Void) in
                    library.mount(mountPoint, storage: storage) { result in
                        switch result {
                        case .success:
                            services.emit(.mount)
                            services.emit(.database)
                            done(nil)
                        case .failure(let error):
                            // mpd mounted the storage before its database refused; not after its own checks.
                            if error == .alreadyExists || error == .noCacheDirectory { services.emit(.mount) }
                            done(error)
                        }
                    }
                },
                finish: { error, _ throws(AckError) in
                    switch error {
                    case nil: return .ok
                    case .noCacheDirectory: throw AckError(.noExist, "No 'cache_directory' configured")
                    case .alreadyExists: throw AckError(.arg, "Already exists")
                    case .mountPointBusy: throw AckError(.arg, "Mount point busy")
                    case .storageMounted: throw AckError(.arg, "This storage is already mounted")
                    }
                }))
    }

    /// `unmount PATH`: the database's mount first (clients hear `database`), then the storage's (`mount`); the
    /// snapshot is rebuilt off the loop.
    static func unmount(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        guard Self.storagePath(context) != nil else { throw AckError(.noExist, "No database") }
        if context.arguments[0].isEmpty { throw AckError(.arg, "Bad mount point") }
        guard let library = context.services.library else { throw AckError(.arg, "Not a mount point") }
        let (path, services) = (context.arguments[0], context.services)
        return .deferred(
            DeferredReply(
                begin: { (done: @escaping @Sendable (Bool) -> Void) in
                    library.unmount(path) { unmounted in
                        if unmounted {
                            services.emit(.database)
                            services.emit(.mount)
                        }
                        done(unmounted)
                    }
                },
                finish: { unmounted, _ throws(AckError) in
                    guard unmounted else { throw AckError(.arg, "Not a mount point") }
                    return .ok
                }))
    }
}
