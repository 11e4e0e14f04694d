// SPDX-License-Identifier: GPL-3.0-or-later

import Dispatch
internal import ICU
import Model
import Posix
import RawText
import Synchronization

/// An immutable snapshot of the music database, with the lookup tables queries need.
///
/// Built off the loop by an update job and swapped in whole; readers never lock. Directories are
/// numbered in `mpd`'s walk order (a directory, then its children by collation of their paths) and each
/// directory's songs are contiguous in `songs`, sorted as `mpd` sorts them (album, disc, track, file
/// name), so a recursive listing is a walk over ranges.
///
/// `Sendable`: every stored property is an immutable value.
public final class Database: Sendable {
    /// A directory of the music directory.
    public struct Directory: Sendable {
        /// The path relative to the music directory; "" for the root.
        public let path: String
        /// Modification time, seconds since the epoch.
        public let modificationTime: Int64
        /// The parent's index, or -1 for the root.
        public let parent: Int32
        /// Sub-directories, in `mpd`'s order.
        public let children: [Int32]
        /// This directory's own songs: a range of `Database.songs`.
        public let songs: Range<Int32>
        /// Playlist files here, in the order they were found.
        public let playlists: [TreePlaylist]
        /// Inode and device, to recognise symlink loops in the next update.
        public let inode: UInt64
        /// Device number.
        public let device: UInt64

        /// The same directory with `children`.
        func with(children: [Int32]) -> Directory {
            Directory(
                path: self.path, modificationTime: self.modificationTime, parent: self.parent, children: children,
                songs: self.songs, playlists: self.playlists, inode: self.inode, device: self.device)
        }
    }

    /// A song of the database.
    public struct Song: Sendable {
        /// The URI relative to the music directory.
        public let uri: String
        /// Modification time, seconds since the epoch.
        public let modificationTime: Int64
        /// Size in bytes.
        public let size: Int64
        /// Tags and audio properties.
        public let info: SongInfo
        /// For a track of a playlist file's directory: the file it plays and its range.
        public let virtual: VirtualSong?
        /// The directory holding it (last, where it fits in `info`'s tail padding).
        public let directory: Int32

        init(
            uri: String, directory: Int32, modificationTime: Int64, size: Int64, info: SongInfo,
            virtual: VirtualSong? = nil
        ) {
            self.uri = uri
            self.modificationTime = modificationTime
            self.size = size
            self.info = info
            self.virtual = virtual
            self.directory = directory
        }
    }

    /// Every directory; index 0 is the root.
    public let directories: [Directory]
    /// The mount points grafted in (directories of the root, by index), each with its storage database's root's
    /// modification time; see `mountRootTime(_:)`.
    private let mountRoots: [Int32: Int64]
    /// Every song, in walk order.
    public let songs: SongTable
    /// When the last update that produced this snapshot finished, seconds since the epoch.
    public let updateTime: Int64
    /// The songs a playlist file's directory names, which listings and searches leave out (`mpd`'s
    /// `hide_playlist_targets`): marked by an update, by song number; empty when none is (a snapshot loaded
    /// from a file marks none, as `mpd` marks them only when it updates).
    @usableFromInline let hidden: [Bool]

    // Lookup tables, each built on first use: a snapshot loaded at startup answers its first client
    // without building any, and most clients need only a few.
    private let directoryByPath = Mutex<[ByteString: Int32]?>(nil)
    private let songByURI = Mutex<URIIndex?>(nil)
    /// For each tag type, each value and the songs carrying it.
    private let postings = Mutex<[Postings?]>(Array(repeating: nil, count: TagType.allCases.count))
    /// Tag columns (a lookup needs them only for the types clients list and count).
    private let columns = Mutex<[TagColumn?]>(Array(repeating: nil, count: TagType.allCases.count))
    private let cachedStatistics = Mutex<Statistics?>(nil)
    /// Whether the snapshot is as a save leaves it (see `canBeReused`), once known.
    private let isSaved = Mutex<Bool?>(nil)
    /// Query indexes built on first use (see `FoldedTagIndex`).
    let queryIndexes = QueryIndexes()

    /// An empty database (no music directory scanned yet).
    public convenience init() {
        self.init(tree: TreeDirectory(name: ""), updateTime: 0)
    }

    /// Builds a snapshot from an update job's tree, ordering songs and directories as `mpd` does: `sorted`, as
    /// `mpd` sorts its database when it saves it; otherwise directories keep their `rank` (the order `mpd`'s
    /// database in memory has after an update that modified nothing, and so saved nothing).
    ///
    /// The tracks of playlist files' directories are completed from the songs they name; with `markTargets` (a
    /// snapshot an update made) those songs are hidden from listings and searches, as `mpd` marks them.
    ///
    /// A directory of the tree reused from `previous` (see `makeTree(expanding:)`) is copied from it with everything
    /// below it, as it is there.
    public convenience init(
        tree: TreeDirectory, updateTime: Int64, sorted: Bool = true, markTargets: Bool = false,
        reusing previous: Database? = nil
    ) {
        var directories: [Directory] = []
        var songs = previous.map { SongTable.Builder(valuesOf: $0) } ?? SongTable.Builder()
        var targets: [String] = []

        // Reserve the index of each directory before its children so parents precede children.
        func add(_ node: TreeDirectory, path: String, parent: Int32) -> Int32 {
            if node.reused >= 0, let previous {
                return previous.copySubtree(node.reused, parent: parent, into: &directories, songs: &songs)
            }
            let index = Int32(directories.count)
            directories.append(
                Directory(
                    path: path, modificationTime: 0, parent: parent, children: [], songs: 0..<0, playlists: [],
                    inode: 0, device: 0))
            let songStart = Int32(songs.count)
            for song in Self.sortedSongs(node.songs.values) {
                if let track = song.playlistTrack {
                    let uri = PlaylistTrack.resolve(track.target, from: path)
                    let target = uri.flatMap { uri in tree.song(at: uri).map { (uri: uri, song: $0) } }
                    if let target { targets.append(target.uri) }
                    songs.addTrack(song, track: track, directory: index, target: target)
                } else {
                    songs.add(song, directory: index)
                }
            }
            let songRange = songStart..<Int32(songs.count)
            // Sorted by full path, keyed by name: a name is never cut back out of a path (a name starting with
            // a combining mark joins the "/" before it in one Character).
            let childPaths = node.children.keys.map { (name: $0, path: path.isEmpty ? $0.text : path + "/" + $0.text) }
            var children: [Int32] = []
            let ordered =
                sorted
                ? childPaths.sorted(by: { Self.precedes($0.path, $1.path) })
                : childPaths.sorted(by: { node.children[$0.name]!.rank < node.children[$1.name]!.rank })
            for child in ordered {
                children.append(add(node.children[child.name]!, path: child.path, parent: index))
            }
            directories[Int(index)] = Directory(
                path: path, modificationTime: node.modificationTime, parent: parent, children: children,
                songs: songRange, playlists: node.playlists, inode: node.inode, device: node.device)
            return index
        }
        _ = add(tree, path: "", parent: -1)
        self.init(
            directories: directories, songs: songs.build(directoryPaths: directories.map(\.path)),
            updateTime: updateTime, hiddenURIs: markTargets ? targets : [])
    }

    /// A snapshot from parts already in walk order (the database file stores them so), hiding the songs at
    /// `hiddenURIs`; `mountRoots` marks the mount points (see `mountRootTime`).
    init(
        directories: [Directory], songs: SongTable, updateTime: Int64, hiddenURIs: [String] = [],
        mountRoots: [Int32: Int64] = [:]
    ) {
        self.directories = directories
        self.songs = songs
        self.updateTime = updateTime
        self.mountRoots = mountRoots
        guard !hiddenURIs.isEmpty else {
            self.hidden = []
            return
        }
        var hidden = [Bool](repeating: false, count: songs.count)
        // A lookup before `init` is done: the URI index is built from the columns alone.
        let index = URIIndex(songs)
        var byPath: [ByteString: Int32] = [:]
        for (number, directory) in directories.enumerated() { byPath[ByteString(directory.path)] = Int32(number) }
        for uri in hiddenURIs {
            let slash = uri.utf8.lastIndex(of: UInt8(ascii: "/"))
            let path = slash.map { String(uri[..<$0]) } ?? ""
            let name = slash.map { String(uri[uri.utf8.index(after: $0)...]) } ?? uri
            guard let directory = byPath[ByteString(path)],
                let song = index.song(directory: directory, name: RawText.encode(name), in: songs)
            else { continue }
            hidden[Int(song)] = true
        }
        self.hidden = hidden
    }

    /// For a mount point, the modification time of the root of the storage's database, which `mpd` lists as a
    /// directory of its own at the mount point's path (a recursive listing of the root shows the mount point,
    /// without a time, then that root, with it); `nil` for any other directory.
    public func mountRootTime(_ directory: Int32) -> Int64? { self.mountRoots[directory] }

    /// Whether any directory is a mount point.
    public var hasMountPoints: Bool { !self.mountRoots.isEmpty }

    /// The mount point directory `directory` is in (itself or below), if any.
    public func mountPoint(ofDirectory directory: Int32) -> String? {
        guard !self.mountRoots.isEmpty else { return nil }
        var index = directory
        while index > 0 {
            let parent = self.directories[Int(index)].parent
            if parent == 0 { return self.mountRoots[index] != nil ? self.directories[Int(index)].path : nil }
            index = parent
        }
        return nil
    }

    /// The same snapshot with `mountRoots` marked (see `mountRootTime(_:)`).
    public func marking(mountRoots: [Int32: Int64]) -> Database {
        Database(
            directories: self.directories, songs: self.songs, updateTime: self.updateTime, hidden: self.hidden,
            mountRoots: mountRoots)
    }

    private init(
        directories: [Directory], songs: SongTable, updateTime: Int64, hidden: [Bool], mountRoots: [Int32: Int64]
    ) {
        self.directories = directories
        self.songs = songs
        self.updateTime = updateTime
        self.hidden = hidden
        self.mountRoots = mountRoots
    }

    /// Whether song `song` is a file a playlist file's directory names, left out of listings and searches.
    @inlinable
    public func isHidden(_ song: Int32) -> Bool { !self.hidden.isEmpty && self.hidden[Int(song)] }

    /// The URIs of the hidden songs.
    public var hiddenURIs: [String] {
        self.hidden.indices.filter { self.hidden[$0] }.map { self.songs.uri(Int32($0)) }
    }

    /// Whether any song is hidden.
    public var hasHiddenSongs: Bool { !self.hidden.isEmpty }

    /// The last directory below `directory` (itself when it has none): directories are numbered depth first, so
    /// `directory...lastDescendant(of: directory)` is its subtree.
    func lastDescendant(of directory: Int32) -> Int32 {
        var last = directory
        while let child = self.directories[Int(last)].children.last { last = child }
        return last
    }

    /// Appends directory `index` and everything below it to `directories` and their songs to `songs`, as they are
    /// here but for their numbers (the directory's parent is `parent`); returns its new number.
    private func copySubtree(
        _ index: Int32, parent: Int32, into directories: inout [Directory], songs: inout SongTable.Builder
    ) -> Int32 {
        let last = Int(self.lastDescendant(of: index))
        let shift = Int32(directories.count) - index
        let first = self.directories[Int(index)].songs.lowerBound
        let songShift = Int32(songs.count) - first
        for number in Int(index)...last {
            let directory = self.directories[number]
            directories.append(
                Directory(
                    path: directory.path, modificationTime: directory.modificationTime,
                    parent: number == Int(index) ? parent : directory.parent + shift,
                    children: shift == 0 ? directory.children : directory.children.map { $0 + shift },
                    songs: (directory.songs.lowerBound + songShift)..<(directory.songs.upperBound + songShift),
                    playlists: directory.playlists, inode: directory.inode, device: directory.device))
        }
        songs.copy(first..<self.directories[last].songs.upperBound, of: self, directoryShift: shift)
        return index + shift
    }

    /// Asks the processor to bring directory `index`'s record (its modification time) into its cache, for a coming
    /// read: a listing of sub-directories reads records that lie apart (each after its elder sibling's subtree).
    @inline(__always)
    public func prefetchDirectory(_ index: Int32) {
        self.directories.withUnsafeBufferPointer { directories in
            guard let base = directories.baseAddress, Int(index) < directories.count else { return }
            let offset = MemoryLayout<Directory>.offset(of: \.modificationTime) ?? 0
            prefetch(UnsafeRawPointer(base + Int(index)) + offset)
        }
    }

    /// The tree this snapshot was built from, for the next update job to start from; `withoutMounts`: without the
    /// mount points and what they hold (the music directory's own tree). Built on each call (an update job calls
    /// it once, off the loop).
    public func makeTree(withoutMounts: Bool = false) -> TreeDirectory {
        // A mount point, and everything below it (children follow their parent), is left out.
        var leftOut = [Bool](
            repeating: false, count: withoutMounts && !self.mountRoots.isEmpty ? self.directories.count : 0)
        if !leftOut.isEmpty {
            for (index, directory) in self.directories.enumerated().dropFirst() {
                leftOut[index] = self.mountRoots[Int32(index)] != nil || leftOut[Int(directory.parent)]
            }
        }
        // The nodes, each with its songs (most of the work), made on every processor: `makeTree` runs before an
        // update's walk starts.
        let count = self.directories.count
        let excluded = leftOut
        var nodes = [TreeDirectory](unsafeUninitializedCapacity: count) { buffer, initialized in
            guard let start = buffer.baseAddress else { return }
            let address = UInt(bitPattern: start)
            let parts = min(count, 32)
            DispatchQueue.concurrentPerform(iterations: parts) { part in
                let start = UnsafeMutablePointer<TreeDirectory>(bitPattern: address)!
                for index in count * part / parts..<count * (part + 1) / parts {
                    (start + index).initialize(
                        to: !excluded.isEmpty && excluded[index] ? TreeDirectory(name: "") : self.makeNode(index))
                }
            }
            initialized = count
        }
        for directory in self.directories {
            for (rank, child) in directory.children.enumerated() { nodes[Int(child)].rank = rank }
        }
        // Children have higher indices than their parent: fold them in from the last.
        for index in nodes.indices.dropFirst().reversed() where leftOut.isEmpty || !leftOut[index] {
            let node = nodes[index]
            nodes[index] = TreeDirectory(name: "")
            nodes[Int(self.directories[index].parent)].children[ByteString(node.name)] = node
        }
        return nodes.first ?? TreeDirectory(name: "")
    }

    /// Directory `index` as a node of a tree: itself, its songs and playlists, no sub-directories.
    private func makeNode(_ index: Int) -> TreeDirectory {
        let directory = self.directories[index]
        var node = TreeDirectory(name: Self.lastComponent(of: directory.path))
        node.modificationTime = directory.modificationTime
        node.inode = directory.inode
        node.device = directory.device
        node.playlists = directory.playlists
        node.songs.reserveCapacity(directory.songs.count)
        for song in directory.songs {
            let name = self.songs.name(song)
            if let virtual = self.songs.virtualSong(song) {
                node.songs[ByteString(name)] = TreeSong(name: name, info: virtual.ownInfo, track: virtual.track)
            } else {
                node.songs[ByteString(name)] = TreeSong(name: name, song: song, of: self)
            }
        }
        return node
    }

    /// Whether an update of one path can start from `makeTree(expanding:)` and build its snapshot reusing this one
    /// (`init(tree:updateTime:sorted:markTargets:reusing:)`): it is as a save leaves the music directory's
    /// snapshot (no empty directory, every directory's songs and sub-directories in the order a new snapshot would
    /// put them), with no mount point and no playlist file's directory (whose tracks take from songs anywhere) or
    /// hidden song. Worked out once per snapshot, on first use (a moment for 100k songs). Not on the loop.
    public var canBeReused: Bool {
        guard !self.hasMountPoints, self.songs.virtualSongs.isEmpty, !self.hasHiddenSongs else { return false }
        return Self.cached(self.isSaved) { self.directories.indices.allSatisfy(self.isInSavedOrder) }
    }

    /// Records that this snapshot is as a save leaves it (see `canBeReused`): built sorted from a pruned tree.
    public func markSaved() { self.isSaved.withLock { $0 = true } }

    /// Whether directory `index` is not empty and holds its songs and sub-directories as a save orders them.
    private func isInSavedOrder(_ index: Int) -> Bool {
        let directory = self.directories[index]
        if index > 0 && directory.songs.isEmpty && directory.playlists.isEmpty && directory.children.isEmpty {
            return false
        }
        for (a, b) in zip(directory.children, directory.children.dropFirst())
        where !Self.precedes(self.directories[Int(a)].path, self.directories[Int(b)].path) {
            return false
        }
        guard directory.songs.count > 1 else { return true }
        let songs = directory.songs.map { TreeSong(name: self.songs.name($0), song: $0, of: self) }
        return Self.sortedSongs(songs).map(\.name).elementsEqual(songs.map(\.name)) { ByteString.sameBytes($0, $1) }
    }

    /// The tree for an update of `uri` alone, reusing this snapshot (see `canBeReused`): the directories on the
    /// way to it with their songs and playlists, the one it names (if any) with everything below it; any other
    /// directory is a reused one (`TreeDirectory.reused`), which the update does not look into.
    public func makeTree(expanding uri: String) -> TreeDirectory {
        let names = uri.split(separator: "/").map { ByteString(String($0)) }
        func expand(_ index: Int, depth: Int) -> TreeDirectory {
            var node = self.makeNode(index)
            for (rank, child) in self.directories[index].children.enumerated() {
                let name = ByteString(Self.lastComponent(of: self.directories[Int(child)].path))
                var expanded: TreeDirectory
                if depth < names.count && name == names[depth] {
                    expanded =
                        depth + 1 == names.count ? self.makeSubtree(Int(child)) : expand(Int(child), depth: depth + 1)
                } else {
                    let directory = self.directories[Int(child)]
                    expanded = TreeDirectory(name: name.text)
                    expanded.modificationTime = directory.modificationTime
                    expanded.inode = directory.inode
                    expanded.device = directory.device
                    expanded.reused = child
                }
                expanded.rank = rank
                node.children[name] = expanded
            }
            return node
        }
        return self.directories.isEmpty ? TreeDirectory(name: "") : expand(0, depth: 0)
    }

    /// Directory `index` and everything below it, as a tree.
    private func makeSubtree(_ index: Int) -> TreeDirectory {
        var node = self.makeNode(index)
        for (rank, child) in self.directories[index].children.enumerated() {
            var subtree = self.makeSubtree(Int(child))
            subtree.rank = rank
            node.children[ByteString(subtree.name)] = subtree
        }
        return node
    }

    /// The last component of a relative path ("" for the root).
    static func lastComponent(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return path }
        return String(path[path.utf8.index(after: slash)...])
    }

    // MARK: - Lookups

    /// The directory at `path` ("" for the root), compared by bytes as `mpd` does.
    public func directory(at path: String) -> Int32? {
        Self.cached(self.directoryByPath) {
            Dictionary(
                self.directories.enumerated().map { (ByteString($1.path), Int32($0)) },
                uniquingKeysWith: { first, _ in first })
        }[ByteString(path)]
    }

    /// The song at `uri` (compared by bytes, as `mpd` does).
    public func song(at uri: String) -> Int32? {
        let slash = uri.utf8.lastIndex(of: UInt8(ascii: "/"))
        let path = slash.map { String(uri[..<$0]) } ?? ""
        // A song in the root has no slash; "/name" names nothing.
        guard slash == nil || !path.isEmpty, let directory = self.directory(at: path) else { return nil }
        let name = RawText.encode(slash.map { String(uri[uri.utf8.index(after: $0)...]) } ?? uri)
        return self.uriIndex.song(directory: directory, name: name, in: self.songs)
    }

    /// Builds what `song(at:)` needs, so that the first lookup on the loop does not.
    public func prepareURILookups() {
        _ = self.directory(at: "")
        _ = self.uriIndex
    }

    /// Which lookup tables and query indexes are built: those of `directory(at:)` and `song(at:)`, and those
    /// listings, `list`, `count` and filters build for the tag types they read.
    public struct Lookups: Sendable, Equatable {
        /// `directory(at:)`'s.
        public var directories: Bool
        /// `song(at:)`'s (with the directories').
        public var songs: Bool
        /// The types whose songs by value (`songs(with:value:)`, `values(of:)`) are built.
        public var postings: Set<TagType>
        /// The types whose columns (`column(_:)`) are built.
        public var columns: Set<TagType>
        /// The types whose `tagIndex(_:)` is built.
        public var tagIndexes: Set<TagType>
        /// The types whose `foldedIndex(_:)` is built.
        public var foldedIndexes: Set<TagType>
        /// Whether every value folded (a case-insensitive filter on `any`) is.
        public var foldedValues: Bool
        /// Whether `directoryPathTable()` is.
        public var directoryPaths: Bool

        public init(
            directories: Bool, songs: Bool, postings: Set<TagType> = [], columns: Set<TagType> = [],
            tagIndexes: Set<TagType> = [], foldedIndexes: Set<TagType> = [], foldedValues: Bool = false,
            directoryPaths: Bool = false
        ) {
            self.directories = directories
            self.songs = songs
            self.postings = postings
            self.columns = columns
            self.tagIndexes = tagIndexes
            self.foldedIndexes = foldedIndexes
            self.foldedValues = foldedValues
            self.directoryPaths = directoryPaths
        }

        /// None.
        public static let none = Lookups(directories: false, songs: false)

        /// Only the URI tables (`directories`, `songs`): what the loop reads the moment a snapshot is swapped in
        /// (the queue looks its songs up again).
        public var uriTables: Lookups { Lookups(directories: self.directories, songs: self.songs) }

        /// Only the query indexes (every field but `directories` and `songs`).
        public var queryIndexes: Lookups {
            var indexes = self
            indexes.directories = false
            indexes.songs = false
            return indexes
        }
    }

    /// The lookup tables and query indexes built so far.
    public var builtLookups: Lookups {
        Lookups(
            directories: self.directoryByPath.withLock { $0 != nil }, songs: self.songByURI.withLock { $0 != nil },
            postings: QueryIndexes.built(self.postings), columns: QueryIndexes.built(self.columns),
            tagIndexes: self.queryIndexes.builtTags, foldedIndexes: self.queryIndexes.builtFolded,
            foldedValues: self.queryIndexes.hasFoldedValues, directoryPaths: self.queryIndexes.hasDirectoryPaths)
    }

    /// Builds `lookups`: a snapshot replacing one in use answers its first lookups and queries on the loop at once,
    /// without building on the loop what the snapshot before had, and one replacing a snapshot nobody looked
    /// anything up in stays as small as one loaded at start-up (the URI tables are 1.7 MiB at 100k songs). Any
    /// thread but the loop (a query on the loop meanwhile builds what it needs itself, as at start-up: nothing
    /// waits for the other).
    public func prepare(_ lookups: Lookups) {
        if lookups.directories || lookups.songs { _ = self.directory(at: "") }
        if lookups.songs { _ = self.uriIndex }
        for type in lookups.postings { _ = self.postings(type) }
        for type in lookups.columns { _ = self.column(type) }
        for type in lookups.tagIndexes { _ = self.tagIndex(type) }
        for type in lookups.foldedIndexes { _ = self.foldedIndex(type) }
        if lookups.foldedValues { _ = self.foldedValues() }
        if lookups.directoryPaths { _ = self.directoryPathTable() }
    }

    private var uriIndex: URIIndex { Self.cached(self.songByURI) { URIIndex(self.songs) } }

    /// The value in `cache`, made and stored on first use.
    static func cached<Value: Sendable>(_ cache: borrowing Mutex<Value?>, _ make: () -> Value) -> Value {
        if let value = cache.withLock({ $0 }) { return value }
        let value = make()
        cache.withLock { $0 = value }
        return value
    }

    /// `type`'s value in `cache` (one slot per tag type), made and stored on first use.
    static func cached<Value: Sendable>(
        _ cache: borrowing Mutex<[Value?]>, _ type: TagType, _ make: () -> Value
    ) -> Value {
        if let value = cache.withLock({ $0[type.rawValue] }) { return value }
        let value = make()
        cache.withLock { $0[type.rawValue] = value }
        return value
    }

    /// The songs carrying `value` for `type` (exact, case-sensitive), in walk order.
    public func songs(with type: TagType, value: String) -> [Int32] {
        self.postings(type).songs(with: value)
    }

    /// The distinct values of `type`.
    public func values(of type: TagType) -> Dictionary<String, Int32>.Keys { self.postings(type).numbers.keys }

    func postings(_ type: TagType) -> Postings {
        Self.cached(self.postings, type) { Postings(type, songs: self.songs) }
    }

    /// `type` resolved with fallbacks for every song: values in byte order and each song's value numbers.
    /// Built once per snapshot, on first use.
    public func column(_ type: TagType) -> TagColumn {
        Self.cached(self.columns, type) { TagColumn(type, songs: self.songs) }
    }

    /// Calls `body` for every song at or below directory `index`, in walk order, and for each
    /// sub-directory before its contents when `directories` is set.
    public func walk(
        from index: Int32, recursive: Bool, directory visitDirectory: ((Directory) -> Void)? = nil,
        song visitSong: (Int32) -> Void, playlist visitPlaylist: ((Directory, TreePlaylist) -> Void)? = nil
    ) {
        var listing = Listing(of: index, in: self, recursive: recursive)
        // A recursive listing below the root starts with its own directory, which a walk does not visit.
        if recursive && index != 0 { _ = listing.next() }
        while let entry = listing.next() {
            switch entry {
            case .songs(let run, _): for song in run { visitSong(song) }
            case .playlist(let number, let position):
                let directory = self.directories[Int(number)]
                visitPlaylist?(directory, directory.playlists[Int(position)])
            case .directory(let child): visitDirectory?(self.directories[Int(child)])
            case .directories(let children):
                for child in children { visitDirectory?(self.directories[Int(child)]) }
            case .mountRoot: break
            }
        }
    }

    // MARK: - Statistics

    /// `stats`' database figures.
    public typealias Statistics = (artists: Int, albums: Int, songs: Int, playTimeSeconds: UInt64)

    /// `stats`' database figures: distinct artists and albums, songs, total play time in seconds (the sum
    /// of the songs' durations, truncated), worked out once per snapshot, on first use.
    public var statistics: Statistics {
        Self.cached(self.cachedStatistics) {
            // Distinct by bytes, as mpd counts (and as the value table numbers them).
            var count = self.songs.count
            var milliseconds = self.songs.totalMilliseconds()
            for song in 0..<Int32(self.songs.count) where self.isHidden(song) {
                count -= 1
                milliseconds -= self.songs.durationMilliseconds(song) ?? 0
            }
            guard self.hasHiddenSongs else {
                return (
                    self.songs.distinctValueCount(.artist), self.songs.distinctValueCount(.album), count,
                    milliseconds / 1000
                )
            }
            let visible = { (song: Int32) in !self.isHidden(song) }
            return (
                self.songs.distinctValueCount(.artist, of: visible), self.songs.distinctValueCount(.album, of: visible),
                count, milliseconds / 1000
            )
        }
    }

    // MARK: - Ordering

    /// A directory's songs in `mpd`'s order, with each song's sort keys worked out once.
    static func sortedSongs(_ songs: some Collection<TreeSong>) -> [TreeSong] {
        guard songs.count > 1 else { return Array(songs) }
        let keyed = songs.map { song in
            let keys = song.sortKeys
            return KeyedSong(
                song: song, album: keys.album, disc: Self.leadingInteger(keys.disc),
                track: Self.leadingInteger(keys.track))
        }
        return keyed.sorted { a, b in
            let album = Self.compareOptional(a.album, b.album)
            if album != 0 { return album < 0 }
            let disc = Self.compareIntegers(a.disc, b.disc)
            if disc != 0 { return disc < 0 }
            let track = Self.compareIntegers(a.track, b.track)
            if track != 0 { return track < 0 }
            return Self.precedes(a.song.name, b.song.name)
        }.map(\.song)
    }

    /// A song with the keys `sortedSongs` orders it by.
    private struct KeyedSong {
        var song: TreeSong
        var album: String?
        var disc: Int
        var track: Int
    }

    /// Collation order, then (for names the collation finds equal, such as two normalisations of one name) byte
    /// order, so that the order never depends on hashing.
    private static func precedes(_ a: String, _ b: String) -> Bool {
        let order = Collator.root.compare(a, b)
        return order != 0 ? order < 0 : a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    private static func compareOptional(_ a: String?, _ b: String?) -> Int {
        switch (a, b) {
        case (nil, nil): 0
        case (nil, _): -1
        case (_, nil): 1
        case (let a?, let b?): Collator.root.compare(a, b)
        }
    }

    /// Track and disc numbers as `mpd` compares them: anything not positive counts as "no number" and sorts
    /// first; the difference of two positive numbers is truncated to an `int`, as in `mpd`.
    private static func compareIntegers(_ x: Int, _ y: Int) -> Int {
        if x <= 0 { return y <= 0 ? 0 : -1 }
        if y <= 0 { return 1 }
        // mpd returns the difference of two longs as an int: huge numbers wrap, and so does the order.
        return Int(Int32(truncatingIfNeeded: x &- y))
    }

    /// The integer C's `strtol(text, NULL, 10)` returns: leading blanks, a sign, digits, the rest ignored.
    public static func leadingInteger(_ text: String?) -> Int {
        guard let text else { return 0 }
        return Int(CNumbers.strtol(text.utf8, from: 0).value)
    }
}

/// One tag type's values and, for each, the songs carrying it (ascending song indices, each once), in
/// three flat arrays instead of an array per value.
struct Postings: Sendable {
    /// Each value's number. Keyed by Swift strings, which merge canonically equivalent values (a Kelvin sign
    /// and a K) that `mpd` keeps apart: see `byteDistinctCount`.
    let numbers: [String: Int32]
    /// How many values are distinct by bytes (equal to `numbers.count` when no two were merged).
    let byteDistinctCount: Int
    /// `songs[offsets[n]..<offsets[n + 1]]` carry value number `n`.
    private let offsets: [Int32]
    private let songs: [Int32]

    init(_ type: TagType, songs table: SongTable) {
        var numbers: [String: Int32] = [:]
        // The table numbers values by bytes: each gets its posting number the first time it is seen.
        var numberOfValue = [Int32](repeating: -1, count: table.values.count)
        var byteDistinct = 0
        var lastSong: [Int32] = []
        var pairValues: [Int32] = []
        var pairSongs: [Int32] = []
        for index in 0..<Int32(table.count) {
            table.forEachValue(index, type) { value in
                var number = numberOfValue[Int(value)]
                if number < 0 {
                    byteDistinct += 1
                    let text = table.values[value]
                    if let known = numbers[text] {
                        number = known
                    } else {
                        number = Int32(lastSong.count)
                        numbers[text] = number
                        lastSong.append(-1)
                    }
                    numberOfValue[Int(value)] = number
                }
                // A song with the same value twice (multi-valued duplicates) is listed once.
                if lastSong[Int(number)] == index { return }
                lastSong[Int(number)] = index
                pairValues.append(number)
                pairSongs.append(index)
            }
        }
        self.numbers = numbers
        self.byteDistinctCount = byteDistinct
        (self.offsets, self.songs) = countingSort(keys: pairValues, items: pairSongs, keyCount: lastSong.count)
    }

    /// How many songs carry `value`.
    func count(with value: String) -> Int {
        guard let number = self.numbers[value] else { return 0 }
        return Int(self.offsets[Int(number) + 1] - self.offsets[Int(number)])
    }

    /// The songs carrying `value`.
    func songs(with value: String) -> [Int32] {
        guard let number = self.numbers[value] else { return [] }
        return Array(self.songs[Int(self.offsets[Int(number)])..<Int(self.offsets[Int(number) + 1])])
    }
}

/// Songs by directory and name: an open-addressing hash table of song numbers (4 bytes a slot), for `song(at:)`
/// without a `String` per song.
struct URIIndex: Sendable {
    /// Song numbers, -1 for empty slots; the count is a power of two, at least twice the songs.
    private let slots: [Int32]

    init(_ songs: SongTable) {
        var capacity = 16
        while capacity < songs.count * 2 { capacity *= 2 }
        var slots = [Int32](repeating: -1, count: capacity)
        let mask = capacity - 1
        for song in 0..<Int32(songs.count) {
            var slot = songs.withNameBytes(song) { Self.hash(directory: songs.directory(song), name: $0) } & mask
            while slots[slot] >= 0 { slot = (slot + 1) & mask }
            slots[slot] = song
        }
        self.slots = slots
    }

    /// The song called `name` (raw bytes) in `directory`.
    func song(directory: Int32, name: [UInt8], in songs: SongTable) -> Int32? {
        name.withUnsafeBufferPointer { name in
            let mask = self.slots.count - 1
            var slot = Self.hash(directory: directory, name: name) & mask
            while self.slots[slot] >= 0 {
                let song = self.slots[slot]
                if songs.hasURI(song, directory: directory, name: name) { return song }
                slot = (slot + 1) & mask
            }
            return nil
        }
    }

    private static func hash(directory: Int32, name: UnsafeBufferPointer<UInt8>) -> Int {
        var hasher = Hasher()
        hasher.combine(directory)
        hasher.combine(bytes: UnsafeRawBufferPointer(name))
        return hasher.finalize()
    }
}

/// Queue entries of database songs refer to the snapshot by song number (`Model.SongStore`).
extension Database: SongStore {
    public func uri(_ song: Int32) -> String { self.songs.uri(song) }

    public func modificationTime(_ song: Int32) -> Int64 { self.songs.modificationTime(song) }

    public func info(_ song: Int32) -> SongInfo { self.songs.info(song) }

    public func isSame(_ song: Int32, as other: any SongStore, _ otherSong: Int32) -> Bool {
        guard let other = other as? Database else { return false }
        return self.songs.isSame(song, as: other.songs, otherSong)
    }
}
