// SPDX-License-Identifier: GPL-3.0-or-later

import EventLoop
import Glibc
import Model
import Posix

/// A storage mounted into the database with `mount`, as `mpd`'s simple database keeps one: a database of its own,
/// saved in `cache_directory` (in `mpd`'s format, so that either server reads the other's), shown under the mount
/// point, a directory of the root.
public struct Mount: Sendable {
    /// The mount point: a name at the root.
    public let path: String
    /// The storage.
    public let storage: any Storage
    /// The storage's songs, with URIs relative to the storage.
    public internal(set) var database: Database
    /// Tells this mount from a later one at the same point.
    let number: Int
}

extension LibraryService {
    /// Why `mount` refused (`mpd`'s database errors).
    public enum MountError: Error, Equatable {
        /// No `cache_directory`: `mpd`'s `No 'cache_directory' configured`.
        case noCacheDirectory
        /// The music directory has a directory of that name: `mpd`'s `Already exists`.
        case alreadyExists
    }

    /// Whether storages can be mounted: there is a `cache_directory` for their databases.
    public var canMount: Bool { self.configuration.cacheDirectory != nil }

    /// The file `mpd` keeps the database of the storage at `uri` in: the URI with every byte but ASCII letters,
    /// digits, `-`, `_` and `%` replaced by `_`, in `directory`.
    public static func mountDatabasePath(for uri: String, in directory: String) -> String {
        let name = uri.utf8.map { byte -> UInt8 in
            let safe =
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "%")
            return safe ? byte : UInt8(ascii: "_")
        }
        return directory + "/" + String(decoding: name, as: UTF8.self)
    }

    /// Mounts `storage` at `path` (a name at the root): its database is read from the cache directory, and when
    /// there is none yet (and `update`) an update of `path` is queued, as `mpd` does. Returns the id of that job,
    /// if any.
    ///
    /// The database file is read here, on the loop, as `mpd` reads it in its main thread (one storage's
    /// database: small).
    ///
    /// - Throws: `MountError`, as `mpd`'s simple database refuses.
    public func mount(_ path: String, storage: any Storage, update: Bool = true) throws(MountError) -> Int? {
        guard let directory = self.configuration.cacheDirectory else { throw .noCacheDirectory }
        if self.root.directory(at: path) != nil { throw .alreadyExists }
        let file = Self.mountDatabasePath(for: storage.uri, in: directory)
        let loaded = self.loadMountDatabase(file)
        self.lastMountNumber += 1
        self.mountPointsUsed.insert(path)
        self.mounts.append(
            Mount(path: path, storage: storage, database: loaded ?? Database(), number: self.lastMountNumber))
        self.graftMounts()
        self.onEvent(.mountsChanged(database: self.database))
        guard loaded == nil, update else { return nil }
        return try? self.enqueue(uri: path, discard: false)
    }

    /// Unmounts the storage at `path`: its waiting update jobs are dropped, a running one's result will be;
    /// `false` when nothing is mounted there.
    public func unmount(_ path: String) -> Bool {
        guard let index = self.mounts.firstIndex(where: { $0.path == path }) else { return false }
        self.mounts.remove(at: index)
        self.queue.removeAll { Self.firstComponent(of: $0.uri) == path }
        self.graftMounts()
        self.onEvent(.mountsChanged(database: self.database))
        return true
    }

    /// The mount `uri` is in, and the rest of `uri` below its mount point.
    public func mount(containing uri: String) -> (Mount, rest: String)? {
        let first = Self.firstComponent(of: uri)
        guard let mount = self.mounts.first(where: { $0.path == first }) else { return nil }
        let rest = uri.utf8.count > first.utf8.count ? String(uri.utf8.dropFirst(first.utf8.count + 1))! : ""
        return (mount, rest)
    }

    /// What the player opens for `uri`, a database URI: for a song of a mounted storage the storage's own URI of
    /// it, else `nil`.
    public func mountedURI(for uri: String) -> String? {
        guard let (mount, rest) = self.mount(containing: uri), !rest.isEmpty else { return nil }
        return mount.storage.playableURI(rest)
    }

    /// Whether the update job that just finished (asked from its `updateFinished` event) can have removed the song
    /// at `uri`, as `mpd`'s update removes songs from the queue: only those its walk deletes. A job of a mount
    /// point removes none (`mpd` tells the queue the URI relative to the storage, which no queued song has), and
    /// the music directory's job none of the songs of a storage mounted (or once mounted) at a mount point.
    public func wasRemovedByLastJob(_ uri: String) -> Bool {
        guard let previous = self.previousRoot else { return false }
        return !self.mountPointsUsed.contains(Self.firstComponent(of: uri)) || previous.song(at: uri) != nil
    }

    static func firstComponent(of uri: String) -> String {
        guard let slash = uri.utf8.firstIndex(of: UInt8(ascii: "/")) else { return uri }
        return String(uri[..<slash])
    }

    /// The database of a mount from its file, or `nil` when there is none (or it is unusable: logged).
    private func loadMountDatabase(_ file: String) -> Database? {
        let bytes: [UInt8]
        do {
            bytes = try readFileRange(atPath: file, offset: 0, count: .max).bytes
        } catch {
            if error.errno != .noSuchFile {
                self.logger.warning("cannot read a mount's database", ["file": file, "error": "\(error)"])
            }
            return nil
        }
        let modificationTime = (try? FileStatus(path: file))?.modificationTime ?? 0
        do {
            return try MPDDatabaseFile.decode(
                bytes, tags: self.configuration.metadata, fsCharset: self.configuration.fsCharset,
                updateTime: modificationTime)
        } catch {
            self.logger.warning("a mount's database is unusable", ["file": file, "error": "\(error)"])
            return nil
        }
    }

    /// Makes `database` the music directory's snapshot with the mounts grafted in (see `grafted(_:mounts:)`), or
    /// `prepared` when it was grafted (off the loop) from the same mounts as there are now.
    func graftMounts(prepared: (database: Database, mounts: [Int])? = nil) {
        if let prepared, prepared.mounts == self.mounts.map(\.number) {
            self.database = prepared.database
        } else {
            self.database = Self.grafted(self.root, mounts: self.mounts)
        }
    }

    /// `root` with each mount's database grafted in as a directory of the root named after its mount point, after
    /// the music directory's own (where `mpd` adds a mount point), without a modification time (-1: as `mpd` lists
    /// a mount point at the root), marked as mount points; its URI lookups are ready. `root` itself without
    /// mounts. Any thread: an update job grafts its result before it reaches the loop.
    static func grafted(_ root: Database, mounts: [Mount]) -> Database {
        guard !mounts.isEmpty else { return root }
        var tree = root.makeTree()
        let rank = (tree.children.values.map(\.rank).max() ?? -1) + 1
        for (offset, mount) in mounts.enumerated() {
            var child = mount.database.makeTree()
            child.name = mount.path
            // No time: `mpd` lists the mount point itself without one.
            child.modificationTime = -1
            child.rank = rank + offset
            tree.children[ByteString(mount.path)] = child
        }
        let grafted = Database(
            tree: tree, updateTime: root.updateTime, sorted: false, markTargets: root.hasHiddenSongs)
        var roots: [Int32: Int64] = [:]
        for mount in mounts {
            if let index = grafted.directory(at: mount.path) {
                roots[index] = mount.database.directories.first?.modificationTime ?? 0
            }
        }
        let database = grafted.marking(mountRoots: roots)
        database.prepareURILookups()
        return database
    }

    /// Runs an update job below mount point `mount` (`uri` relative to the storage): walks the storage, saves
    /// the mount's database in `mpd`'s format when the job modified it (or it has no file yet), then swaps it in.
    func runMounted(_ mount: Mount, uri: String, discard: Bool, id: Int) {
        let configuration = self.configuration
        let updater = StorageUpdater(
            storage: mount.storage, reader: configuration.updater.reader, logger: configuration.updater.logger)
        let file = configuration.cacheDirectory.map { Self.mountDatabasePath(for: mount.storage.uri, in: $0) }
        let current = mount.database
        let root = self.root
        let mounts = self.mounts
        let logger = self.logger
        let bound = LoopBound(self, loop: self.loop)
        NamedThread.detach("update") {
            let (tree, modified) = updater.update(current.makeTree(), uri: uri, discard: discard)
            let missing = file.map { (try? FileStatus(path: $0)) == nil } ?? false
            var database: Database?
            if modified || missing {
                var saved = tree
                saved.pruneEmpty()
                let built = Database(tree: saved, updateTime: Int64(time(nil)))
                if let file {
                    do {
                        try DatabaseFile.write(
                            try MPDDatabaseFile.encoded(
                                built, tags: configuration.metadata, fsCharset: configuration.fsCharset,
                                compress: configuration.compress),
                            to: file)
                    } catch {
                        logger.error("cannot save a mount's database", ["file": file, "error": "\(error)"])
                    }
                }
                database = built
            }
            // Grafted here, with the mounts there were when the job started: the loop uses it if they are the same.
            let prepared = database.map { database in
                let updated = mounts.map { other in
                    var other = other
                    if other.number == mount.number { other.database = database }
                    return other
                }
                return (Self.grafted(root, mounts: updated), updated.map(\.number))
            }
            bound.execute { [database] service in
                service.finishMounted(mount, database: database, prepared: prepared, modified: modified, id: id)
            }
        }
    }

    private func finishMounted(
        _ mount: Mount, database: Database?, prepared: (Database, [Int])?, modified: Bool, id: Int
    ) {
        self.running = false
        var changed: Database?
        if let database, let index = self.mounts.firstIndex(where: { $0.number == mount.number }) {
            self.mounts[index].database = database
            self.graftMounts(prepared: prepared)
            changed = self.database
        }
        self.previousRoot = nil
        self.onEvent(.updateFinished(job: id, modified: modified && changed != nil, database: changed, replaced: []))
        self.logger.info("update finished", ["job": "\(id)", "mount": mount.path, "modified": "\(modified)"])
        self.startNextJob()
    }
}
