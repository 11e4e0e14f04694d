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
    }

    /// A song of the database.
    public struct Song: Sendable {
        /// The URI relative to the music directory.
        public let uri: String
        /// The directory holding it.
        public let directory: Int32
        /// Modification time, seconds since the epoch.
        public let modificationTime: Int64
        /// Size in bytes.
        public let size: Int64
        /// Tags and audio properties.
        public let info: SongInfo
    }

    /// Every directory; index 0 is the root.
    public let directories: [Directory]
    /// Every song, in walk order.
    public let songs: [Song]
    /// When the last update that produced this snapshot finished, seconds since the epoch.
    public let updateTime: Int64
    /// The tree this snapshot was built from, for the next update job to start from.
    public let tree: TreeDirectory

    private let directoryByPath: [String: Int32]
    private let songByURI: [String: Int32]
    /// For each tag type, each value and the songs carrying it (ascending song indices).
    private let postings: [[String: [Int32]]]
    /// Tag columns built on first use (a lookup needs them only for the types clients list and count).
    private let columns = Mutex<[TagColumn?]>(Array(repeating: nil, count: TagType.allCases.count))
    /// Query indexes built on first use (see `FoldedTagIndex`).
    let queryIndexes = QueryIndexes()

    /// An empty database (no music directory scanned yet).
    public convenience init() {
        self.init(tree: TreeDirectory(name: ""), updateTime: 0)
    }

    /// Builds a snapshot from an update job's tree.
    public init(tree: TreeDirectory, updateTime: Int64) {
        var directories: [Directory] = []
        var songs: [Song] = []
        var directoryByPath: [String: Int32] = [:]
        var songByURI: [String: Int32] = [:]

        // Reserve the index of each directory before its children so parents precede children.
        func add(_ node: TreeDirectory, path: String, parent: Int32) -> Int32 {
            let index = Int32(directories.count)
            directories.append(
                Directory(path: path, modificationTime: 0, parent: parent, children: [], songs: 0..<0, playlists: []))
            directoryByPath[path] = index
            let songStart = Int32(songs.count)
            for song in Self.sortedSongs(node.songs.values) {
                let uri = path.isEmpty ? song.name : path + "/" + song.name
                songByURI[uri] = Int32(songs.count)
                songs.append(
                    Song(
                        uri: uri, directory: index, modificationTime: song.modificationTime, size: song.size,
                        info: song.info))
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
                songs: songRange, playlists: node.playlists)
            return index
        }
        _ = add(tree, path: "", parent: -1)

        var postings = [[String: [Int32]]](repeating: [:], count: TagType.allCases.count)
        for (index, song) in songs.enumerated() {
            let index = Int32(index)
            for item in song.info.tags {
                // A song with the same value twice (multi-valued duplicates) is listed once.
                if postings[item.type.rawValue][item.value]?.last == index { continue }
                postings[item.type.rawValue][item.value, default: []].append(index)
            }
        }

        self.directories = directories
        self.songs = songs
        self.directoryByPath = directoryByPath
        self.songByURI = songByURI
        self.postings = postings
        self.updateTime = updateTime
        let milliseconds = songs.reduce(UInt64(0)) { $0 + ($1.info.durationMilliseconds ?? 0) }
        // Distinct by bytes, as mpd counts: the postings' `String` keys merge canonically equivalent values.
        func distinct(_ type: TagType) -> Int {
            Set(songs.lazy.flatMap { $0.info.tags.lazy.filter { $0.type == type }.map { ByteString($0.value) } }).count
        }
        self.statistics = (distinct(.artist), distinct(.album), songs.count, milliseconds / 1000)
        self.tree = tree
    }

    // MARK: - Lookups

    /// The directory at `path` ("" for the root).
    public func directory(at path: String) -> Int32? { self.directoryByPath[path] }

    /// The song at `uri`.
    public func song(at uri: String) -> Int32? { self.songByURI[uri] }

    /// The songs carrying `value` for `type` (exact, case-sensitive), in walk order.
    public func songs(with type: TagType, value: String) -> [Int32] { self.postings[type.rawValue][value] ?? [] }

    /// The distinct values of `type`.
    public func values(of type: TagType) -> Dictionary<String, [Int32]>.Keys { self.postings[type.rawValue].keys }

    /// `type` resolved with fallbacks for every song: values in byte order and each song's value numbers.
    /// Built once per snapshot, on first use.
    public func column(_ type: TagType) -> TagColumn {
        if let column = self.columns.withLock({ $0[type.rawValue] }) { return column }
        let column = TagColumn(type, songs: self.songs)
        self.columns.withLock { $0[type.rawValue] = column }
        return column
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

    /// `stats`' database figures: distinct artists and albums, songs, total play time in seconds (the sum
    /// of the songs' durations, truncated), worked out once per snapshot.
    public let statistics: (artists: Int, albums: Int, songs: Int, playTimeSeconds: UInt64)

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
