// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
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
    }

    private(set) var database: Database
    private let configuration: Configuration
    private unowned let server: Server
    private var queue: [(uri: String, discard: Bool, id: Int)] = []
    private var running = false
    private var lastJobID = 0

    init(configuration: Configuration, server: Server) {
        self.configuration = configuration
        self.server = server
        self.database = Database()
    }

    /// Loads the database file, or starts a full scan when there is none (or it is unusable).
    func start() {
        if let path = self.configuration.databaseFile,
            let (tree, updateTime) = DatabaseFile.load(from: path, tags: self.configuration.metadata)
        {
            self.database = Database(tree: tree, updateTime: updateTime)
            self.server.logger.info("database loaded", ["songs": "\(self.database.songs.count)", "file": path])
        } else {
            if let path = self.configuration.databaseFile, FileManager.default.fileExists(atPath: path) {
                self.server.logger.warning("database file unusable, rescanning", ["file": path])
            }
            _ = try? self.enqueue(uri: "", discard: false)
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
        let tree = self.database.tree
        let configuration = self.configuration
        let logger = self.server.logger
        let bound = LoopBound(self, loop: self.server.loop)
        let thread = Thread {
            let result = configuration.updater.update(tree, uri: uri, discard: discard)
            let updateTime = Int64(Date().timeIntervalSince1970)
            // The first scan produces a database even when the music directory is empty.
            let isFirst = tree.modificationTime == 0 && tree.children.isEmpty && tree.songs.isEmpty
            let changed = result.modified || isFirst
            if let path = configuration.databaseFile, changed {
                do {
                    try DatabaseFile.save(result.tree, updateTime: updateTime, tags: configuration.metadata, to: path)
                } catch {
                    logger.error("cannot save the database", ["file": path, "error": "\(error)"])
                }
            }
            let database = changed ? Database(tree: result.tree, updateTime: updateTime) : nil
            let modified = result.modified
            bound.execute { service in service.finish(database: database, modified: modified, id: id) }
        }
        thread.name = "update"
        thread.start()
    }

    private func finish(database: Database?, modified: Bool, id: Int) {
        self.running = false
        if let database { self.database = database }
        self.server.logger.info("update finished", ["job": "\(id)", "modified": "\(modified)"])
        self.server.emit(.update)
        if modified { self.server.emit(.database) }
        if !self.queue.isEmpty {
            let next = self.queue.removeFirst()
            self.run(uri: next.uri, discard: next.discard, id: next.id)
        }
    }
}
