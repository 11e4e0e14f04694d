// SPDX-License-Identifier: GPL-3.0-or-later

import EventLoop
import Model
import Posix

/// `auto_update`: watches the music directory's directories with inotify and, once changes stop for a moment,
/// reports which directories to update.
///
/// Loop-confined: create it and call every method on the loop thread; `onChanges` runs there too.
final class AutoUpdateWatcher {
    /// How long the watcher waits after the last change before it reports, so a burst of events (an album being
    /// copied) becomes one job.
    static let delaySeconds = 1.0
    /// Above this many changed directories, one update of everything replaces one job per directory.
    static let maximumJobs = 8

    private let root: String
    private let depth: Int?
    private let loop: EventLoop
    private let logger: Logger
    private let onChanges: ([String]) -> Void

    private var inotify: FileDescriptor?
    private var registration: EventLoop.Registration?
    private var watches: [Int32: String] = [:]
    /// Keyed by bytes, as directories are: two names that differ only in normalisation are two directories.
    private var watchByPath: [ByteString: Int32] = [:]
    private var changedDirectories: Set<ByteString> = []
    private var lastChange: UInt64 = 0
    private var flushTimer: EventLoop.Timer?

    /// Creates a watcher of `root` down to `depth` levels (`nil`: all), which reports the directories to update
    /// (`""` for everything) to `onChanges`. Nothing is watched until ``start(_:)``.
    init(root: String, depth: Int?, loop: EventLoop, logger: Logger, onChanges: @escaping ([String]) -> Void) {
        self.root = root
        self.depth = depth
        self.loop = loop
        self.logger = logger
        self.onChanges = onChanges
    }

    /// Starts watching the directories of `database` (logged when inotify is unavailable).
    func start(_ database: Database) {
        do {
            let fd = try Inotify.inotify_init()
            self.inotify = fd
            self.registration = try self.loop.register(fd, events: .input) { [unowned self] _ in
                self.handleEvents()
            }
            self.watch(database)
        } catch {
            self.logger.error("auto_update: inotify unavailable", ["error": "\(error)"])
        }
    }

    /// Stops watching.
    func stop() {
        if let registration = self.registration { self.loop.deregister(registration) }
        self.registration = nil
        self.inotify?.close()
        self.inotify = nil
        if let timer = self.flushTimer { self.loop.cancel(timer) }
        self.flushTimer = nil
    }

    /// Watches every directory of `database` within the depth limit (not those of mounted storages); drops watches
    /// of directories that are gone.
    func watch(_ database: Database) {
        guard let fd = self.inotify else { return }
        var wanted = Set<ByteString>()
        for (index, directory) in database.directories.enumerated() {
            // A mounted storage's directories are not the music directory's.
            if database.hasMountPoints && database.mountPoint(ofDirectory: Int32(index)) != nil { continue }
            let depth = directory.path.isEmpty ? 0 : directory.path.utf8.split(separator: UInt8(ascii: "/")).count
            if let limit = self.depth, depth > limit { continue }
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
                    fd, path: path.text.isEmpty ? self.root : self.root + "/" + path.text, mask: Inotify.libraryMask)
                self.watches[watch] = path.text
                self.watchByPath[path] = watch
            } catch {
                self.logger.warning("auto_update: cannot watch", ["path": path.text, "error": "\(error)"])
            }
        }
    }

    /// The number of directories watched.
    var watchCount: Int { self.watches.count }

    private func handleEvents() {
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
        let delay = UInt64(Self.delaySeconds * 1e9)
        self.flushTimer = self.loop.schedule(at: self.lastChange + delay) { [weak self] in
            guard let self else { return }
            self.flushTimer = nil
            if MonotonicClock.now() < self.lastChange + delay {
                self.scheduleFlush()
            } else {
                let changed = self.changedDirectories
                self.changedDirectories = []
                self.onChanges(Self.updateRoots(changed))
            }
        }
    }

    /// The directories to update for `changed`: one per changed directory, except those inside another changed
    /// one (covered by it), in byte order; or `""` (everything) when more than ``maximumJobs`` remain.
    static func updateRoots(_ changed: Set<ByteString>) -> [String] {
        // By bytes: a name starting with a combining mark must not hide the "/" before it.
        let sorted = changed.map(\.text).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        var roots: [String] = []
        for path in sorted
        where !roots.contains(where: { $0.isEmpty || path.utf8.starts(with: $0.utf8 + [UInt8(ascii: "/")]) }) {
            roots.append(path)
        }
        return roots.count > Self.maximumJobs ? [""] : roots
    }
}
