// SPDX-License-Identifier: GPL-3.0-or-later

import Dispatch
import Glibc
import Model
import Posix
import RawText
import Synchronization

/// Walks the music directory and brings a tree up to date, the way `mpd`'s update job does.
///
/// Runs on a background thread; tag reading is spread over worker threads. Files whose modification
/// time and size are unchanged (the time alone for a song from `mpd`'s database, whose size is unknown) are not
/// read again (unless `discard` is set, as for `rescan`). A file
/// that cannot be read is logged once and skipped; nothing in the music directory can stop the walk.
public struct Updater: Sendable {
    /// Symlink policy, from `follow_inside_symlinks` and `follow_outside_symlinks`.
    public struct SymlinkPolicy: Sendable {
        /// Follow links that stay inside the music directory.
        public var followInside = true
        /// Follow links that leave it.
        public var followOutside = true

        /// Creates a policy.
        public init(followInside: Bool = true, followOutside: Bool = true) {
            self.followInside = followInside
            self.followOutside = followOutside
        }
    }

    /// The absolute music directory, without a trailing slash.
    public let root: String
    /// Reads songs.
    public let reader: any SongInfoReader
    /// Symlink policy.
    public let symlinks: SymlinkPolicy
    /// Where to log unreadable files.
    public let logger: Logger
    /// How many files are read at once.
    public let concurrency: Int
    /// The tag types kept (`metadata_to_use`); others are dropped when a file is read, as in `mpd`.
    public let metadata: TagMask

    /// Creates an updater for the music directory at `root`.
    public init(
        root: String, reader: any SongInfoReader, symlinks: SymlinkPolicy = SymlinkPolicy(), logger: Logger,
        metadata: TagMask = .all, concurrency: Int = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    ) {
        self.metadata = metadata
        var root = root
        while root.count > 1 && root.hasSuffix("/") { root.removeLast() }
        self.root = root
        self.reader = reader
        self.symlinks = symlinks
        self.logger = logger
        self.concurrency = concurrency
    }

    /// The outcome of a job.
    public struct Result: Sendable {
        /// The updated tree.
        public var tree: TreeDirectory
        /// Whether anything changed.
        public var modified: Bool
        /// The URIs of the tracks of playlist directories the job replaced (a changed cue sheet, or any with
        /// `discard`): `mpd` deletes those songs, which takes them out of the queue, before it makes the new
        /// ones, even where a new track has the same URI.
        public var replacedTracks: [String] = []
    }

    private struct PendingRead: Sendable {
        var directory: [String]
        var name: String
        var path: String
        var status: FileStatus
        /// Its position in the read queue (set when it is queued).
        var index = 0
    }

    /// The files the walk queued, in order; each is handed to `queue` at once, so readers start while the
    /// walk goes on.
    private struct PendingReads {
        var reads: [PendingRead] = []
        let queue: ReadQueue
        /// The URIs of the tracks of playlist directories the walk replaced (see `Result.replacedTracks`).
        var replacedTracks: [String] = []

        mutating func append(_ read: PendingRead) {
            var read = read
            read.index = self.queue.add(read.path)
            self.reads.append(read)
        }
    }

    /// Updates `uri` ("" for everything) in `tree`.
    ///
    /// - Parameters:
    ///   - discard: re-read every file, even unchanged ones (`rescan`).
    ///   - isCancelled: polled between directories; the job then stops and reports what it has.
    public func update(
        _ tree: TreeDirectory, uri: String, discard: Bool, isCancelled: @Sendable () -> Bool = { false }
    ) -> Result {
        var tree = tree
        var modified = false
        let queue = ReadQueue()
        var pending = PendingReads(queue: queue)
        let reader = discard ? self.reader.startRereading() : self.reader.startReading()
        let readers = self.startReading(queue, reader: reader)
        let components = uri.split(separator: "/").map(String.init)

        if components.isEmpty {
            if let status = try? FileStatus(path: self.root), status.kind == .directory {
                tree.modificationTime = status.modificationTime
                tree.inode = status.inode
                tree.device = status.device
                self.walk(
                    &tree, components: [], ancestors: [], exclude: ExcludeList(), discard: discard, pending: &pending,
                    modified: &modified, isCancelled: isCancelled, fanOut: self.concurrency > 1 ? 2 : 0)
            } else {
                self.logger.error("music directory is not readable", ["path": self.root])
            }
        } else {
            self.updatePath(
                &tree, components: components[...], done: [], ancestors: [(tree.device, tree.inode)], discard: discard,
                pending: &pending, modified: &modified, isCancelled: isCancelled)
        }

        // The walk is done: this thread reads too, until every queued file is read.
        queue.finish()
        self.read(queue, reader: reader)
        readers.wait()
        reader.readingFinished()
        let results = queue.results
        let reads = pending.reads
        // The walk queued each directory's files together: find the directory once for each run of them.
        var start = 0
        while start < reads.count {
            var end = start + 1
            while end < reads.count && Self.sameBytes(reads[end].directory, reads[start].directory) { end += 1 }
            tree.withDirectory(at: reads[start].directory[...]) { directory in
                for read in reads[start..<end] {
                    if let info = results[read.index] {
                        directory.songs[ByteString(read.name)] = TreeSong(
                            name: read.name, modificationTime: read.status.modificationTime, size: read.status.size,
                            info: info)
                        modified = true
                    } else if directory.songs.removeValue(forKey: ByteString(read.name)) != nil {
                        // A file that cannot be read changes the library only if it was a song before, as in mpd:
                        // an unreadable new file is skipped (and tried again by the next update).
                        modified = true
                    }
                }
            }
            start = end
        }
        if Self.purgeDanglingTracks(&tree) { modified = true }
        if modified { tree.pruneEmpty() }
        return Result(tree: tree, modified: modified, replacedTracks: pending.replacedTracks)
    }

    private func path(of components: [String]) -> String {
        components.isEmpty ? self.root : self.root + "/" + components.joined(separator: "/")
    }

    /// Updates one named path below the root: a directory subtree, a single file, or a vanished entry.
    private func updatePath(
        _ directory: inout TreeDirectory, components: ArraySlice<String>, done: [String],
        ancestors: [(UInt64, UInt64)], discard: Bool, pending: inout PendingReads, modified: inout Bool,
        isCancelled: @Sendable () -> Bool
    ) {
        guard let name = components.first else { return }
        let here = done + [name]
        let fullPath = self.path(of: here)
        guard !RawText.contains(UInt8(ascii: "\n"), in: name), !self.skipSymlink(name: name, directory: done),
            let status = try? FileStatus(path: fullPath)
        else {
            if directory.removeEntry(named: name, includingPlaylist: true) { modified = true }
            return
        }
        if components.count > 1 {
            if status.kind == .regular, components.count == 2, let song = components.last,
                directory.children[ByteString(name)]?.isContainer == true
            {
                // As mpd: a song inside a container is no file on disk, so updating its URI deletes it (until
                // the container file changes).
                if directory.children[ByteString(name)]!.songs.removeValue(forKey: ByteString(song)) != nil {
                    modified = true
                }
                return
            }
            guard status.kind == .directory else { return }
            if directory.children[ByteString(name)] == nil {
                // As mpd's DirectoryMakeChildChecked: a directory on the way is no modification by itself.
                var child = TreeDirectory(name: name)
                child.modificationTime = status.modificationTime
                child.inode = status.inode
                child.device = status.device
                child.rank = directory.children.count
                directory.children[ByteString(name)] = child
            }
            self.updatePath(
                &directory.children[ByteString(name)]!, components: components.dropFirst(), done: here,
                ancestors: ancestors + [(status.device, status.inode)], discard: discard, pending: &pending,
                modified: &modified, isCancelled: isCancelled)
        } else {
            var exclude = ExcludeList()
            for depth in 0...done.count {
                exclude = ExcludeList(
                    inheriting: exclude, path: self.path(of: Array(done.prefix(depth))) + "/.mpdignore")
            }
            guard !exclude.matches(name) else { return }
            self.visit(
                &directory, name: name, status: status, components: done, ancestors: ancestors, exclude: exclude,
                discard: discard, pending: &pending, modified: &modified, isCancelled: isCancelled)
        }
    }

    /// Brings `directory` (at `components`) up to date with the file system. `fanOut` levels of subdirectories
    /// (none by default) are walked by `concurrency` threads at once (each its own subtrees), then put back in the
    /// order a walk of one thread leaves them: the whole library's update walks its top two levels so (a library
    /// of one top directory, `Music/Artist/…`, gets its artists walked side by side). `parent`: the open descriptor
    /// of the directory holding this one, which is then opened relative to it.
    private func walk(
        _ directory: inout TreeDirectory, components: [String], ancestors: [(UInt64, UInt64)],
        exclude inherited: ExcludeList, discard: Bool, pending: inout PendingReads, modified: inout Bool,
        isCancelled: @Sendable () -> Bool, fanOut: Int = 0, parent: Int32? = nil
    ) {
        if isCancelled() { return }
        let fullPath = self.path(of: components)
        let opened: OpenDirectory
        do {
            // Relative to the parent when it is open (the kernel resolves the name alone), else by its path.
            if let parent, let name = components.last {
                opened = try OpenDirectory(name: name, in: parent)
            } else {
                opened = try OpenDirectory(path: fullPath)
            }
        } catch {
            self.logger.warning("cannot read directory", ["path": fullPath, "error": "\(error)"])
            return
        }
        // Open until the sub-directories, opened relative to it, are walked.
        defer { withExtendedLifetime(opened) {} }
        let names = opened.names()
        // Opened only when the directory lists one (most have none, and an open that fails costs a path walk).
        let exclude =
            names.contains { $0.utf8.count == 10 && $0 == ".mpdignore" }
            ? ExcludeList(inheriting: inherited, path: fullPath + "/.mpdignore") : inherited
        // By bytes: names that differ only in Unicode normalisation are different files.
        let present = Set(names.map { ByteString($0) })
        // Entries that vanished or are now excluded.
        for name in directory.children.keys where !present.contains(name) || exclude.matches(name.text) {
            directory.children.removeValue(forKey: name)
            modified = true
        }
        for name in directory.songs.keys where !present.contains(name) || exclude.matches(name.text) {
            directory.songs.removeValue(forKey: name)
            modified = true
        }
        let playlistCount = directory.playlists.count
        directory.playlists.removeAll { !present.contains(ByteString($0.name)) || exclude.matches($0.name) }
        if directory.playlists.count != playlistCount { modified = true }
        let ancestors = ancestors + [(directory.device, directory.inode)]
        var branches: [Branch] = []
        for name in names where !RawText.contains(UInt8(ascii: "\n"), in: name) && !exclude.matches(name) {
            guard !self.skipSymlink(name: name, directory: components),
                let status = try? opened.status(of: name)
            else {
                if directory.removeEntry(named: name) { modified = true }
                continue
            }
            if fanOut > 0 && status.kind == .directory {
                // Taken out now, as a walk of one thread would take it (its rank counts the ones taken before).
                if let child = self.takeChild(
                    &directory, name: name, status: status, components: components, ancestors: ancestors,
                    rank: directory.children.count + branches.count, modified: &modified)
                {
                    branches.append(Branch(name: name, child: child))
                }
                continue
            }
            self.visit(
                &directory, name: name, status: status, components: components, ancestors: ancestors,
                exclude: exclude, discard: discard, pending: &pending, modified: &modified, isCancelled: isCancelled,
                parent: opened.descriptor)
        }
        guard !branches.isEmpty else { return }
        let walked = self.walk(
            branches, components: components, ancestors: ancestors, exclude: exclude, discard: discard,
            queue: pending.queue, isCancelled: isCancelled, fanOut: fanOut - 1, parent: opened.descriptor)
        for branch in walked {
            directory.children[ByteString(branch.name)] = branch.child
            pending.reads += branch.reads
            pending.replacedTracks += branch.replacedTracks
            if branch.modified { modified = true }
        }
    }

    /// A subdirectory walked on a thread of its own (see `walk(_:components:…fanOut:)`), and what its walk found.
    private struct Branch: Sendable {
        var name: String
        var child: TreeDirectory
        var reads: [PendingRead] = []
        var replacedTracks: [String] = []
        var modified = false
    }

    /// Walks each branch's directory, `concurrency` at a time (with `fanOut` more levels fanned out), queueing its
    /// files on `queue`; returns them walked, in their order.
    private func walk(
        _ branches: [Branch], components: [String], ancestors: [(UInt64, UInt64)], exclude: ExcludeList,
        discard: Bool, queue: ReadQueue, isCancelled: @Sendable () -> Bool, fanOut: Int, parent: Int32
    ) -> [Branch] {
        let work = BranchWork(branches)
        return withoutActuallyEscaping(isCancelled) { isCancelled in
            let walkBranches: @Sendable () -> Void = {
                while let (index, branch) = work.next() {
                    var branch = branch
                    var pending = PendingReads(queue: queue)
                    self.walk(
                        &branch.child, components: components + [branch.name], ancestors: ancestors,
                        exclude: exclude, discard: discard, pending: &pending, modified: &branch.modified,
                        isCancelled: isCancelled, fanOut: fanOut, parent: parent)
                    branch.reads = pending.reads
                    branch.replacedTracks = pending.replacedTracks
                    work.finish(index, branch)
                }
            }
            // Threads of their own, not `DispatchQueue.concurrentPerform`'s: libdispatch runs one nested in another
            // with its width divided by the outer one's, which on two processors is one, so the big directory of a
            // library under one top directory (`Music/Artist/…`) was walked by one thread while the other idled.
            // At most `concurrency` of them at once, over every level (and every update), so a nested level
            // still gets its helpers while an outer one ends its last branches.
            var helpers: [NamedThread] = []
            for _ in 1..<min(self.concurrency, branches.count) where Self.takeWalker(limit: self.concurrency) {
                helpers.append(
                    NamedThread("walk") {
                        walkBranches()
                        Self.walkers.subtract(1, ordering: .relaxed)
                    })
            }
            walkBranches()
            for helper in helpers { helper.join() }
            return work.branches
        }
    }

    /// How many helper threads of fanned-out walks run (see `walk(_:components:…queue:isCancelled:fanOut:)`).
    private static let walkers = Atomic(0)

    /// Counts one more helper thread, unless `limit` already run.
    private static func takeWalker(limit: Int) -> Bool {
        var running = Self.walkers.load(ordering: .relaxed)
        while running < limit {
            let (exchanged, original) = Self.walkers.compareExchange(
                expected: running, desired: running + 1, ordering: .relaxed)
            if exchanged { return true }
            running = original
        }
        return false
    }

    /// The branches of a fanned-out walk, handed out one at a time to the threads that walk them.
    private final class BranchWork: Sendable {
        private let state: Mutex<(branches: [Branch], next: Int)>

        init(_ branches: [Branch]) { self.state = Mutex((branches, 0)) }

        /// The next branch to walk and its position, or `nil` when every one was taken.
        func next() -> (Int, Branch)? {
            self.state.withLock { state in
                guard state.next < state.branches.count else { return nil }
                state.next += 1
                return (state.next - 1, state.branches[state.next - 1])
            }
        }

        /// Puts branch `index` back, walked.
        func finish(_ index: Int, _ branch: Branch) { self.state.withLock { $0.branches[index] = branch } }

        /// Every branch (once each was walked and put back).
        var branches: [Branch] { self.state.withLock { $0.branches } }
    }

    /// `parent`: the open descriptor of `directory` (see `walk(_:components:…parent:)`), when it is open.
    private func visit(
        _ directory: inout TreeDirectory, name: String, status: FileStatus, components: [String],
        ancestors: [(UInt64, UInt64)], exclude: ExcludeList, discard: Bool, pending: inout PendingReads,
        modified: inout Bool, isCancelled: @Sendable () -> Bool, parent: Int32? = nil
    ) {
        let key = ByteString(name)
        switch status.kind {
        case .regular:
            let suffix = Suffix.ofPath(name).map(String.init)
            let isSong = suffix.map { self.reader.supports(suffix: $0) } ?? false
            // Most files of an update are songs it leaves as they are: what the steps below do for one, looked
            // up once (no directory of that name to take out; a song from mpd's database gets its size).
            if isSong, !discard, directory.children.isEmpty || directory.children.index(forKey: key) == nil,
                let index = directory.songs.index(forKey: key)
            {
                let existing = directory.songs.values[index]
                if existing.modificationTime == status.modificationTime,
                    existing.size == status.size || existing.size < 0
                {
                    if existing.size < 0 { directory.songs.values[index].size = status.size }
                    return
                }
            }
            if isSong,
                self.visitContainer(
                    &directory, name: name, status: status, components: components, discard: discard,
                    modified: &modified)
            {
                return
            }
            if !isSong, let suffix, self.reader.listsPlaylistAsDirectory(suffix: suffix) {
                self.visitPlaylistDirectory(
                    &directory, name: name, suffix: suffix, status: status, components: components, discard: discard,
                    pending: &pending, modified: &modified)
            } else if directory.children.removeValue(forKey: key) != nil {
                modified = true
            }
            guard isSong else {
                if directory.songs.removeValue(forKey: key) != nil { modified = true }
                if let suffix, self.reader.listsPlaylist(suffix: suffix) {
                    if directory.setPlaylist(TreePlaylist(name: name, modificationTime: status.modificationTime)) {
                        modified = true
                    }
                } else if let index = directory.playlistIndex(named: name) {
                    directory.playlists.remove(at: index)
                    modified = true
                }
                return
            }
            // A song from mpd's database has no size (-1): its modification time alone decides, as in mpd.
            if let existing = directory.songs[key], !discard,
                existing.modificationTime == status.modificationTime, existing.size == status.size || existing.size < 0
            {
                if existing.size < 0 { directory.songs[key]?.size = status.size }
                return
            }
            pending.append(
                PendingRead(directory: components, name: name, path: self.path(of: components + [name]), status: status)
            )
        case .directory:
            guard
                var child = self.takeChild(
                    &directory, name: name, status: status, components: components, ancestors: ancestors,
                    rank: directory.children.count, modified: &modified)
            else { return }
            self.walk(
                &child, components: components + [name], ancestors: ancestors, exclude: exclude, discard: discard,
                pending: &pending, modified: &modified, isCancelled: isCancelled, parent: parent)
            directory.children[key] = child
        case .symbolicLink, .other:
            if directory.removeEntry(named: name) { modified = true }
        }
    }

    /// The subdirectory `name` of `directory` (whose `status` says it is one), taken out of `directory` to be walked,
    /// so that its tables are changed in place rather than copied (the dictionary's copy would share them); a new
    /// one (or one that was a container file) is made, ranked `rank`. `nil` when it is one of its `ancestors`
    /// (logged, as `mpd` logs a recursive directory).
    private func takeChild(
        _ directory: inout TreeDirectory, name: String, status: FileStatus, components: [String],
        ancestors: [(UInt64, UInt64)], rank: Int, modified: inout Bool
    ) -> TreeDirectory? {
        if ancestors.contains(where: { $0 == (status.device, status.inode) }) {
            self.logger.info("recursive directory found", ["path": self.path(of: components + [name])])
            return nil
        }
        let key = ByteString(name)
        if directory.songs.removeValue(forKey: key) != nil { modified = true }
        var child = directory.children.removeValue(forKey: key) ?? TreeDirectory(name: name, rank: rank)
        if child.isContainer {
            // A container file became a directory: its songs are gone.
            child = TreeDirectory(name: name)
            modified = true
        }
        // As in mpd, a new directory alone is no modification: it counts once a song or playlist is
        // added inside it, and an empty one is only pruned when a modified database is saved. Until then
        // it comes after its siblings, in the order the walk found it (`rank`).
        child.modificationTime = status.modificationTime
        child.inode = status.inode
        child.device = status.device
        return child
    }

    /// `mpd`'s container step for a song file (`UpdateContainerFile`), before it is read as a song: unless
    /// the file is an unchanged song, a file the reader lists songs inside becomes a directory of them (kept
    /// as it is while the file's modification time is unchanged, unless `discard`).
    ///
    /// - Returns: whether the file is a container (and nothing more is to be done with it).
    private func visitContainer(
        _ directory: inout TreeDirectory, name: String, status: FileStatus, components: [String], discard: Bool,
        modified: inout Bool
    ) -> Bool {
        let key = ByteString(name)
        if let song = directory.songs[key], song.modificationTime == status.modificationTime, !discard { return false }
        if let existing = directory.children[key], existing.isContainer {
            if existing.modificationTime == status.modificationTime, !discard { return true }
            directory.children.removeValue(forKey: key)
            modified = true
        }
        guard let songs = self.reader.containerSongs(path: self.path(of: components + [name])), !songs.isEmpty else {
            return false
        }
        var container = TreeDirectory(name: name)
        container.modificationTime = status.modificationTime
        container.device = TreeDirectory.containerDevice
        for song in songs {
            var info = song.info
            info.tags.removeAll { !self.metadata.contains($0.type) || $0.value.contains("\n") }
            container.songs[ByteString(song.name)] = TreeSong(
                name: song.name, modificationTime: status.modificationTime, size: status.size, info: info)
        }
        directory.children[key] = container
        directory.songs.removeValue(forKey: key)
        modified = true
        return true
    }

    /// `mpd`'s `UpdatePlaylistFile` for a playlist plugin listed as a directory (cue sheets): unless the file is
    /// unchanged since its directory was made (and not `discard`), a directory named like the file, of songs
    /// `track0001`… each naming a range of a file (`../` before a relative URI: it is relative to the playlist's
    /// directory); none when the playlist names nothing. The file stays a playlist too (the caller lists it).
    private func visitPlaylistDirectory(
        _ directory: inout TreeDirectory, name: String, suffix: String, status: FileStatus, components: [String],
        discard: Bool, pending: inout PendingReads, modified: inout Bool
    ) {
        let key = ByteString(name)
        if let existing = directory.children[key] {
            if existing.isPlaylist, existing.modificationTime == status.modificationTime, !discard { return }
            if existing.isPlaylist {
                let path = (components + [name]).joined(separator: "/")
                pending.replacedTracks += existing.songs.keys.map { path + "/" + $0.text }
            }
            directory.children.removeValue(forKey: key)
            modified = true
        }
        let path = self.path(of: components + [name])
        let entries = self.reader.playlistDirectorySongs(path: path, suffix: suffix) ?? []
        guard !entries.isEmpty else { return }
        var playlist = TreeDirectory(name: name, rank: directory.children.count)
        playlist.modificationTime = status.modificationTime
        playlist.device = TreeDirectory.playlistDevice
        for (number, entry) in entries.enumerated() {
            var info = entry.info
            info.tags.removeAll { !self.metadata.contains($0.type) || $0.value.contains("\n") }
            let absolute = entry.uri.hasPrefix("/") || URIScheme.hasScheme(entry.uri)
            let track = PlaylistTrack(
                target: absolute ? entry.uri : "../" + entry.uri, startMilliseconds: entry.startMilliseconds,
                endMilliseconds: entry.endMilliseconds)
            let trackName = Self.trackName(number + 1)
            playlist.songs[ByteString(trackName)] = TreeSong(name: trackName, info: info, track: track)
        }
        directory.children[key] = playlist
    }

    /// `track0001`: the name of a playlist directory's song `number` (`mpd`'s `track%04u`).
    static func trackName(_ number: Int) -> String {
        let digits = String(number)
        return "track" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// `mpd`'s `PurgeDanglingFromPlaylists`: removes the songs of playlist directories whose relative target is no
    /// song of the tree.
    ///
    /// - Returns: whether anything was removed.
    static func purgeDanglingTracks(_ tree: inout TreeDirectory) -> Bool {
        // Found by reading the tree, then removed: changing it while walking it would copy every table on the way
        // (shared with the tree the targets are looked up in), for the few playlist directories a library has.
        var dangling: [(directory: [String], names: [ByteString])] = []
        var components: [ByteString] = []
        func find(in node: TreeDirectory) {
            for index in node.children.indices {
                let (name, child) = node.children[index]
                components.append(name)
                find(in: child)
                components.removeLast()
            }
            guard node.isPlaylist else { return }
            let path = components.map(\.text).joined(separator: "/")
            var names: [ByteString] = []
            for (name, song) in node.songs {
                guard let track = song.playlistTrack, !track.target.hasPrefix("/"),
                    !URIScheme.hasScheme(track.target)
                else { continue }
                if PlaylistTrack.resolve(track.target, from: path).flatMap({ tree.song(at: $0) }) == nil {
                    names.append(name)
                }
            }
            if !names.isEmpty { dangling.append((components.map(\.text), names)) }
        }
        find(in: tree)
        for (directory, names) in dangling {
            tree.withDirectory(at: directory[...]) { node in
                for name in names { node.songs.removeValue(forKey: name) }
            }
        }
        return !dangling.isEmpty
    }

    /// `mpd`'s symlink rules: links inside the music directory follow `follow_inside_symlinks`, links
    /// leaving it (absolute targets elsewhere, or `../` above the root) follow `follow_outside_symlinks`.
    private func skipSymlink(name: String, directory components: [String]) -> Bool {
        if self.symlinks.followInside && self.symlinks.followOutside { return false }
        guard let target = DirectoryEntries.readLink(self.path(of: components + [name])) else { return false }
        if !self.symlinks.followInside && !self.symlinks.followOutside { return true }
        if target.hasPrefix("/") {
            let inside = target == self.root || target.hasPrefix(self.root + "/")
            return inside ? !self.symlinks.followInside : !self.symlinks.followOutside
        }
        var depth = components.count
        // Bytes, not Characters: a combining mark after a "/" must not hide it.
        var rest = Substring(target).utf8
        while true {
            if rest.starts(with: "../".utf8) {
                depth -= 1
                if depth < 0 { return !self.symlinks.followOutside }
                rest = rest.dropFirst(3)
            } else if rest.starts(with: "./".utf8) {
                rest = rest.dropFirst(2)
            } else {
                break
            }
        }
        return !self.symlinks.followInside
    }

    /// Suffixes of the playlist formats Debian's `mpd` 0.23 lists in directories (its m3u, extm3u, pls,
    /// xspf, asx, rss and cue playlist plugins, and embcue's song suffixes, which only count when no enabled
    /// decoder plugin takes the suffix: `.mp4a` always, `.mp3` with mad, mpg123 and ffmpeg off), compared
    /// case-insensitively.
    static let playlistSuffixes: Set<String> = [
        "m3u", "m3u8", "pls", "xspf", "asx", "rss", "cue", "flac", "mp3", "mp2", "mp4", "mp4a", "m4b", "ape", "wv",
        "ogg", "oga",
    ]

    /// Whether two paths are the same byte for byte, component by component.
    private static func sameBytes(_ left: [String], _ right: [String]) -> Bool {
        left.count == right.count && zip(left, right).allSatisfy { ByteString.sameBytes($0, $1) }
    }

    /// Starts `concurrency - 1` threads reading with `reader` what the walk queues (the update thread joins them when its
    /// walk is done). Update thread.
    private func startReading(_ queue: ReadQueue, reader: any SongInfoReader) -> DispatchGroup {
        let group = DispatchGroup()
        for _ in 1..<max(1, self.concurrency) {
            DispatchQueue.global().async(group: group) { [self] in self.read(queue, reader: reader) }
        }
        return group
    }

    /// Reads queued files until the queue is finished and empty; a file that is not a readable song keeps its
    /// `nil` result (and is logged). Any thread, several at once.
    private func read(_ queue: ReadQueue, reader: any SongInfoReader) {
        while let (index, path) = queue.next() {
            do {
                var info = try reader.readInfo(path: path)
                info.tags.removeAll { !self.metadata.contains($0.type) || $0.value.contains("\n") }
                queue.set(index, info)
            } catch {
                self.logger.info("skipping unreadable file", ["path": path, "error": "\(error)"])
            }
        }
    }
}

/// The paths of the files an update reads, filled by the walk while reader threads take them, and what each
/// read gave, by position.
///
/// Any thread. `@unchecked Sendable`: every stored property is read and written with `condition`'s mutex held.
private final class ReadQueue: @unchecked Sendable {
    private let condition = Condition()
    private var paths: [String] = []
    private var read: [SongInfo?] = []
    private var taken = 0
    private var finished = false

    /// Queues a file (the walk, in walk order); returns its position.
    func add(_ path: String) -> Int {
        self.condition.lock()
        defer { self.condition.unlock() }
        self.paths.append(path)
        self.read.append(nil)
        self.condition.signal()
        return self.paths.count - 1
    }

    /// No more files come: readers return once the queue is empty.
    func finish() {
        self.condition.lock()
        self.finished = true
        self.condition.broadcast()
        self.condition.unlock()
    }

    /// The next file to read and its position, waiting for the walk to queue one; `nil` when the queue is
    /// finished and every file was taken.
    func next() -> (Int, String)? {
        self.condition.lock()
        defer { self.condition.unlock() }
        while self.taken == self.paths.count && !self.finished { self.condition.wait() }
        guard self.taken < self.paths.count else { return nil }
        self.taken += 1
        return (self.taken - 1, self.paths[self.taken - 1])
    }

    /// Stores what the file at `index` gave.
    func set(_ index: Int, _ info: SongInfo) {
        self.condition.lock()
        self.read[index] = info
        self.condition.unlock()
    }

    /// What each queued file gave, in queue order (after every reader returned).
    var results: [SongInfo?] {
        self.condition.lock()
        defer { self.condition.unlock() }
        return self.read
    }
}
