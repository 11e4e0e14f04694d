// SPDX-License-Identifier: GPL-3.0-or-later

import MPDProtocol
import Network

/// Storage and neighbors: `config`, `listmounts`, `mount`, `unmount`, `listneighbors`, as `mpd` 0.23 answers them.
///
/// `mount` recognises the URIs of Debian's `mpd`'s remote storage plugins (`StoragePlugin.all`: smb, nfs, WebDAV)
/// and refuses the rest as it does. A mounted share's songs live in a database of their own in `mpd`'s
/// `cache_directory`; Fermata's database reads no `cache_directory` yet, so every recognised URI ends as `mpd`'s
/// does without one: the storage is mounted (clients waiting in `idle` hear `mount`), the simple database
/// refuses, and the mount is undone. There is no neighbor plugin.
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

    /// `listmounts`: the root's mount; its local path only for local clients.
    static func listmounts(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        guard let path = Self.storagePath(context) else { throw AckError(.noExist, "No database") }
        context.write(raw: "mount: \n")
        if context.session.isLocal { context.write("storage", path) }
        return .ok
    }

    /// `mount PATH URI`: `mpd`'s checks, in its order, then the storage plugin's, then the database's.
    static func mount(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        guard let path = Self.storagePath(context) else { throw AckError(.noExist, "No database") }
        let mountPoint = context.arguments[0]
        // Top-level mount points only; the root is the only mount point, and "" is refused first.
        guard !mountPoint.isEmpty, !mountPoint.utf8.contains(UInt8(ascii: "/")) else {
            throw AckError(.arg, "Bad mount point")
        }
        if context.arguments[1] == path { throw AckError(.arg, "This storage is already mounted") }
        guard let plugin = StoragePlugin.plugin(for: context.arguments[1]) else {
            throw AckError(.arg, "Unrecognized storage URI")
        }
        try plugin.check(context.arguments[1])
        // As mpd: the storage is mounted, which clients hear, before the database, which keeps no mounted
        // database without a cache directory, refuses; the storage is then unmounted without an event.
        context.services.emit(.mount)
        throw AckError(.noExist, "No 'cache_directory' configured")
    }

    /// `unmount PATH`: nothing but the root is mounted, and it cannot be unmounted.
    static func unmount(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        guard Self.storagePath(context) != nil else { throw AckError(.noExist, "No database") }
        if context.arguments[0].isEmpty { throw AckError(.arg, "Bad mount point") }
        throw AckError(.arg, "Not a mount point")
    }
}
