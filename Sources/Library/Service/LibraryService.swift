// SPDX-License-Identifier: GPL-3.0-or-later

import Dispatch
import EventLoop
import Glibc
import Model
import Posix
import Synchronization

/// The music database as a running daemon keeps it: the current snapshot, the update queue (`update`, `rescan`),
/// the `auto_update` watcher and the database files. It reports what happens through ``onEvent``; the server
/// turns that into idle events and into the queue's view of the new snapshot.
///
/// Loop-confined: create it, call every method and read every property on the loop thread. Update jobs run one
/// at a time on their own thread; each posts the new snapshot to the loop, which swaps it in and reports the job
/// done, and then saves the database files (atomically) on the same thread, before the next job starts. One snapshot is kept: the music directory's songs with the mounted
/// storages' grafted in. Every rebuild of it (a job's result, `mount`, `unmount`) is made off the loop; those that
/// must start from the current snapshot wait their turn (`changeSnapshot`), so the loop never waits for one.
///
/// The database files: `db_file` always holds `mpd`'s own format (`MPDDatabaseFile`, gzip-compressed as
/// `mpd` writes it by default), so that `mpd` started on the same configuration serves the library at once;
/// beside it, `<db_file>.fermata` holds the same snapshot in Fermata's binary format (`DatabaseFile`), which
/// loads several times faster, stamped with the size, modification time and inode of the `db_file` it was
/// written with. At start-up the binary copy is used only while `db_file` still has that stamp; otherwise
/// (`mpd` saved since, or there is no copy) `db_file` is read in `mpd`'s format, and the binary copy is
/// written again off the loop. A `db_file` still in Fermata's binary format (written before this design) is
/// loaded and rewritten in `mpd`'s format at once.
public final class LibraryService {
    /// `mpd`'s update queue holds at most this many waiting jobs.
    static let maximumQueuedJobs = 32
    /// Job ids run from 1 to this, then wrap to 1.
    static let maximumJobID = 1 << 15

    /// What the service needs from the configuration.
    public struct Configuration: Sendable {
        /// The updater for the music directory.
        public var updater: Updater
        /// The database file, if any.
        public var databaseFile: String?
        /// The tag types kept (`metadata_to_use`).
        public var metadata: TagMask
        /// The `fs_charset` of `mpd`'s database file: `UTF-8` whatever `filesystem_charset` says, as `mpd` 0.23.12
        /// writes and expects it (its `GetFSCharset` never learns the configured name).
        public var fsCharset = "UTF-8"
        /// Whether `db_file` is written gzip-compressed (`mpd`'s `compress`, on unless a `database` block
        /// turns it off).
        public var compress = true
        /// Whether an update hides the files cue sheets' tracks name (`hide_playlist_targets`).
        public var hidePlaylistTargets = true
        /// Watch for changes with inotify.
        public var autoUpdate = false
        /// Watch depth; `nil` is unlimited.
        public var autoUpdateDepth: Int?
        /// Where mounted storages' databases are kept (`cache_directory`); `nil`: `mount` is refused.
        public var cacheDirectory: String?

        /// Settings for the music directory `updater` scans.
        public init(
            updater: Updater, databaseFile: String?, metadata: TagMask, compress: Bool = true,
            hidePlaylistTargets: Bool = true, autoUpdate: Bool = false, autoUpdateDepth: Int? = nil,
            cacheDirectory: String? = nil
        ) {
            self.cacheDirectory = cacheDirectory
            self.updater = updater
            self.databaseFile = databaseFile
            self.metadata = metadata
            self.compress = compress
            self.hidePlaylistTargets = hidePlaylistTargets
            self.autoUpdate = autoUpdate
            self.autoUpdateDepth = autoUpdateDepth
        }
    }

    /// What the service reports to ``onEvent``.
    public enum Event {
        /// Job `job` started (`mpd`'s idle `update`).
        case updateStarted(job: Int)
        /// Job `job` ended (idle `update`; idle `database` too when `modified`). `database`, when the job built a
        /// new snapshot, is the current one now; `replaced` holds the URIs of the cue sheet tracks it replaced
        /// (see `Updater.Result.replacedTracks`), which queued songs must not be matched to.
        case updateFinished(job: Int, modified: Bool, database: Database?, replaced: Set<String>)
        /// A storage was mounted or unmounted (`mount`, `unmount`): `database` is the current snapshot now, the
        /// music directory's songs as before with the mounts' songs grafted in. No idle event of its own.
        case mountsChanged(database: Database)
    }

    /// The current snapshot: the music directory's, with the mounted storages' grafted in (see `Mount`); the only
    /// one kept (an update of the music directory starts from its part of it). Replaced only through
    /// `replaceSnapshot`, and holds exactly `mounts`.
    public private(set) var database: Database
    /// Counts the snapshots swapped in: a job's result grafted off the loop is used only if none was since it
    /// started.
    private(set) var snapshotGeneration = 0
    /// Changes of the snapshot waiting for the one running (see `changeSnapshot`): each starts its work and
    /// returns whether it did.
    private var snapshotChanges: [() -> Bool] = []
    /// Takes the value of the running change's work, on the loop; `nil` while none runs.
    private var applyChange: ((any Sendable) -> Void)?
    /// Whether a change of the snapshot is running.
    private var changingSnapshot = false
    /// The mounted storages, in the order they were mounted.
    public internal(set) var mounts: [Mount] = []
    /// The number of the last mount (a job's result is kept only if its mount is still there).
    var lastMountNumber = 0
    /// Every mount point used since start-up.
    var mountPointsUsed: Set<String> = []
    /// While a job of the music directory reports its end: the snapshot it started from.
    var previousDatabase: Database?
    /// Receives what happens, on the loop thread.
    public var onEvent: (Event) -> Void = { _ in }

    let configuration: Configuration
    let loop: EventLoop
    let logger: Logger
    private var watcher: AutoUpdateWatcher?
    var queue: [(uri: String, discard: Bool, id: Int)] = []
    var running = false
    /// Whether the database files are being written, after start-up or after a job (the next job waits for it).
    private var saving = false
    /// Holds each write of the database files while it runs: shutdown waits for it, so what a start or a job
    /// saved is there after the stop (or the old files, never half of one: they are replaced atomically).
    private let pendingSaves = DispatchGroup()
    /// The id of the last job queued (tests set it to see the ids wrap).
    var lastJobID = 0

    /// Creates the service with an empty database; nothing is read or watched until ``start()``. Loop thread.
    public init(configuration: Configuration, loop: EventLoop, logger: Logger) {
        loop.preconditionOnLoop()
        self.configuration = configuration
        self.loop = loop
        self.logger = logger
        self.database = Database()
    }

    /// Loads the database (see the type's description), or starts a full scan when there is none (or it is
    /// unusable); then starts watching when `auto_update` is on.
    public func start() {
        let started = MonotonicClock.now()
        if let path = self.configuration.databaseFile, let (database, source, stamp) = self.load(path) {
            self.replaceSnapshot(database)
            releaseFreeMemory()
            self.logger.info(
                "database loaded",
                [
                    "songs": "\(database.songs.count)", "file": path, "format": source.rawValue,
                    "load_ms": "\((MonotonicClock.now() - started) / 1_000_000)",
                ])
            if source != .companion {
                self.saveAfterLoading(database, stamp: source == .legacy ? nil : stamp)
            }
        } else {
            _ = try? self.enqueue(uri: "", discard: false)
        }
        if self.configuration.autoUpdate {
            let watcher = AutoUpdateWatcher(
                root: self.configuration.updater.root, depth: self.configuration.autoUpdateDepth, loop: self.loop,
                logger: self.logger
            ) { [unowned self] roots in self.enqueueChanged(roots) }
            self.watcher = watcher
            watcher.start(self.database)
        }
    }

    /// Where the loaded snapshot came from.
    private enum Source: String {
        /// `<db_file>.fermata`, stamped with the current `db_file`.
        case companion = "fermata"
        /// `db_file` in `mpd`'s format.
        case mpd
        /// `db_file` in Fermata's binary format (as written before `db_file` held `mpd`'s).
        case legacy = "fermata-legacy"
    }

    /// The snapshot from the database files and the stamp `db_file` had before it was read, or `nil` (logged)
    /// when there is none to use. At start-up only.
    private func load(_ path: String) -> (Database, Source, DatabaseFile.Stamp)? {
        let metadata = self.configuration.metadata
        guard let stamp = DatabaseFile.Stamp(path: path) else { return nil }
        if let database = DatabaseFile.load(
            from: DatabaseFile.companionPath(for: path), tags: metadata, stamp: stamp)
        {
            return (database, .companion, stamp)
        }
        guard let bytes = try? readFileRange(atPath: path, offset: 0, count: .max).bytes else {
            self.logger.warning("database file unreadable, rescanning", ["file": path])
            return nil
        }
        if DatabaseFile.recognizes(bytes) {
            if let database = DatabaseFile.decode(bytes, tags: metadata) { return (database, .legacy, stamp) }
            self.logger.warning("database file unusable, rescanning", ["file": path])
            return nil
        }
        do {
            let database = try MPDDatabaseFile.decode(
                bytes, tags: metadata, fsCharset: self.configuration.fsCharset, updateTime: stamp.modificationTime)
            return (database, .mpd, stamp)
        } catch {
            self.logger.warning("database file unusable, rescanning", ["file": path, "error": "\(error)"])
            return nil
        }
    }

    /// Writes the binary copy of a snapshot just loaded from `db_file` in `mpd`'s format, stamped with `stamp`
    /// (what `db_file` was before it was read), or, without a stamp (`db_file` was in Fermata's old format),
    /// `db_file` in `mpd`'s format and then the copy; off the loop. Updates queued meanwhile start when it is
    /// done.
    private func saveAfterLoading(_ database: Database, stamp: DatabaseFile.Stamp?) {
        guard let path = self.configuration.databaseFile else { return }
        self.saving = true
        let configuration = self.configuration
        let logger = self.logger
        let bound = LoopBound(self, loop: self.loop)
        let group = self.pendingSaves
        group.enter()
        NamedThread.detach("dbsave") {
            defer { group.leave() }
            if let stamp {
                Self.saveCompanion(
                    DatabaseFile.encoded(database, tags: configuration.metadata), stamp: stamp, for: path,
                    logger: logger)
            } else {
                _ = Self.save(database, configuration: configuration, to: path, logger: logger)
            }
            // The encoding is gone: give back what it and the decoding of `mpd`'s text left on this thread's heap.
            releaseFreeMemory()
            bound.execute { service in
                service.saving = false
                service.startNextJob()
            }
        }
    }

    /// Writes `database` to `db_file` at `path` in `mpd`'s format, then the stamped binary copy beside it with
    /// `db_file`'s new modification time as its update time (`mpd`'s `db_update`); returns that copy's bytes
    /// (without the stamp), or `nil` when `db_file` could not be written. With `updateTime` (the snapshot's, which
    /// clients already see), `db_file`'s modification time is set to it first, so the two agree as in `mpd`, where
    /// `db_update` is the time of the file just saved. Any thread but the loop.
    @discardableResult
    private static func save(
        _ database: Database, configuration: Configuration, to path: String, updateTime: Int64? = nil,
        logger: Logger
    ) -> [UInt8]? {
        do {
            let text = try MPDDatabaseFile.encoded(
                database, tags: configuration.metadata, fsCharset: configuration.fsCharset,
                compress: configuration.compress)
            try DatabaseFile.write(text, to: path)
            if let updateTime { try FileStatus.setModificationTime(updateTime, ofPath: path) }
        } catch {
            logger.error("cannot save the database", ["file": path, "error": "\(error)"])
            return nil
        }
        guard let status = try? FileStatus(path: path) else { return nil }
        let encoded = DatabaseFile.encoded(
            database, tags: configuration.metadata, updateTime: status.modificationTime)
        Self.saveCompanion(encoded, stamp: DatabaseFile.Stamp(status), for: path, logger: logger)
        return encoded
    }

    /// Writes the stamped binary copy beside `db_file` `path`. Any thread but the loop.
    private static func saveCompanion(_ encoded: [UInt8], stamp: DatabaseFile.Stamp, for path: String, logger: Logger) {
        let companion = DatabaseFile.companionPath(for: path)
        do {
            try DatabaseFile.write(DatabaseFile.stamped(encoded, stamp), to: companion)
        } catch {
            logger.warning("cannot save the database copy", ["file": companion, "error": "\(error)"])
        }
    }

    /// Waits (shutdown) until the database files being written (after start-up or after a job) are saved: a few
    /// seconds at most for the largest libraries.
    public func finishSaving() {
        if self.pendingSaves.wait(timeout: .now() + .seconds(30)) == .timedOut {
            self.logger.warning("the database copy is still being written; stopping without it")
        }
    }

    /// Stops watching (shutdown).
    public func stopWatching() {
        self.watcher?.stop()
        self.watcher = nil
    }

    /// The number of directories `auto_update` watches (0 when it is off).
    var watchCount: Int { self.watcher?.watchCount ?? 0 }

    /// Queues an update of each directory the watcher reports.
    private func enqueueChanged(_ roots: [String]) {
        for path in roots {
            do {
                _ = try self.enqueue(uri: path, discard: false)
            } catch {
                self.logger.warning("auto_update: update not queued", ["path": path, "error": "\(error)"])
            }
        }
    }

    /// The id of the running job (the last one queued, as `mpd` reports it), or `nil` when idle.
    public var updatingJobID: Int? { self.running || (self.saving && !self.queue.isEmpty) ? self.lastJobID : nil }

    /// The update queue holds ``maximumQueuedJobs`` waiting jobs already (`mpd`'s `Update queue is full`).
    public struct QueueFull: Error, CustomStringConvertible {
        public var description: String { "Update queue is full" }
    }

    /// Queues an update of `uri` ("" for everything; `discard`: read every file again, as `rescan`); returns its
    /// job id.
    ///
    /// - Throws: `QueueFull` with ``maximumQueuedJobs`` jobs waiting.
    public func enqueue(uri: String, discard: Bool) throws(QueueFull) -> Int {
        if (self.running || self.saving) && self.queue.count >= Self.maximumQueuedJobs { throw QueueFull() }
        self.lastJobID = self.lastJobID >= Self.maximumJobID ? 1 : self.lastJobID + 1
        let id = self.lastJobID
        if self.running || self.saving {
            self.queue.append((uri, discard, id))
        } else {
            self.run(uri: uri, discard: discard, id: id)
        }
        return id
    }

    private func run(uri: String, discard: Bool, id: Int) {
        self.running = true
        self.onEvent(.updateStarted(job: id))
        if let (mount, rest) = self.mount(containing: uri) {
            self.runMounted(mount, uri: rest, discard: discard, id: id)
            return
        }
        // Handed over so that the job's thread lets go of the previous snapshot before the loop swaps the new one
        // in: the heap is trimmed after the swap (`finish`), and a snapshot freed later would stay resident.
        let current = Handover(self.database)
        let (mounts, generation) = (self.mounts, self.snapshotGeneration)
        let configuration = self.configuration
        let logger = self.logger
        let bound = LoopBound(self, loop: self.loop)
        let group = self.pendingSaves
        let lookups = self.database.builtLookups
        NamedThread.detach("update") {
            let leftovers = Leftovers()
            let (database, modified, replaced, save) = Self.update(
                current.take(), configuration: configuration, uri: uri, discard: discard, logger: logger,
                leftovers: leftovers)
            // Graft the mounts (the loop uses that if they are still the same), and build here the URI tables the
            // previous snapshot had (none when nothing was queued or browsed since start-up): the queue looks its
            // songs up by URI as soon as the snapshot is swapped in. Its query indexes are built once the job is
            // reported done, below.
            let prepared = database.map {
                Prepared(database: Self.grafted($0, mounts: mounts), generation: generation)
            }
            prepared?.database.prepare(lookups.uriTables)
            // The snapshot goes to the loop first, which reports the job done; then the files are written here.
            // Meanwhile the next job waits (`saving`), and shutdown waits for the write (`pendingSaves`).
            let saved = save.flatMap { time in database.map { ($0, time) } }
            if saved != nil { group.enter() }
            bound.execute { [database] service in
                if saved != nil { service.saving = true }
                service.finish(database: database, prepared: prepared, modified: modified, replaced: replaced, id: id)
            }
            // What the job left to free is freed once it is reported done.
            withExtendedLifetime(leftovers) {}
            // The query indexes the previous snapshot had, for a client's next search, built after the job is
            // reported done rather than before: with every index a library of 100k songs has, they take several
            // times as long as the rescan of a directory. A query that needs one meanwhile builds it on the loop.
            prepared?.database.prepare(lookups.queryIndexes)
            guard let (database, updateTime) = saved else { return }
            defer { group.leave() }
            if let path = configuration.databaseFile {
                Self.save(database, configuration: configuration, to: path, updateTime: updateTime, logger: logger)
            }
            // The files' encodings are gone: give back what they left on this thread's heap.
            releaseFreeMemory()
            bound.execute { service in
                service.saving = false
                service.startNextJob()
            }
        }
    }

    /// Runs the update job (`scan`) and, when it rebuilt the whole snapshot, reads it back from its encoding;
    /// returns it (`nil` when nothing changed or it does not read back), whether anything was modified, the cue
    /// tracks replaced, and the update time to save it with when it must be saved (see `scan`). Everything else the
    /// job made, its encoding too, is freed on return, but for the trees of a job that made no snapshot, held in
    /// `leftovers` (see `Leftovers`). Update thread.
    private static func update(
        _ current: Database, configuration: Configuration, uri: String, discard: Bool, logger: Logger,
        leftovers: Leftovers
    ) -> (database: Database?, modified: Bool, replaced: [String], save: Int64?) {
        let (snapshot, modified, replaced, save) = Self.scan(
            current, configuration: configuration, uri: uri, discard: discard, logger: logger, leftovers: leftovers)
        switch snapshot {
        case nil:
            return (nil, modified, replaced, nil)
        case .reusing(let database):
            return (database, modified, replaced, save)
        case .encoded(let encoded, let saved):
            // The snapshot the job built is gone: read it back from its encoding into the heap the scan left,
            // coalesced first (a restart allocates it so too).
            releaseFreeMemory()
            let database = DatabaseFile.decode(
                encoded, tags: configuration.metadata, markTargets: configuration.hidePlaylistTargets,
                alsoHidden: current.hiddenURIs)
            if database == nil { logger.error("the new database does not read back; keeping the previous one") }
            if saved { database?.markSaved() }
            return (database, modified, replaced, save)
        }
    }

    /// What an update job that made no snapshot leaves to free (its trees, as large as the library): held until the
    /// job is reported done. Update thread.
    private final class Leftovers {
        var trees: [TreeDirectory] = []
    }

    /// The snapshot an update job made.
    private enum Snapshot {
        /// A whole new one, encoded in the binary format (see `scan`); `saved`: pruned and sorted, as a save
        /// leaves it (`Database.markSaved()`).
        case encoded([UInt8], saved: Bool)
        /// One that reuses the previous snapshot, but for the path the job updated.
        case reusing(Database)
    }

    /// A value handed to another thread once: taken there, it is no longer held by the closure that carried it.
    private final class Handover<Value: Sendable>: Sendable {
        private let value: Mutex<Value?>

        init(_ value: Value) { self.value = Mutex(value) }

        /// The value; only once.
        func take() -> Value {
            self.value.withLock { value in
                defer { value = nil }
                return value!
            }
        }
    }

    /// Runs the update job over `current`'s tree and returns the snapshot it produces (`nil` when nothing changed);
    /// also whether anything was modified, the URIs of the cue sheet tracks it replaced (see
    /// `Updater.Result.replacedTracks`), and the snapshot's update time when its files must be saved (`save`, once
    /// the loop has it), as `mpd` saves its database: when the job modified it or its file is missing; `nil` when
    /// not, or without `db_file`.
    ///
    /// A job of one path, when `current` can be reused (`Database.canBeReused`), starts from a tree of that path
    /// alone (`Database.makeTree(expanding:)`) and builds the snapshot from it and `current`, copying everything
    /// else as it is. Otherwise it starts from the whole tree, and the snapshot is returned encoded in the binary
    /// format: the job's tree and the snapshot are freed on return, since the snapshot built from the tree keeps its
    /// small allocations (directory paths, child lists) on pages scattered over everything the scan allocated,
    /// which `malloc_trim` cannot return while they live. Update thread.
    private static func scan(
        _ current: Database, configuration: Configuration, uri: String, discard: Bool, logger: Logger,
        leftovers: Leftovers
    ) -> (snapshot: Snapshot?, modified: Bool, replaced: [String], save: Int64?) {
        var reusing = !uri.isEmpty && current.canBeReused
        var tree = reusing ? current.makeTree(expanding: uri) : current.makeTree(withoutMounts: true)
        var result = configuration.updater.update(tree, uri: uri, discard: discard)
        if reusing && result.tree.holdsPlaylistDirectory {
            // A playlist file's directory appeared: its tracks take from songs anywhere. The job again, whole.
            reusing = false
            tree = current.makeTree(withoutMounts: true)
            result = configuration.updater.update(tree, uri: uri, discard: discard)
        }
        let updateTime = Int64(time(nil))
        // As mpd: the database is saved when the job modified it or its file is missing (the first scan produces
        // one even when the music directory is empty); only a save prunes empty directories and sorts.
        let isFirst = tree.modificationTime == 0 && tree.children.isEmpty && tree.songs.isEmpty
        let fileMissing = configuration.databaseFile.map { (try? FileStatus(path: $0)) == nil } ?? false
        guard result.modified || isFirst || fileMissing else {
            // Nothing to save, but mpd's database in memory has what its walk found: directories holding no song,
            // after their siblings, and directories' new times. Until a save, as the snapshot now.
            // An update marks the files cue sheet tracks name, which a snapshot loaded from a file has not.
            let marks =
                configuration.hidePlaylistTargets && !current.songs.virtualSongs.isEmpty && !current.hasHiddenSongs
            guard !result.tree.hasSameDirectories(as: tree) || marks else {
                leftovers.trees = [tree, result.tree]
                return (nil, false, [], nil)
            }
            let kept = Database(
                tree: result.tree, updateTime: current.updateTime, sorted: false, reusing: reusing ? current : nil)
            if reusing { return (.reusing(kept), false, result.replacedTracks, nil) }
            return (
                .encoded(DatabaseFile.encoded(kept, tags: configuration.metadata), saved: false), false,
                result.replacedTracks, nil
            )
        }
        var saved = result.tree
        saved.pruneEmpty()
        let database = Database(tree: saved, updateTime: updateTime, reusing: reusing ? current : nil)
        let save = configuration.databaseFile == nil ? nil : updateTime
        if reusing {
            database.markSaved()
            return (.reusing(database), result.modified, result.replacedTracks, save)
        }
        return (
            .encoded(DatabaseFile.encoded(database, tags: configuration.metadata, updateTime: updateTime), saved: true),
            result.modified, result.replacedTracks, save
        )
    }

    private func finish(database: Database?, prepared: Prepared?, modified: Bool, replaced: [String], id: Int) {
        guard let database else {
            self.end(id, modified: modified, database: nil, replaced: replaced)
            return
        }
        if let prepared, self.isCurrent(prepared) {
            self.end(id, modified: modified, database: prepared.database, replaced: replaced)
            return
        }
        // Mounted or unmounted meanwhile: grafted again with the mounts there are, off the loop, after those changes.
        self.changeSnapshot(
            prepare: { [unowned self] () -> (@Sendable () -> Database)? in
                let mounts = self.mounts
                return { Self.grafted(database, mounts: mounts) }
            },
            apply: { [unowned self] grafted in
                self.end(id, modified: modified, database: grafted, replaced: replaced)
            })
    }

    /// Ends job `id` of the music directory, with `database` (grafted) as the new snapshot if it made one.
    private func end(_ id: Int, modified: Bool, database: Database?, replaced: [String]) {
        self.running = false
        self.previousDatabase = self.database
        if let database {
            self.replaceSnapshot(database)
            self.watcher?.watch(database)
        }
        self.onEvent(.updateFinished(job: id, modified: modified, database: database, replaced: Set(replaced)))
        // Asked only while the event is reported; let go of before the trim.
        self.previousDatabase = nil
        if database != nil {
            // The previous snapshot and the job's tree are gone now (unless `onEvent` kept them). Trimming a large
            // heap takes a moment: not on the loop.
            NamedThread.detach("trim") { releaseFreeMemory() }
        }
        self.logger.info("update finished", ["job": "\(id)", "modified": "\(modified)"])
        self.startNextJob()
    }

    // MARK: - Changes of the snapshot

    /// A snapshot a job grafted off the loop, and the generation of the snapshot it was grafted into.
    struct Prepared: Sendable {
        let database: Database
        let generation: Int
    }

    /// Whether `prepared` was grafted into the current snapshot, with no change waiting to replace it.
    func isCurrent(_ prepared: Prepared) -> Bool {
        prepared.generation == self.snapshotGeneration && !self.changingSnapshot && self.snapshotChanges.isEmpty
    }

    /// Swaps `database` in as the snapshot.
    func replaceSnapshot(_ database: Database) {
        self.database = database
        self.snapshotGeneration += 1
    }

    /// Changes the snapshot after the changes before it are done, rebuilding it off the loop: `prepare` runs on the
    /// loop when its turn comes and returns the work (a thread of its own runs it), or `nil` when there is nothing
    /// to do (it has told its caller why); `apply` then gets the work's value on the loop, and swaps the new
    /// snapshot in. One at a time, so each starts from the snapshot the one before it made.
    func changeSnapshot<Value: Sendable>(
        prepare: @escaping () -> (@Sendable () -> Value)?, apply: @escaping (Value) -> Void
    ) {
        self.snapshotChanges.append { [unowned self] in
            guard let work = prepare() else { return false }
            self.applyChange = { value in
                // `work` below made the value: it is a `Value`.
                guard let value = value as? Value else { preconditionFailure("a snapshot change's value changed type") }
                apply(value)
            }
            let bound = LoopBound(self, loop: self.loop)
            NamedThread.detach("graft") {
                let value = work()
                bound.execute { service in service.snapshotChanged(value) }
            }
            return true
        }
        self.startNextChange()
    }

    private func snapshotChanged(_ value: any Sendable) {
        let apply = self.applyChange
        self.applyChange = nil
        apply?(value)
        self.changingSnapshot = false
        self.startNextChange()
        // The snapshot before it is gone now: give back what it and the rebuild left, not on the loop.
        NamedThread.detach("trim") { releaseFreeMemory() }
    }

    private func startNextChange() {
        while !self.changingSnapshot, !self.snapshotChanges.isEmpty {
            let next = self.snapshotChanges.removeFirst()
            self.changingSnapshot = true
            self.changingSnapshot = next()
        }
    }

    /// Starts the first queued job, if any.
    func startNextJob() {
        guard !self.running, !self.saving, !self.queue.isEmpty else { return }
        let next = self.queue.removeFirst()
        self.run(uri: next.uri, discard: next.discard, id: next.id)
    }
}
