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
        /// A storage is mounted there already (`mpd`'s `Mount point busy`).
        case mountPointBusy
        /// The storage is mounted already, elsewhere (`mpd`'s `This storage is already mounted`).
        case storageMounted
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

    /// Mounts `storage` at `path` (a name at the root), after the snapshot changes before it: its database is read
    /// from the cache directory and grafted into the snapshot off the loop; when there is none yet (and `update`)
    /// an update of `path` is queued, as `mpd` does. `completion` gets, on the loop, the id of that job, if any,
    /// or why the database refused (`mpd`'s simple database's errors, and the mount point or storage being
    /// mounted by then).
    public func mount(
        _ path: String, storage: any Storage, update: Bool = true,
        completion: @escaping (Result<Int?, MountError>) -> Void
    ) {
        let file = self.configuration.cacheDirectory.map { Self.mountDatabasePath(for: storage.uri, in: $0) }
        self.changeSnapshot(
            prepare: { [unowned self] () -> (@Sendable () -> (database: Database, mount: Mount, loaded: Bool)?)? in
                guard let file else {
                    completion(.failure(.noCacheDirectory))
                    return nil
                }
                if self.mounts.contains(where: { $0.path == path }) {
                    completion(.failure(.mountPointBusy))
                    return nil
                }
                if self.mounts.contains(where: { $0.storage.uri == storage.uri }) {
                    completion(.failure(.storageMounted))
                    return nil
                }
                let (base, others, configuration, logger) = (
                    self.database, self.mounts, self.configuration, self.logger
                )
                self.lastMountNumber += 1
                let number = self.lastMountNumber
                return {
                    // The snapshot holds exactly `others`: any other directory of this name is the music directory's.
                    if base.directory(at: path) != nil { return nil }
                    let loaded = Self.loadMountDatabase(file, configuration: configuration, logger: logger)
                    let mount = Mount(path: path, storage: storage, database: loaded ?? Database(), number: number)
                    return (Self.grafted(base, mounts: others + [mount]), mount, loaded != nil)
                }
            },
            apply: { [unowned self] result in
                guard let result else {
                    completion(.failure(.alreadyExists))
                    return
                }
                self.mountPointsUsed.insert(path)
                self.mounts.append(result.mount)
                self.replaceSnapshot(result.database)
                self.onEvent(.mountsChanged(database: self.database))
                completion(.success(!result.loaded && update ? try? self.enqueue(uri: path, discard: false) : nil))
            })
    }

    /// Mounts each of `storages` at its mount point, as `mount(_:storage:update:completion:)` without an update,
    /// all in one rebuild of the snapshot, made here: for the state file's mounts, restored at start-up before the
    /// loop serves anyone (as the database itself is loaded), so that the queue restored next finds their songs.
    /// Returns the mounts refused, with why.
    public func restoreMounts(_ storages: [(path: String, storage: any Storage)]) -> [(path: String, MountError)] {
        guard let directory = self.configuration.cacheDirectory else {
            return storages.map { ($0.path, .noCacheDirectory) }
        }
        var refused: [(path: String, MountError)] = []
        var added: [Mount] = []
        for (path, storage) in storages {
            if self.mounts.contains(where: { $0.path == path }) || added.contains(where: { $0.path == path }) {
                refused.append((path, .mountPointBusy))
            } else if (self.mounts + added).contains(where: { $0.storage.uri == storage.uri }) {
                refused.append((path, .storageMounted))
            } else if self.database.directory(at: path) != nil {
                refused.append((path, .alreadyExists))
            } else {
                self.lastMountNumber += 1
                let file = Self.mountDatabasePath(for: storage.uri, in: directory)
                let loaded = Self.loadMountDatabase(file, configuration: self.configuration, logger: self.logger)
                added.append(
                    Mount(path: path, storage: storage, database: loaded ?? Database(), number: self.lastMountNumber))
            }
        }
        guard !added.isEmpty else { return refused }
        self.mountPointsUsed.formUnion(added.map(\.path))
        self.mounts += added
        self.replaceSnapshot(Self.grafted(self.database, mounts: self.mounts))
        self.onEvent(.mountsChanged(database: self.database))
        return refused
    }

    /// Unmounts the storage at `path`, after the snapshot changes before it: its waiting update jobs are dropped,
    /// a running one's result will be; the storage is closed (``Storage/close()``) off the loop before the
    /// completion. `completion` gets, on the loop, `false` when nothing is mounted there.
    public func unmount(_ path: String, completion: @escaping (Bool) -> Void) {
        self.changeSnapshot(
            prepare: { [unowned self] () -> (@Sendable () -> (database: Database, number: Int))? in
                guard let index = self.mounts.firstIndex(where: { $0.path == path }) else {
                    completion(false)
                    return nil
                }
                var others = self.mounts
                let removed = others.remove(at: index)
                let (number, storage) = (removed.number, removed.storage)
                let base = self.database
                // As mpd, the storage goes (a UDisks2 file system is unmounted) before `unmount`'s reply.
                return { [others] in
                    let database = Self.grafted(base, mounts: others)
                    storage.close()
                    return (database, number)
                }
            },
            apply: { [unowned self] result in
                self.mounts.removeAll { $0.number == result.number }
                self.queue.removeAll { Self.firstComponent(of: $0.uri) == path }
                self.replaceSnapshot(result.database)
                self.onEvent(.mountsChanged(database: self.database))
                completion(true)
            })
    }

    /// Closes every mounted storage (``Storage/close()``), as `mpd`'s storages go when it exits. Blocks: call it
    /// once the loop has stopped.
    public func closeStorages() {
        for mount in self.mounts { mount.storage.close() }
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
        guard let previous = self.previousDatabase else { return false }
        guard self.mountPointsUsed.contains(Self.firstComponent(of: uri)) else { return true }
        // A song of the music directory's own directory of that name (not of a storage mounted there).
        guard let song = previous.song(at: uri) else { return false }
        return previous.mountPoint(ofDirectory: previous.songs.directory(song)) == nil
    }

    static func firstComponent(of uri: String) -> String {
        guard let slash = uri.utf8.firstIndex(of: UInt8(ascii: "/")) else { return uri }
        return String(uri[..<slash])
    }

    /// The database of a mount from its file, or `nil` when there is none (or it is unusable: logged). Any thread.
    static func loadMountDatabase(_ file: String, configuration: Configuration, logger: Logger) -> Database? {
        let bytes: [UInt8]
        do {
            bytes = try readFileRange(atPath: file, offset: 0, count: .max).bytes
        } catch {
            if error.errno != .noSuchFile {
                logger.warning("cannot read a mount's database", ["file": file, "error": "\(error)"])
            }
            return nil
        }
        let modificationTime = (try? FileStatus(path: file))?.modificationTime ?? 0
        do {
            return try MPDDatabaseFile.decode(
                bytes, tags: configuration.metadata, fsCharset: configuration.fsCharset, updateTime: modificationTime)
        } catch {
            logger.warning("a mount's database is unusable", ["file": file, "error": "\(error)"])
            return nil
        }
    }

    /// `base`'s music directory part (any mount points it has are left out) with each mount's database grafted in
    /// as a directory of the root named after its mount point, after the music directory's own (where `mpd` adds a
    /// mount point), without a modification time (-1: as `mpd` lists a mount point at the root), marked as mount
    /// points; its URI lookups are ready. The one snapshot kept: the music directory's part is not held apart.
    /// `base` itself when it has no mount points and there are no mounts. Any thread; a rebuild of the whole
    /// snapshot, so never the loop's.
    static func grafted(_ base: Database, mounts: [Mount]) -> Database {
        guard !mounts.isEmpty || base.hasMountPoints else { return base }
        var tree = base.makeTree(withoutMounts: true)
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
            tree: tree, updateTime: base.updateTime, sorted: false, markTargets: base.hasHiddenSongs)
        var roots: [Int32: Int64] = [:]
        for mount in mounts {
            if let index = grafted.directory(at: mount.path) {
                roots[index] = mount.database.directories.first?.modificationTime ?? 0
            }
        }
        let database = roots.isEmpty ? grafted : grafted.marking(mountRoots: roots)
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
        let (base, generation, mounts) = (self.database, self.snapshotGeneration, self.mounts)
        let logger = self.logger
        let bound = LoopBound(self, loop: self.loop)
        let lookups = self.database.builtLookups
        NamedThread.detach("update") {
            let (tree, modified) = updater.update(current.makeTree(), uri: uri, discard: discard)
            let missing = file.map { (try? FileStatus(path: $0)) == nil } ?? false
            var database: Database?
            // The walk gives the root the storage's time even when nothing else changed (as mpd's walk does); the
            // file keeps no time for the root, so it is written only when the songs changed (or it is missing).
            let rootTimeChanged = tree.modificationTime != (current.directories.first?.modificationTime ?? -1)
            if modified || missing || rootTimeChanged {
                var saved = tree
                saved.pruneEmpty()
                let built = Database(tree: saved, updateTime: Int64(time(nil)))
                if let file, modified || missing {
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
            // Grafted here into the snapshot the job started from: the loop uses it if that is still the current one.
            let prepared = database.map { database in
                let updated = mounts.map { other in
                    var other = other
                    if other.number == mount.number { other.database = database }
                    return other
                }
                return Prepared(database: Self.grafted(base, mounts: updated), generation: generation)
            }
            prepared?.database.prepare(lookups.uriTables)
            bound.execute { [database] service in
                service.finishMounted(mount, database: database, prepared: prepared, modified: modified, id: id)
            }
            // As for an update of the music directory: the query indexes after the job is reported done.
            prepared?.database.prepare(lookups.queryIndexes)
        }
    }

    private func finishMounted(_ mount: Mount, database: Database?, prepared: Prepared?, modified: Bool, id: Int) {
        let end = { [unowned self] (changed: Database?) in
            self.running = false
            self.previousDatabase = nil
            self.onEvent(
                .updateFinished(job: id, modified: modified && changed != nil, database: changed, replaced: []))
            self.logger.info("update finished", ["job": "\(id)", "mount": mount.path, "modified": "\(modified)"])
            self.startNextJob()
        }
        guard let database, let index = self.mounts.firstIndex(where: { $0.number == mount.number }) else {
            end(nil)
            return
        }
        if let prepared, self.isCurrent(prepared) {
            self.mounts[index].database = database
            self.replaceSnapshot(prepared.database)
            end(self.database)
            return
        }
        // The snapshot changed meanwhile (a mount, an unmount): grafted again, off the loop, after those changes.
        self.changeSnapshot(
            prepare: { [unowned self] () -> (@Sendable () -> Database)? in
                guard let index = self.mounts.firstIndex(where: { $0.number == mount.number }) else {
                    end(nil)
                    return nil
                }
                var updated = self.mounts
                updated[index].database = database
                let base = self.database
                return { [updated] in Self.grafted(base, mounts: updated) }
            },
            apply: { [unowned self] grafted in
                if let index = self.mounts.firstIndex(where: { $0.number == mount.number }) {
                    self.mounts[index].database = database
                }
                self.replaceSnapshot(grafted)
                end(self.database)
            })
    }
}
