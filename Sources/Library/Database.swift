// SPDX-License-Identifier: GPL-3.0-or-later

internal import ICU
import Model
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
        /// The directory holding it (last, where it fits in `info`'s tail padding).
        public let directory: Int32

        init(uri: String, directory: Int32, modificationTime: Int64, size: Int64, info: SongInfo) {
            self.uri = uri
            self.modificationTime = modificationTime
            self.size = size
            self.info = info
            self.directory = directory
        }
    }

    /// Every directory; index 0 is the root.
    public let directories: [Directory]
    /// Every song, in walk order.
    public let songs: [Song]
    /// When the last update that produced this snapshot finished, seconds since the epoch.
    public let updateTime: Int64

    // Lookup tables, each built on first use: a snapshot loaded at startup answers its first client
    // without building any, and most clients need only a few.
    private let directoryByPath = Mutex<[String: Int32]?>(nil)
    private let songByURI = Mutex<[String: Int32]?>(nil)
    /// For each tag type, each value and the songs carrying it.
    private let postings = Mutex<[Postings?]>(Array(repeating: nil, count: TagType.allCases.count))
    /// Tag columns (a lookup needs them only for the types clients list and count).
    private let columns = Mutex<[TagColumn?]>(Array(repeating: nil, count: TagType.allCases.count))
    private let cachedStatistics = Mutex<Statistics?>(nil)
    /// Query indexes built on first use (see `FoldedTagIndex`).
    let queryIndexes = QueryIndexes()

    /// An empty database (no music directory scanned yet).
    public convenience init() {
        self.init(tree: TreeDirectory(name: ""), updateTime: 0)
    }

    /// Builds a snapshot from an update job's tree, ordering songs and directories as `mpd` does.
    public convenience init(tree: TreeDirectory, updateTime: Int64) {
        var directories: [Directory] = []
        var songs: [Song] = []
        // One string per distinct tag value, as a loaded snapshot has (values of up to 15 bytes are stored
        // inline in a `String` and gain nothing).
        var shared: [ByteString: String] = [:]
        func interned(_ info: SongInfo) -> SongInfo {
            var info = info
            info.tags = info.tags.map { item in
                guard item.value.utf8.count > 15 else { return item }
                let key = ByteString(item.value)
                if let value = shared[key] { return TagItem(item.type, value) }
                shared[key] = item.value
                return item
            }
            return info
        }

        // Reserve the index of each directory before its children so parents precede children.
        func add(_ node: TreeDirectory, path: String, parent: Int32) -> Int32 {
            let index = Int32(directories.count)
            directories.append(
                Directory(
                    path: path, modificationTime: 0, parent: parent, children: [], songs: 0..<0, playlists: [],
                    inode: 0, device: 0))
            let songStart = Int32(songs.count)
            for song in Self.sortedSongs(node.songs.values) {
                let uri = path.isEmpty ? song.name : path + "/" + song.name
                songs.append(
                    Song(
                        uri: uri, directory: index, modificationTime: song.modificationTime, size: song.size,
                        info: interned(song.info)))
            }
            let songRange = songStart..<Int32(songs.count)
            let childPaths = node.children.keys.map { path.isEmpty ? $0 : path + "/" + $0 }
            var children: [Int32] = []
            for childPath in childPaths.sorted(by: Collator.root.areInIncreasingOrder) {
                let name = String(childPath.dropFirst(path.isEmpty ? 0 : path.count + 1))
                children.append(add(node.children[name]!, path: childPath, parent: index))
            }
            directories[Int(index)] = Directory(
                path: path, modificationTime: node.modificationTime, parent: parent, children: children,
                songs: songRange, playlists: node.playlists, inode: node.inode, device: node.device)
            return index
        }
        _ = add(tree, path: "", parent: -1)
        self.init(directories: directories, songs: songs, updateTime: updateTime)
    }

    /// A snapshot from parts already in walk order (the database file stores them so).
    init(directories: [Directory], songs: [Song], updateTime: Int64, statistics: Statistics? = nil) {
        self.directories = directories
        self.songs = songs
        self.updateTime = updateTime
        self.cachedStatistics.withLock { $0 = statistics }
    }

    /// The tree this snapshot was built from, for the next update job to start from. Built on each call
    /// (an update job calls it once, off the loop).
    public var tree: TreeDirectory {
        var nodes = self.directories.map { directory in
            var node = TreeDirectory(name: Self.lastComponent(of: directory.path))
            node.modificationTime = directory.modificationTime
            node.inode = directory.inode
            node.device = directory.device
            node.playlists = directory.playlists
            node.songs.reserveCapacity(directory.songs.count)
            for index in directory.songs {
                let song = self.songs[Int(index)]
                let name = self.name(of: song)
                node.songs[name] = TreeSong(
                    name: name, modificationTime: song.modificationTime, size: song.size, info: song.info)
            }
            return node
        }
        // Children have higher indices than their parent: fold them in from the last.
        for index in nodes.indices.dropFirst().reversed() {
            let node = nodes[index]
            nodes[index] = TreeDirectory(name: "")
            nodes[Int(self.directories[index].parent)].children[node.name] = node
        }
        return nodes.first ?? TreeDirectory(name: "")
    }

    /// The file name of `song` in its directory.
    func name(of song: Song) -> String {
        let directory = self.directories[Int(song.directory)].path
        if directory.isEmpty { return song.uri }
        return String(decoding: song.uri.utf8.dropFirst(directory.utf8.count + 1), as: UTF8.self)
    }

    /// The last component of a relative path ("" for the root).
    static func lastComponent(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return path }
        return String(path[path.utf8.index(after: slash)...])
    }

    // MARK: - Lookups

    /// The directory at `path` ("" for the root).
    public func directory(at path: String) -> Int32? {
        Self.cached(self.directoryByPath) {
            Dictionary(self.directories.enumerated().map { ($1.path, Int32($0)) }, uniquingKeysWith: { first, _ in first })
        }[path]
    }

    /// The song at `uri`.
    public func song(at uri: String) -> Int32? {
        Self.cached(self.songByURI) {
            Dictionary(self.songs.enumerated().map { ($1.uri, Int32($0)) }, uniquingKeysWith: { first, _ in first })
        }[uri]
    }

    /// The value in `cache`, made and stored on first use.
    private static func cached<Value: Sendable>(_ cache: borrowing Mutex<Value?>, _ make: () -> Value) -> Value {
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

    private func postings(_ type: TagType) -> Postings {
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
        let directory = self.directories[Int(index)]
        for song in directory.songs { visitSong(song) }
        if let visitPlaylist { for playlist in directory.playlists { visitPlaylist(directory, playlist) } }
        for child in directory.children {
            visitDirectory?(self.directories[Int(child)])
            if recursive {
                self.walk(
                    from: child, recursive: true, directory: visitDirectory, song: visitSong, playlist: visitPlaylist)
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
            let milliseconds = self.songs.reduce(UInt64(0)) { $0 + ($1.info.durationMilliseconds ?? 0) }
            // Distinct by bytes, as mpd counts: `String` equality merges canonically equivalent values.
            var artists = Set<ByteString>()
            var albums = Set<ByteString>()
            for song in self.songs {
                for item in song.info.tags {
                    if item.type == .artist { artists.insert(ByteString(item.value)) }
                    if item.type == .album { albums.insert(ByteString(item.value)) }
                }
            }
            return (artists.count, albums.count, self.songs.count, milliseconds / 1000)
        }
    }

    // MARK: - Ordering

    /// A directory's songs in `mpd`'s order, with each song's sort keys worked out once.
    static func sortedSongs(_ songs: Dictionary<String, TreeSong>.Values) -> [TreeSong] {
        guard songs.count > 1 else { return Array(songs) }
        struct Keyed {
            var song: TreeSong
            var album: String?
            var disc: Int
            var track: Int
        }
        let keyed = songs.map { song in
            Keyed(
                song: song, album: song.info.firstValue(.album),
                disc: Self.leadingInteger(song.info.firstValue(.disc)),
                track: Self.leadingInteger(song.info.firstValue(.track)))
        }
        return keyed.sorted { a, b in
            let album = Self.compareOptional(a.album, b.album)
            if album != 0 { return album < 0 }
            let disc = Self.compareIntegers(a.disc, b.disc)
            if disc != 0 { return disc < 0 }
            let track = Self.compareIntegers(a.track, b.track)
            if track != 0 { return track < 0 }
            return Collator.root.compare(a.song.name, b.song.name) < 0
        }.map(\.song)
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
    /// Each value's number.
    let numbers: [String: Int32]
    /// `songs[offsets[n]..<offsets[n + 1]]` carry value number `n`.
    private let offsets: [Int32]
    private let songs: [Int32]

    init(_ type: TagType, songs: [Database.Song]) {
        var numbers: [String: Int32] = [:]
        var lastSong: [Int32] = []
        var pairs: [(value: Int32, song: Int32)] = []
        for (index, song) in songs.enumerated() {
            let index = Int32(index)
            for item in song.info.tags where item.type == type {
                let number: Int32
                if let known = numbers[item.value] {
                    number = known
                } else {
                    number = Int32(lastSong.count)
                    numbers[item.value] = number
                    lastSong.append(-1)
                }
                // A song with the same value twice (multi-valued duplicates) is listed once.
                if lastSong[Int(number)] == index { continue }
                lastSong[Int(number)] = index
                pairs.append((number, index))
            }
        }
        var offsets = [Int32](repeating: 0, count: lastSong.count + 1)
        for pair in pairs { offsets[Int(pair.value) + 1] += 1 }
        for index in offsets.indices.dropFirst() { offsets[index] += offsets[index - 1] }
        var next = offsets
        var list = [Int32](repeating: 0, count: pairs.count)
        for pair in pairs {
            list[Int(next[Int(pair.value)])] = pair.song
            next[Int(pair.value)] += 1
        }
        self.numbers = numbers
        self.offsets = offsets
        self.songs = list
    }

    /// The songs carrying `value`.
    func songs(with value: String) -> [Int32] {
        guard let number = self.numbers[value] else { return [] }
        return Array(self.songs[Int(self.offsets[Int(number)])..<Int(self.offsets[Int(number) + 1])])
    }
}
