// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// A song as the updater keeps it: its file name in its directory, what identifies its version on disk,
/// and what was read from it.
///
/// A song the job has not read again stays where it is in the previous snapshot: its `info` is built only when
/// asked for, and the next snapshot copies its columns without building it.
public struct TreeSong: Sendable, Hashable {
    /// The file name.
    public var name: String
    /// Modification time, seconds since the epoch.
    public var modificationTime: Int64
    /// Size in bytes.
    public var size: Int64
    /// What was read, or where it is in the previous snapshot.
    enum Content: Sendable {
        indirect case read(SongInfo)
        case snapshot(Database, Int32)
    }

    var content: Content
    /// For a song of a playlist file's directory (`mpd`'s `as_directory` cue sheet tracks): the file it names and
    /// its range; `info` then holds what the playlist gave, which the snapshot completes from that file.
    public var playlistTrack: PlaylistTrack? {
        get { self.track?.value }
        set { self.track = newValue.map(TrackBox.init) }
    }

    /// `playlistTrack`, boxed: one pointer in every song of a tree, which few are.
    private var track: TrackBox?

    private final class TrackBox: Sendable {
        let value: PlaylistTrack
        init(_ value: PlaylistTrack) { self.value = value }
    }

    /// Tags and audio properties.
    public var info: SongInfo {
        get {
            switch self.content {
            case .read(let info): info
            case .snapshot(let database, let song): database.songs.info(song)
            }
        }
        set { self.content = .read(newValue) }
    }

    /// Creates a song.
    public init(name: String, modificationTime: Int64, size: Int64, info: SongInfo) {
        self.name = name
        self.modificationTime = modificationTime
        self.size = size
        self.content = .read(info)
    }

    /// Creates a song of a playlist file's directory: what the playlist gave and the file it names.
    public init(name: String, info: SongInfo, track: PlaylistTrack) {
        self.name = name
        self.modificationTime = 0
        self.size = 0
        self.content = .read(info)
        self.playlistTrack = track
    }

    /// Song `song` of `database`.
    init(name: String, song: Int32, of database: Database) {
        self.name = name
        self.modificationTime = database.songs.modificationTime(song)
        self.size = database.songs.size(song)
        self.content = .snapshot(database, song)
    }

    /// What `mpd` orders a directory's songs by: the first album, disc and track values.
    var sortKeys: (album: String?, disc: String?, track: String?) {
        switch self.content {
        case .read(let info):
            return (info.firstValue(.album), info.firstValue(.disc), info.firstValue(.track))
        case .snapshot(let database, let song):
            let songs = database.songs
            return (songs.firstValue(song, .album), songs.firstValue(song, .disc), songs.firstValue(song, .track))
        }
    }

    public static func == (lhs: TreeSong, rhs: TreeSong) -> Bool {
        lhs.name == rhs.name && lhs.modificationTime == rhs.modificationTime && lhs.size == rhs.size
            && lhs.playlistTrack == rhs.playlistTrack && lhs.info == rhs.info
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(self.name)
        hasher.combine(self.modificationTime)
        hasher.combine(self.size)
    }
}

/// The mutable directory tree an update job edits, then turns into a `Database` snapshot.
public struct TreeDirectory: Sendable, Hashable {
    /// The directory's own name ("" for the root).
    public var name: String
    /// Modification time, seconds since the epoch (0 if unknown).
    public var modificationTime: Int64 = 0
    /// Inode and device, to recognise symlink loops.
    public var inode: UInt64 = 0
    /// Device number; `TreeDirectory.containerDevice` for the songs of a container file.
    public var device: UInt64 = 0

    /// The device number that marks a container file's directory (`mpd`'s `DEVICE_CONTAINER`): a file of
    /// several songs (a chiptune of several tracks) listed as a directory named like the file.
    public static let containerDevice = UInt64.max - 1

    /// Whether this is a container file's directory of songs, not a directory on disk.
    public var isContainer: Bool { self.device == Self.containerDevice }

    /// The device number that marks a playlist file's directory (`mpd`'s `DEVICE_PLAYLIST`): a cue sheet listed
    /// as a directory of its tracks, named like the file.
    public static let playlistDevice = UInt64.max - 2

    /// Whether this is a playlist file's directory of tracks, not a directory on disk.
    public var isPlaylist: Bool { self.device == Self.playlistDevice }
    /// Sub-directories by name (compared by bytes: names that differ only in Unicode normalisation are
    /// different directories).
    public var children: [ByteString: TreeDirectory] = [:]
    /// Songs by file name (compared by bytes).
    public var songs: [ByteString: TreeSong] = [:]
    /// Playlist files (`.m3u`, `.pls`…) in the order they were found, as `mpd` keeps them.
    public var playlists: [TreePlaylist] = []
    /// The position among its siblings in the snapshot the job started from; a directory the job created comes
    /// after them, in the order the walk found it. A snapshot that is not saved keeps this order, as `mpd`'s
    /// database in memory does until a save sorts it (see `Database.init(tree:updateTime:sorted:)`).
    public var rank = 0
    /// For a directory an update of one path leaves as it is (see `Database.makeTree(expanding:)`): the number of the
    /// directory of the snapshot the tree was made from, which stands for this one and everything below it (its
    /// songs, playlists and sub-directories are not in the tree); -1 for a directory of the tree itself.
    public var reused: Int32 = -1

    /// Creates an empty directory.
    public init(name: String, rank: Int = 0) {
        self.name = name
        self.rank = rank
    }

    /// The same directory: everything but `rank`, which only orders it among its siblings.
    public static func == (lhs: TreeDirectory, rhs: TreeDirectory) -> Bool {
        lhs.name == rhs.name && lhs.modificationTime == rhs.modificationTime && lhs.inode == rhs.inode
            && lhs.device == rhs.device && lhs.children == rhs.children && lhs.songs == rhs.songs
            && lhs.playlists == rhs.playlists && lhs.reused == rhs.reused
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(self.name)
        hasher.combine(self.modificationTime)
        hasher.combine(self.inode)
        hasher.combine(self.device)
        hasher.combine(self.children)
        hasher.combine(self.songs)
        hasher.combine(self.playlists)
    }

    /// Removes whatever is called `name` here: a sub-directory, a song and, with `includingPlaylist`, a
    /// playlist file.
    ///
    /// - Returns: whether anything was removed.
    @discardableResult
    mutating func removeEntry(named name: String, includingPlaylist: Bool = false) -> Bool {
        var removed = self.children.removeValue(forKey: ByteString(name)) != nil
        if self.songs.removeValue(forKey: ByteString(name)) != nil { removed = true }
        if includingPlaylist, let index = self.playlistIndex(named: name) {
            self.playlists.remove(at: index)
            removed = true
        }
        return removed
    }

    /// Adds the playlist file `playlist`, or replaces the one of its name.
    ///
    /// - Returns: whether anything changed.
    mutating func setPlaylist(_ playlist: TreePlaylist) -> Bool {
        guard let index = self.playlistIndex(named: playlist.name) else {
            self.playlists.append(playlist)
            return true
        }
        guard self.playlists[index] != playlist else { return false }
        self.playlists[index] = playlist
        return true
    }

    /// The position of the playlist file called `name` (compared by bytes).
    func playlistIndex(named name: String) -> Int? {
        self.playlists.firstIndex { ByteString.sameBytes($0.name, name) }
    }

    /// Whether the directory holds nothing: no songs, playlists or sub-directories (a reused one holds what its
    /// snapshot's directory holds, which is never empty: see `Database.makeTree(expanding:)`).
    public var isEmpty: Bool {
        self.reused < 0 && self.children.isEmpty && self.songs.isEmpty && self.playlists.isEmpty
    }

    /// Whether a directory of the tree here or below (not one reused from a snapshot) is a playlist file's.
    public var holdsPlaylistDirectory: Bool {
        self.isPlaylist || self.children.values.contains { $0.holdsPlaylistDirectory }
    }

    /// Removes empty sub-directories, deepest first, as `mpd` does when it saves its database.
    ///
    /// - Returns: whether anything was removed.
    @discardableResult
    public mutating func pruneEmpty() -> Bool {
        var removed = false
        for name in Array(self.children.keys) {
            if self.children[name]!.pruneEmpty() { removed = true }
            if self.children[name]!.isEmpty {
                self.children.removeValue(forKey: name)
                removed = true
            }
        }
        return removed
    }

    /// Whether this tree has the same directories as `other`, with the same modification times (songs and
    /// playlists are not compared): what an update that modified nothing may still have changed, as `mpd`'s
    /// walk adds directories holding no song and sets directories' times without counting it a modification.
    public func hasSameDirectories(as other: TreeDirectory) -> Bool {
        guard self.modificationTime == other.modificationTime, self.children.count == other.children.count else {
            return false
        }
        return self.children.allSatisfy { name, child in
            other.children[name].map { child.hasSameDirectories(as: $0) } ?? false
        }
    }

    /// The number of songs here and below.
    public var songCount: Int { self.songs.count + self.children.values.reduce(0) { $0 + $1.songCount } }

    /// The song at `uri` below this directory (names compared by bytes), if there is one.
    public func song(at uri: String) -> TreeSong? {
        var names = uri.split(separator: "/", omittingEmptySubsequences: false)
        guard let last = names.popLast() else { return nil }
        var directory = self
        for name in names {
            guard let child = directory.children[ByteString(String(name))] else { return nil }
            directory = child
        }
        return directory.songs[ByteString(String(last))]
    }

    /// Runs `body` on the directory at `components` below this one, if it exists.
    mutating func withDirectory<R>(at components: ArraySlice<String>, _ body: (inout TreeDirectory) -> R) -> R? {
        guard let name = components.first else { return body(&self) }
        // Through the index: `children[name]` would copy the child out to test it, then hash the name again.
        guard let index = self.children.index(forKey: ByteString(name)) else { return nil }
        return self.children.values[index].withDirectory(at: components.dropFirst(), body)
    }
}

/// What a song of a playlist file's directory refers to: the file the playlist names (`mpd`'s `target`) and the
/// part of it the song is.
public struct PlaylistTrack: Sendable, Hashable {
    /// The file as the database stores it: relative to the playlist's directory (`../` and the name the playlist
    /// gave, as `mpd` writes it), or absolute, or a URL.
    public var target: String
    /// Where the song starts in the file, in milliseconds.
    public var startMilliseconds: UInt64
    /// Where it ends, in milliseconds; 0 is the end of the file.
    public var endMilliseconds: UInt64

    /// Creates a reference.
    public init(target: String, startMilliseconds: UInt64 = 0, endMilliseconds: UInt64 = 0) {
        self.target = target
        self.startMilliseconds = startMilliseconds
        self.endMilliseconds = endMilliseconds
    }

    /// The URI (relative to the music directory) of the file `target` names from the playlist directory at
    /// `directory`, as `mpd` looks it up (`Directory::LookupTargetSong`): each leading `../` goes one directory up
    /// (`nil` above the root), the rest must be plain names; `nil` for an absolute target or a URL.
    public static func resolve(_ target: String, from directory: String) -> String? {
        guard !target.hasPrefix("/"), !URIScheme.hasScheme(target) else { return nil }
        var base =
            directory.isEmpty ? [] : directory.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        var rest = Substring(target)
        while rest.utf8.starts(with: "../".utf8) {
            guard !base.isEmpty else { return nil }
            base.removeLast()
            rest = rest.dropFirst(3)
        }
        let names = rest.split(separator: "/", omittingEmptySubsequences: false)
        guard !names.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else { return nil }
        return (base + names.map(String.init)).joined(separator: "/")
    }
}

/// A playlist file in the music directory: listed by `lsinfo`, never read as a song.
public struct TreePlaylist: Sendable, Hashable {
    /// The file name.
    public var name: String
    /// Modification time, seconds since the epoch.
    public var modificationTime: Int64

    /// Creates an entry.
    public init(name: String, modificationTime: Int64) {
        self.name = name
        self.modificationTime = modificationTime
    }
}
