// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Library
import MPDProtocol
import Model
import Network
import Posix

/// The database as the server sees it: the current snapshot, the update queue, the database file.
///
/// Loop-confined. Update jobs run one at a time on their own thread; each ends by saving the database
/// file (atomically) and posting the new snapshot to the loop, which swaps it in.
final class LibraryService {
    /// `mpd`'s update queue holds at most this many waiting jobs.
    static let maximumQueuedJobs = 32
    /// Job ids run from 1 to this, then wrap to 1.
    static let maximumJobID = 1 << 15

    /// What the service needs from the configuration.
    struct Configuration: Sendable {
        /// The updater for the music directory.
        var updater: Updater
        /// The database file, if any.
        var databaseFile: String?
        /// The tag types kept (`metadata_to_use`).
        var metadata: TagMask
        /// Watch for changes with inotify.
        var autoUpdate = false
        /// Watch depth; `nil` is unlimited.
        var autoUpdateDepth: Int?
    }

    /// How long the watcher waits after the last change before it queues updates, so a burst of
    /// events (an album being copied) becomes one job.
    static let autoUpdateDelaySeconds = 1.0
    /// Above this many changed directories, one update of everything replaces one job per directory.
    static let maximumWatchedJobs = 8

    private(set) var database: Database
    private let configuration: Configuration
    private unowned let server: Server
    private var queue: [(uri: String, discard: Bool, id: Int)] = []
    private var running = false
    private var lastJobID = 0

    private var inotify: FileDescriptor?
    private var inotifyRegistration: EventLoop.Registration?
    private var watches: [Int32: String] = [:]
    /// Keyed by bytes, as directories are: two names that differ only in normalisation are two directories.
    private var watchByPath: [ByteString: Int32] = [:]
    private var changedDirectories: Set<ByteString> = []
    private var lastChange: UInt64 = 0
    private var flushTimer: EventLoop.Timer?

    init(configuration: Configuration, server: Server) {
        self.configuration = configuration
        self.server = server
        self.database = Database()
    }

    /// Loads the database file, or starts a full scan when there is none (or it is unusable).
    func start() {
        let started = MonotonicClock.now()
        if let path = self.configuration.databaseFile,
            let database = DatabaseFile.load(from: path, tags: self.configuration.metadata)
        {
            self.database = database
            releaseFreeMemory()
            self.server.logger.info(
                "database loaded",
                [
                    "songs": "\(database.songs.count)", "file": path,
                    "load_ms": "\((MonotonicClock.now() - started) / 1_000_000)",
                ])
        } else {
            if let path = self.configuration.databaseFile, (try? FileStatus(path: path)) != nil {
                self.server.logger.warning("database file unusable, rescanning", ["file": path])
            }
            _ = try? self.enqueue(uri: "", discard: false)
        }
        if self.configuration.autoUpdate { self.startWatching() }
    }

    // MARK: - auto_update

    private func startWatching() {
        do {
            let fd = try Inotify.inotify_init()
            self.inotify = fd
            self.inotifyRegistration = try self.server.loop.register(fd, events: .input) { [unowned self] _ in
                self.handleWatchEvents()
            }
            self.rebuildWatches()
        } catch {
            self.server.logger.error("auto_update: inotify unavailable", ["error": "\(error)"])
        }
    }

    /// Stops watching (shutdown).
    func stopWatching() {
        if let registration = self.inotifyRegistration { self.server.loop.deregister(registration) }
        self.inotifyRegistration = nil
        self.inotify?.close()
        self.inotify = nil
        if let timer = self.flushTimer { self.server.loop.cancel(timer) }
    }

    /// Watches every directory of the current database within the depth limit; drops watches of
    /// directories that are gone.
    private func rebuildWatches() {
        guard let fd = self.inotify else { return }
        let root = self.configuration.updater.root
        var wanted = Set<ByteString>()
        for directory in self.database.directories {
            let depth = directory.path.isEmpty ? 0 : directory.path.utf8.split(separator: UInt8(ascii: "/")).count
            if let limit = self.configuration.autoUpdateDepth, depth > limit { continue }
            wanted.insert(ByteString(directory.path))
        }
        for (path, watch) in self.watchByPath where !wanted.contains(path) {
            Inotify.inotify_rm_watch(fd, watch: watch)
            self.watchByPath.removeValue(forKey: path)
            self.watches.removeValue(forKey: watch)
        }
        for path in wanted where self.watchByPath[path] == nil {
            do {
                let watch = try Inotify.inotify_add_watch(
                    fd, path: path.text.isEmpty ? root : root + "/" + path.text, mask: Inotify.libraryMask)
                self.watches[watch] = path.text
                self.watchByPath[path] = watch
            } catch {
                self.server.logger.warning("auto_update: cannot watch", ["path": path.text, "error": "\(error)"])
            }
        }
    }

    private func handleWatchEvents() {
        guard let fd = self.inotify else { return }
        for event in Inotify.readEvents(fd) {
            guard let path = self.watches[event.watch] else { continue }
            if event.isWatchRemoved {
                self.watches.removeValue(forKey: event.watch)
                self.watchByPath.removeValue(forKey: ByteString(path))
            }
            if event.name.hasPrefix(".") && event.name.hasSuffix(".tmp") { continue }
            // A change inside a directory is picked up by updating that directory.
            self.changedDirectories.insert(ByteString(path))
        }
        guard !self.changedDirectories.isEmpty else { return }
        self.lastChange = MonotonicClock.now()
        if self.flushTimer == nil { self.scheduleFlush() }
    }

    private func scheduleFlush() {
        let deadline = self.lastChange + UInt64(Self.autoUpdateDelaySeconds * 1e9)
        self.flushTimer = self.server.loop.schedule(at: deadline) { [weak self] in
            guard let self else { return }
            self.flushTimer = nil
            if MonotonicClock.now() < self.lastChange + UInt64(Self.autoUpdateDelaySeconds * 1e9) {
                self.scheduleFlush()
            } else {
                self.queueChangedDirectories()
            }
        }
    }

    /// Queues one update per changed directory (a directory inside another changed one is covered by
    /// it), or one update of everything when many changed.
    private func queueChangedDirectories() {
        // By bytes: a name starting with a combining mark must not hide the "/" before it.
        let changed = self.changedDirectories.map(\.text).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        self.changedDirectories = []
        var roots: [String] = []
        for path in changed
        where !roots.contains(where: { $0.isEmpty || path.utf8.starts(with: $0.utf8 + [UInt8(ascii: "/")]) }) {
            roots.append(path)
        }
        if roots.count > Self.maximumWatchedJobs { roots = [""] }
        for path in roots {
            do {
                _ = try self.enqueue(uri: path, discard: false)
            } catch {
                self.server.logger.warning("auto_update: update not queued", ["path": path, "error": "\(error)"])
            }
        }
    }

    /// The id of the running job (the last one queued, as `mpd` reports it), or `nil` when idle.
    var updatingJobID: Int? { self.running ? self.lastJobID : nil }

    /// Queues an update of `uri` ("" for everything); returns its job id.
    ///
    /// - Throws: `Update queue is full` (code 54) with 32 jobs waiting.
    func enqueue(uri: String, discard: Bool) throws(AckError) -> Int {
        if self.running && self.queue.count >= Self.maximumQueuedJobs {
            throw AckError(.updateAlready, "Update queue is full")
        }
        self.lastJobID = self.lastJobID >= Self.maximumJobID ? 1 : self.lastJobID + 1
        let id = self.lastJobID
        if self.running {
            self.queue.append((uri, discard, id))
        } else {
            self.run(uri: uri, discard: discard, id: id)
        }
        return id
    }

    private func run(uri: String, discard: Bool, id: Int) {
        self.running = true
        self.server.emit(.update)
        let current = self.database
        let configuration = self.configuration
        let logger = self.server.logger
        let bound = LoopBound(self, loop: self.server.loop)
        NamedThread.detach("update") {
            let (encoded, modified) = Self.scan(current, configuration: configuration, uri: uri, discard: discard)
            var database: Database?
            if let encoded {
                if let path = configuration.databaseFile {
                    do {
                        try DatabaseFile.write(encoded, to: path)
                    } catch {
                        logger.error("cannot save the database", ["file": path, "error": "\(error)"])
                    }
                }
                // The snapshot the job built is gone: read it back from its encoding into the heap the scan
                // left, coalesced first (a restart allocates it so too).
                releaseFreeMemory()
                database = DatabaseFile.decode(encoded, tags: configuration.metadata)
                if database == nil { logger.error("the new database does not read back; keeping the previous one") }
            }
            // The queue looks its songs up by URI as soon as the snapshot is swapped in: build that index here.
            database?.prepareURILookups()
            bound.execute { [database] service in service.finish(database: database, modified: modified, id: id) }
        }
    }

    /// Runs the update job over `current`'s tree and encodes the snapshot it produces as the database file
    /// stores it (`nil` when nothing changed); also whether anything was modified. The job's tree and the
    /// snapshot are freed on return: the snapshot built from the tree keeps its small allocations (directory
    /// paths, child lists) on pages scattered over everything the scan allocated, which `malloc_trim` cannot
    /// return while they live. Update thread.
    private static func scan(
        _ current: Database, configuration: Configuration, uri: String, discard: Bool
    ) -> (encoded: [UInt8]?, modified: Bool) {
        let tree = current.makeTree()
        let result = configuration.updater.update(tree, uri: uri, discard: discard)
        let updateTime = Int64(time(nil))
        // The first scan produces a database even when the music directory is empty.
        let isFirst = tree.modificationTime == 0 && tree.children.isEmpty && tree.songs.isEmpty
        guard result.modified || isFirst else { return (nil, false) }
        let database = Database(tree: result.tree, updateTime: updateTime)
        return (DatabaseFile.encoded(database, tags: configuration.metadata), result.modified)
    }

    private func finish(database: Database?, modified: Bool, id: Int) {
        self.running = false
        if let database {
            self.database = database
            self.rebuildWatches()
            self.server.databaseChanged(database)
            // The previous snapshot and the job's tree are gone now. Trimming a large heap takes a moment: not on
            // the loop.
            NamedThread.detach("trim") { releaseFreeMemory() }
        }
        self.server.logger.info("update finished", ["job": "\(id)", "modified": "\(modified)"])
        self.server.emit(.update)
        if modified { self.server.emit(.database) }
        if !self.queue.isEmpty {
            let next = self.queue.removeFirst()
            self.run(uri: next.uri, discard: next.discard, id: next.id)
        }
    }
}
