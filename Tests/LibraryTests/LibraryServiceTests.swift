// SPDX-License-Identifier: GPL-3.0-or-later

import EventLoop
import Glibc
import Model
import Posix
import Synchronization
import TestSupport
import Testing

@testable import Library

/// A `LibraryService` on an event loop of its own thread, with what it reported.
private final class ServiceHarness: @unchecked Sendable {  // `service` is touched on the loop thread only
    let loop: EventLoop
    private var service: LibraryService?
    private let thread: NamedThread
    /// What `onEvent` received, as text: `started 1`, `finished 1 modified new` (`same`: no new snapshot).
    let events = Mutex<[String]>([])

    init(_ configuration: LibraryService.Configuration) throws {
        let loop = try EventLoop()
        self.loop = loop
        self.thread = NamedThread("library loop") { try? loop.run() }
        _ = self.onLoop { harness in
            let service = LibraryService(configuration: configuration, loop: loop, logger: .discarding)
            service.onEvent = { [unowned harness] event in
                let text =
                    switch event {
                    case .updateStarted(let job): "started \(job)"
                    case .updateFinished(let job, let modified, let database, _):
                        "finished \(job) \(modified ? "modified" : "unmodified") \(database == nil ? "same" : "new")"
                    case .mountsChanged(let database): "mounts \(database.songs.count)"
                    }
                harness.events.withLock { $0.append(text) }
            }
            harness.service = service
            return true
        }
    }

    /// Runs `body` on the loop thread and waits for its result.
    func onLoop<T: Sendable>(_ body: @escaping @Sendable (ServiceHarness) -> T) -> T {
        let result = Mutex<T?>(nil)
        let done = Semaphore()
        self.loop.execute {
            result.withLock { $0 = body(self) }
            done.post()
        }
        done.wait()
        return result.withLock { $0 }!
    }

    /// Runs `body` with the service on the loop thread and waits for its result.
    func withService<T: Sendable>(_ body: @escaping @Sendable (LibraryService) -> T) -> T {
        self.onLoop { harness in body(harness.service!) }
    }

    /// Waits until `condition` holds, looking every millisecond; `false` if it still does not after 10 s of real
    /// time (a safety net: no time is measured).
    func waitUntil(_ condition: @escaping @Sendable (LibraryService, [String]) -> Bool) -> Bool {
        for _ in 0..<10_000 {
            if self.onLoop({ harness in condition(harness.service!, harness.events.withLock { $0 }) }) { return true }
            usleep(1000)
        }
        return false
    }

    /// Waits until no job runs or waits.
    func waitUntilIdle() -> Bool { self.waitUntil { service, _ in service.updatingJobID == nil } }

    /// Mounts `storage` at `path` and waits for the outcome (`nil`: none after the safety net's time).
    func mount(_ path: String, _ storage: any Storage) -> Result<Int?, LibraryService.MountError>? {
        let outcome = Mutex<Result<Int?, LibraryService.MountError>?>(nil)
        self.withService { service in
            service.mount(path, storage: storage) { result in outcome.withLock { $0 = result } }
        }
        guard self.waitUntil({ _, _ in outcome.withLock { $0 } != nil }) else { return nil }
        return outcome.withLock { $0 }
    }

    /// Unmounts `path` and waits for the outcome (`nil`: none after the safety net's time).
    func unmount(_ path: String) -> Bool? {
        let outcome = Mutex<Bool?>(nil)
        self.withService { service in service.unmount(path) { unmounted in outcome.withLock { $0 = unmounted } } }
        guard self.waitUntil({ _, _ in outcome.withLock { $0 } != nil }) else { return nil }
        return outcome.withLock { $0 }
    }

    func stop() {
        _ = self.onLoop { harness in
            harness.service?.stopWatching()
            harness.service?.finishSaving()
            harness.service = nil
            return true
        }
        self.loop.stop()
        self.thread.join()
    }
}

@Suite(.serialized)
struct LibraryServiceTests {
    private func configuration(
        _ music: MusicDirectory, databaseFile: String?, autoUpdate: Bool = false, depth: Int? = nil
    ) -> LibraryService.Configuration {
        LibraryService.Configuration(
            updater: Updater(root: music.path, reader: FakeReader(), logger: .discarding),
            databaseFile: databaseFile, metadata: .all, autoUpdate: autoUpdate, autoUpdateDepth: depth)
    }

    /// A database file beside the music directory, removed (with its binary copy) at the end.
    private final class DatabasePath {
        let path: String
        init(_ music: MusicDirectory) { self.path = music.path + ".db" }
        deinit {
            unlink(self.path)
            unlink(DatabaseFile.companionPath(for: self.path))
        }
    }

    @Test func aFirstStartScansEverythingThenAStartLoadsTheSavedFiles() throws {
        let music = try MusicDirectory()
        try music.song("a/1.mp3", ["Title": "One"])
        try music.song("top.mp3")
        let database = DatabasePath(music)
        let first = try ServiceHarness(self.configuration(music, databaseFile: database.path))
        first.withService { $0.start() }
        #expect(first.waitUntil { _, events in events.count == 2 })
        #expect(first.events.withLock { $0 } == ["started 1", "finished 1 modified new"])
        #expect(first.withService { $0.database.songs.map(\.uri) } == ["top.mp3", "a/1.mp3"])
        #expect(first.withService { $0.updatingJobID } == nil)
        let updateTime = first.withService { $0.database.updateTime }
        // The files are written after the job is reported done; stopping waits for them.
        first.stop()
        // `db_file` in mpd's format, and the binary copy beside it; `db_file`'s time is the snapshot's update time
        // (`db_update`), as mpd's is the time of the file it saved.
        #expect((try? FileStatus(path: database.path))?.modificationTime == updateTime)
        #expect((try? FileStatus(path: DatabaseFile.companionPath(for: database.path))) != nil)

        let second = try ServiceHarness(self.configuration(music, databaseFile: database.path))
        defer { second.stop() }
        // Loaded by `start()` itself, with no job.
        #expect(
            second.withService { service in
                service.start()
                return service.database.songs.map(\.uri)
            } == ["top.mp3", "a/1.mp3"])
        #expect(second.withService { $0.updatingJobID } == nil)
        #expect(second.events.withLock { $0 }.isEmpty)
    }

    @Test func anUpdateThatChangesNothingReportsNoModification() throws {
        let music = try MusicDirectory()
        try music.song("top.mp3")
        let database = DatabasePath(music)
        let harness = try ServiceHarness(self.configuration(music, databaseFile: database.path))
        defer { harness.stop() }
        harness.withService { $0.start() }
        #expect(harness.waitUntilIdle())
        #expect(harness.withService { try? $0.enqueue(uri: "", discard: false) } == 2)
        #expect(harness.waitUntil { _, events in events.count == 4 })
        #expect(harness.events.withLock { Array($0.suffix(2)) } == ["started 2", "finished 2 unmodified same"])
        // A rescan reads every file again; the songs are the same.
        #expect(harness.withService { try? $0.enqueue(uri: "", discard: true) } == 3)
        #expect(harness.waitUntil { _, events in events.count == 6 })
        #expect(harness.events.withLock { $0.last?.hasPrefix("finished 3 ") } == true)
    }

    @Test func aNewSnapshotHasTheLookupTablesThePreviousOneHad() throws {
        let music = try MusicDirectory()
        try music.song("a/1.mp3")
        let harness = try ServiceHarness(self.configuration(music, databaseFile: nil))
        defer { harness.stop() }
        harness.withService { $0.start() }
        #expect(harness.waitUntil { _, events in events.count == 2 })
        // The first scan replaced a snapshot nobody looked anything up in: none is built, as after a start-up.
        #expect(harness.withService { $0.database.builtLookups } == .none)
        // Browsing builds the directories' table only; the next snapshot comes with it.
        #expect(harness.withService { $0.database.directory(at: "a") } != nil)
        try music.song("a/2.mp3")
        #expect(harness.withService { try? $0.enqueue(uri: "", discard: false) } == 2)
        #expect(harness.waitUntil { _, events in events.count == 4 })
        #expect(harness.events.withLock { $0.last } == "finished 2 modified new")
        #expect(harness.withService { $0.database.builtLookups } == .init(directories: true, songs: false))
        // A song looked up by URI (the queue does): the next snapshot has both, before the loop asks.
        #expect(harness.withService { $0.database.song(at: "a/2.mp3") } != nil)
        try music.song("a/3.mp3")
        #expect(harness.withService { try? $0.enqueue(uri: "", discard: false) } == 3)
        #expect(harness.waitUntil { _, events in events.count == 6 })
        #expect(harness.events.withLock { $0.last } == "finished 3 modified new")
        #expect(harness.withService { $0.database.builtLookups } == .init(directories: true, songs: true))
        // A search, a list and a listing build query indexes: the next snapshot comes with the same ones.
        let built = harness.withService { service in
            _ = service.database.foldedIndex(.artist)
            _ = service.database.column(.album)
            _ = service.database.songs(with: .genre, value: "x")
            _ = service.database.directoryPathTable()
            return service.database.builtLookups
        }
        #expect(
            built
                == .init(
                    directories: true, songs: true, postings: [.genre], columns: [.album], tagIndexes: [.artist],
                    foldedIndexes: [.artist], directoryPaths: true))
        try music.song("a/4.mp3")
        #expect(harness.withService { try? $0.enqueue(uri: "", discard: false) } == 4)
        #expect(harness.waitUntil { _, events in events.count == 8 })
        #expect(harness.events.withLock { $0.last } == "finished 4 modified new")
        // The URI tables come with the snapshot; the query indexes are built on the job's thread once it is
        // reported done (nothing on the loop builds them here: `builtLookups` only looks).
        #expect(harness.withService { $0.database.builtLookups.uriTables } == built.uriTables)
        #expect(harness.waitUntil { service, _ in service.database.builtLookups == built })
    }

    @Test func theQueueHoldsThirtyTwoWaitingJobsAndRunsThemInOrder() throws {
        let music = try MusicDirectory()
        try music.song("top.mp3")
        let harness = try ServiceHarness(self.configuration(music, databaseFile: nil))
        defer { harness.stop() }
        // All queued in one turn of the loop: the first job cannot finish before the last is queued.
        let (ids, full, running) = harness.withService { service -> ([Int], Bool, Int?) in
            let ids = (0..<LibraryService.maximumQueuedJobs + 1).compactMap { _ in
                try? service.enqueue(uri: "", discard: false)
            }
            var full = false
            do { _ = try service.enqueue(uri: "", discard: false) } catch {
                full = "\(error)" == "Update queue is full"
            }
            return (ids, full, service.updatingJobID)
        }
        #expect(ids == Array(1...33))
        #expect(full)
        // As mpd reports it: the last job queued.
        #expect(running == 33)
        #expect(harness.waitUntil { _, events in events.count == 66 })
        let expected = (1...33).flatMap {
            ["started \($0)", $0 == 1 ? "finished 1 modified new" : "finished \($0) unmodified same"]
        }
        #expect(harness.events.withLock { $0 } == expected)
        #expect(harness.withService { $0.updatingJobID } == nil)
    }

    @Test func jobIDsWrapToOneAfterTheLargest() throws {
        let music = try MusicDirectory()
        let harness = try ServiceHarness(self.configuration(music, databaseFile: nil))
        defer { harness.stop() }
        let ids = harness.withService { service in
            service.lastJobID = LibraryService.maximumJobID - 1
            return [try? service.enqueue(uri: "", discard: false), try? service.enqueue(uri: "", discard: false)]
        }
        #expect(ids == [1 << 15, 1])
        #expect(harness.waitUntilIdle())
    }

    @Test func autoUpdateQueuesAnUpdateOfTheChangedDirectory() throws {
        let music = try MusicDirectory()
        try music.song("a/old.mp3")
        try music.song("b/x.mp3")
        let database = DatabasePath(music)
        let harness = try ServiceHarness(
            self.configuration(music, databaseFile: database.path, autoUpdate: true))
        defer { harness.stop() }
        harness.withService { $0.start() }
        #expect(harness.waitUntil { _, events in events.count == 2 })
        // The root and both directories.
        #expect(harness.withService { $0.watchCount } == 3)
        try music.song("a/new.mp3")
        // After a moment of quiet, one job updates the changed directory.
        #expect(harness.waitUntil { service, _ in service.database.song(at: "a/new.mp3") != nil })
        #expect(harness.waitUntil { _, events in events.count == 4 })
        #expect(harness.events.withLock { Array($0.suffix(2)) } == ["started 2", "finished 2 modified new"])
        // A new directory is watched once it is in the database.
        try music.song("c/deep/song.mp3")
        #expect(harness.waitUntil { service, _ in service.database.song(at: "c/deep/song.mp3") != nil })
        #expect(harness.waitUntil { service, _ in service.watchCount == 5 })
    }

    @Test func autoUpdateDepthLimitsTheWatchedDirectories() throws {
        let music = try MusicDirectory()
        try music.song("a/b/c.mp3")
        let harness = try ServiceHarness(
            self.configuration(music, databaseFile: nil, autoUpdate: true, depth: 1))
        defer { harness.stop() }
        harness.withService { $0.start() }
        #expect(harness.waitUntilIdle())
        #expect(harness.waitUntil { _, events in events.count == 2 })
        // "", "a"; not "a/b".
        #expect(harness.withService { $0.watchCount } == 2)
    }

    @Test func changedDirectoriesBecomeTheFewestUpdates() {
        #expect(AutoUpdateWatcher.updateRoots(["b", "a/x", "a", "c/d"]) == ["a", "b", "c/d"])
        // A sibling whose name extends another's is not inside it.
        #expect(AutoUpdateWatcher.updateRoots(["ab", "a"]) == ["a", "ab"])
        #expect(AutoUpdateWatcher.updateRoots(["", "a", "b/c"]) == [""])
        let many = Set((0...AutoUpdateWatcher.maximumJobs).map { ByteString("d\($0)") })
        #expect(AutoUpdateWatcher.updateRoots(many) == [""])
        let most = Set((1...AutoUpdateWatcher.maximumJobs).map { ByteString("d\($0)") })
        #expect(AutoUpdateWatcher.updateRoots(most).count == AutoUpdateWatcher.maximumJobs)
    }

    /// A service of `music` (read by `TextReader`) with the cache directory `cache` and no database file, started
    /// (its first scan done).
    private func startedWithCache(_ music: MusicDirectory, _ cache: String) throws -> ServiceHarness {
        let harness = try ServiceHarness(
            LibraryService.Configuration(
                updater: Updater(root: music.path, reader: TextReader(), logger: .discarding), databaseFile: nil,
                metadata: .all, cacheDirectory: cache))
        harness.withService { $0.start() }
        #expect(harness.waitUntilIdle())
        return harness
    }

    @Test func closingTheStoragesClosesEachMountedOneOnce() throws {
        let music = try MusicDirectory()
        try music.song("a/1.mp3")
        let cache = music.path + ".cache"
        #expect(mkdir(cache, 0o755) == 0)
        let first = MemoryStorage(["x.mp3": ("X", 5)])
        let refused = MemoryStorage([:])
        defer {
            unlink(LibraryService.mountDatabasePath(for: first.uri, in: cache))
            rmdir(cache)
        }
        let harness = try self.startedWithCache(music, cache)
        defer { harness.stop() }
        #expect(harness.mount("m", first) == .success(2))
        #expect(harness.mount("n", refused) == .failure(.storageMounted))
        #expect(harness.waitUntilIdle())
        harness.withService { service in service.closeStorages() }
        #expect(first.closes.withLock { $0 } == 1)
        #expect(refused.closes.withLock { $0 } == 0)
    }

    @Test func aMountIsScannedGraftedSavedAndUnmounted() throws {
        let music = try MusicDirectory()
        try music.song("a/1.mp3")
        let cache = music.path + ".cache"
        #expect(mkdir(cache, 0o755) == 0)
        defer {
            unlink(LibraryService.mountDatabasePath(for: "smb://127.0.0.1/share", in: cache))
            rmdir(cache)
        }
        let harness = try self.startedWithCache(music, cache)
        defer { harness.stop() }
        let storage = MemoryStorage(["x.mp3": ("X", 5), "sub/": ("", 6), "sub/y.mp3": ("Y", 6)])
        // A directory of the music directory is no mount point.
        #expect(harness.mount("a", storage) == .failure(.alreadyExists))
        #expect(harness.withService { service in service.mounts.isEmpty })
        // Without a database file yet, an update of the mount point is queued.
        #expect(harness.mount("m", storage) == .success(2))
        // The queue hears of the new snapshot (the mount's songs are not scanned yet).
        #expect(harness.events.withLock { $0.contains("mounts 1") })
        #expect(harness.waitUntilIdle())
        let uris = { @Sendable (service: LibraryService) -> [String] in
            (0..<Int32(service.database.songs.count)).map { service.database.songs.uri($0) }
        }
        #expect(harness.withService(uris) == ["a/1.mp3", "m/x.mp3", "m/sub/y.mp3"])
        #expect(
            harness.withService { service in service.mountedURI(for: "m/sub/y.mp3") }
                == "smb://127.0.0.1/share/sub/y.mp3")
        // Busy, and mounted already.
        #expect(harness.mount("m", MemoryStorage([:])) == .failure(.mountPointBusy))
        #expect(harness.mount("n", storage) == .failure(.storageMounted))
        // Refused mounts leave the storage open; `unmount` closes it before its completion (mpd's reply).
        #expect(storage.closes.withLock { $0 } == 0)
        #expect(harness.unmount("m") == true)
        #expect(storage.closes.withLock { $0 } == 1)
        #expect(harness.unmount("m") == false)
        #expect(storage.closes.withLock { $0 } == 1)
        #expect(harness.withService(uris) == ["a/1.mp3"])
        #expect(harness.events.withLock { $0.last } == "mounts 1")
        // Mounted again, the database saved in the cache directory is read: no update.
        #expect(harness.mount("m", storage) == .success(nil))
        #expect(harness.events.withLock { $0.last } == "mounts 3")
        #expect(harness.withService(uris) == ["a/1.mp3", "m/x.mp3", "m/sub/y.mp3"])
        // An update of the music directory starts from its part of the one snapshot and keeps the mount's.
        try music.song("b/2.mp3")
        #expect(harness.withService { try? $0.enqueue(uri: "", discard: false) } != nil)
        #expect(harness.waitUntilIdle())
        #expect(harness.withService(uris) == ["a/1.mp3", "b/2.mp3", "m/x.mp3", "m/sub/y.mp3"])
        #expect(harness.withService { $0.database.mountRootTime($0.database.directory(at: "m")!) } != nil)
    }

    @Test func aMountReadsAndGraftsOffTheLoop() throws {
        let music = try MusicDirectory()
        try music.song("a/1.mp3")
        let cache = music.path + ".cache"
        #expect(mkdir(cache, 0o755) == 0)
        let file = LibraryService.mountDatabasePath(for: "smb://127.0.0.1/share", in: cache)
        defer {
            unlink(file)
            rmdir(cache)
        }
        let harness = try self.startedWithCache(music, cache)
        defer { harness.stop() }
        // The mount's database file is a FIFO: reading it waits until a writer comes and goes.
        #expect(mkfifo(file, 0o644) == 0)
        let outcome = Mutex<Result<Int?, LibraryService.MountError>?>(nil)
        let storage = MemoryStorage(["x.mp3": ("X", 5)])
        let before = harness.withService { service in
            service.mount("m", storage: storage) { result in outcome.withLock { $0 = result } }
            return service.database.songs.count
        }
        #expect(before == 1)
        // The loop runs on (the harness waits for it) while the mount waits for its file; nothing changed yet.
        for _ in 0..<3 {
            #expect(harness.withService { service in service.database.songs.count } == 1)
            #expect(harness.withService { service in service.mounts.isEmpty })
        }
        #expect(outcome.withLock { $0 } == nil)
        // An update queued meanwhile waits for nothing; the mount's rebuild comes after the one it started from.
        #expect(harness.withService { try? $0.enqueue(uri: "", discard: false) } == 2)
        let writer = open(file, O_WRONLY)
        #expect(writer >= 0)
        close(writer)
        // An empty file is no database: mounted without one, and an update of the mount point is queued.
        #expect(harness.waitUntil { _, _ in outcome.withLock { $0 } != nil })
        #expect(outcome.withLock { $0 } == .success(3))
        #expect(harness.waitUntilIdle())
        #expect(harness.withService { service in service.database.song(at: "m/x.mp3") != nil })
        #expect(harness.withService { service in service.database.song(at: "a/1.mp3") != nil })
    }

    @Test func aTreeWithoutMountsLeavesOutTheMountPointsAndWhatTheyHold() {
        var root = TreeDirectory(name: "")
        root.songs[ByteString("top.mp3")] = TreeSong(
            name: "top.mp3", modificationTime: 0, size: 0, info: SongInfo(tags: []))
        var a = TreeDirectory(name: "a")
        a.songs[ByteString("1.mp3")] = TreeSong(name: "1.mp3", modificationTime: 0, size: 0, info: SongInfo(tags: []))
        root.children[ByteString("a")] = a
        var m = TreeDirectory(name: "m")
        var sub = TreeDirectory(name: "sub")
        sub.songs[ByteString("x.mp3")] = TreeSong(name: "x.mp3", modificationTime: 0, size: 0, info: SongInfo(tags: []))
        m.children[ByteString("sub")] = sub
        root.children[ByteString("m")] = m
        let plain = Database(tree: root, updateTime: 1)
        let marked = plain.marking(mountRoots: [plain.directory(at: "m")!: 7])
        let without = Database(tree: marked.makeTree(withoutMounts: true), updateTime: 1)
        #expect(without.directories.map(\.path) == ["", "a"])
        #expect((0..<Int32(without.songs.count)).map { without.songs.uri($0) } == ["top.mp3", "a/1.mp3"])
        // Unmarked, the same directory is the music directory's own.
        #expect(Database(tree: plain.makeTree(withoutMounts: true), updateTime: 1).directories.count == 4)
    }
}
