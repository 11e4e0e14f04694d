// SPDX-License-Identifier: GPL-3.0-or-later

import Model

extension Database {
    /// One step of a listing of the tree (`lsinfo`, `listall`, `listallinfo`).
    public enum ListingEntry: Equatable, Sendable {
        /// A directory, by its number.
        case directory(Int32)
        /// Directories one after the other, by their numbers: a run of one directory's sub-directories in a listing
        /// that does not go into them.
        case directories(ArraySlice<Int32>)
        /// The root of a mounted storage's database, at its mount point's path.
        case mountRoot(Int32)
        /// Visible songs of one directory, one after the other in the song table (their names are too), with the
        /// directory's number (the printer's `file: DIR/` key, without a look at the first song's record).
        case songs(Range<Int32>, directory: Int32)
        /// A directory's playlist file, by its index there.
        case playlist(directory: Int32, index: Int32)
    }

    /// What a listing shows, in `mpd`'s order, made as it is asked for: for a directory its songs, its playlist
    /// files, then each sub-directory (followed, when recursive, by its contents); for a song just the song.
    /// A listing of the whole library needs no array of its hundred thousand entries.
    public struct Listing: Sequence, IteratorProtocol {
        /// A directory being listed, and how far.
        private struct Frame {
            let directory: Int32
            var song: Int32
            var playlist = 0
            var child = 0
        }

        private let database: Database
        private let recursive: Bool
        private let longestRun: Int32
        private var frames: [Frame] = []
        /// An entry to give before going on with the frames.
        private var pending: ListingEntry?
        /// In a recursive listing, the directories still to enter after the one being listed: directories are
        /// numbered depth first in the order they are listed, so a subtree is a range of numbers, entered one after
        /// the other with no look at any list of sub-directories (each an allocation of its own, whose reads were a
        /// sixth of a `listall`).
        private var following: Range<Int32> = 0..<0

        /// The listing of directory `directory`, recursive or not; runs of songs, and of sub-directories in a listing
        /// that is not recursive, hold at most `longestRun`.
        ///
        /// A recursive listing of a directory other than the root starts with that directory (or, for a mount
        /// point, the root of its storage's database), as `mpd`'s does.
        public init(of directory: Int32, in database: Database, recursive: Bool, longestRun: Int = 256) {
            self.database = database
            self.recursive = recursive
            self.longestRun = Int32(Swift.max(1, longestRun))
            if recursive && directory != 0 {
                self.pending = database.mountRootTime(directory) != nil ? .mountRoot(directory) : .directory(directory)
            }
            if recursive { self.following = (directory + 1)..<(database.lastDescendant(of: directory) + 1) }
            self.frames = [Frame(directory: directory, song: database.directories[Int(directory)].songs.lowerBound)]
        }

        /// The listing of song `song` alone.
        public init(song: Int32, in database: Database) {
            self.database = database
            self.recursive = false
            self.longestRun = 1
            self.pending = .songs(song..<(song + 1), directory: database.songs.directory(song))
        }

        /// Hands the next entries to `body` while it returns `true`; returns `false` once there are no more (and
        /// `true` when `body` stopped it: more may remain).
        public mutating func advance(while body: (ListingEntry) -> Bool) -> Bool {
            while let entry = self.next() {
                if !body(entry) { return true }
            }
            return false
        }

        /// In a recursive listing whose next entry starts a directory of the subtree, takes the plain directories
        /// that come next, at most `limit`, and returns their numbers (empty when the next entry is anything else):
        /// what `next()` would give for them as `.directory(d)` and runs of its songs, with nothing else in between.
        /// A directory is plain when it is no mount point, holds no playlist file and at most `longestRun` songs,
        /// in a snapshot with no hidden song, no song carrying a cue sheet and no raw-byte escape in a directory's
        /// path (`Database.putBriefListing` writes their lines by bytes).
        public mutating func takePlainDirectories(limit: Int) -> Range<Int32> {
            guard self.recursive, self.pending == nil, self.frames.count == 1, let first = self.following.first,
                !self.database.hasHiddenSongs, !self.database.songs.hasPlaylists, !self.database.hasPathEscapes
            else { return 0..<0 }
            let top = self.frames[0]
            guard top.song >= self.database.directories[Int(top.directory)].songs.upperBound,
                top.playlist >= self.database.directories[Int(top.directory)].playlists.count
            else { return 0..<0 }
            var end = first
            let hasMountPoints = self.database.hasMountPoints
            while end < self.following.upperBound && Int(end - first) < limit {
                // Field by field: a copy of the whole directory would retain each of its references.
                guard self.database.directories[Int(end)].playlists.isEmpty,
                    self.database.directories[Int(end)].songs.count <= Int(self.longestRun),
                    !hasMountPoints || self.database.mountRootTime(end) == nil
                else { break }
                end += 1
            }
            guard end > first else { return 0..<0 }
            self.following = end..<self.following.upperBound
            self.frames[0] = Frame(directory: end - 1, song: self.database.directories[Int(end - 1)].songs.upperBound)
            return first..<end
        }

        public mutating func next() -> ListingEntry? {
            if let pending = self.pending {
                self.pending = nil
                return pending
            }
            while let top = self.frames.last {
                let index = Int(top.directory)
                // Field by field: a copy of the whole directory would retain each of its references.
                let songs = self.database.directories[index].songs
                if top.song < songs.upperBound {
                    var start = top.song
                    while start < songs.upperBound && self.database.isHidden(start) { start += 1 }
                    var end = start
                    let limit = Int32(Swift.min(Int(songs.upperBound), Int(start) + Int(self.longestRun)))
                    while end < limit && !self.database.isHidden(end) { end += 1 }
                    self.frames[self.frames.count - 1].song = end
                    if start < end { return .songs(start..<end, directory: top.directory) }
                    continue
                }
                if top.playlist < self.database.directories[index].playlists.count {
                    self.frames[self.frames.count - 1].playlist += 1
                    return .playlist(directory: top.directory, index: Int32(top.playlist))
                }
                if self.recursive {
                    // The next directory of the subtree, listed as its parent's listing would reach it.
                    self.frames.removeLast()
                    guard let child = self.following.first else { return nil }
                    self.following = (child + 1)..<self.following.upperBound
                    // As mpd: a mount point, then the root of the storage's database, under the same path.
                    if self.database.mountRootTime(child) != nil { self.pending = .mountRoot(child) }
                    self.frames.append(
                        Frame(directory: child, song: self.database.directories[Int(child)].songs.lowerBound))
                    return .directory(child)
                }
                let children = self.database.directories[index].children
                guard top.child < children.count else {
                    self.frames.removeLast()
                    continue
                }
                let end = Swift.min(children.count, top.child + Int(self.longestRun))
                self.frames[self.frames.count - 1].child = end
                return .directories(children[top.child..<end])
            }
            return nil
        }
    }

    /// The listing of `uri`: a directory's (``Listing``), or a song's alone; `nil` when it is neither.
    public func listing(of uri: String, recursive: Bool, longestRun: Int = 256) -> Listing? {
        if let directory = self.directory(at: uri) {
            return Listing(of: directory, in: self, recursive: recursive, longestRun: longestRun)
        }
        if let song = self.song(at: uri) { return Listing(song: song, in: self) }
        return nil
    }
}

extension Database {
    /// Whether some directory's path holds a raw-byte escape (its `directoryPathTable()` bytes are not the wire's).
    var hasPathEscapes: Bool { self.directoryPathTable().mayHoldEscapes }

    /// The bytes `putBriefListing(_:directoryKey:fileKey:to:)` writes for directories `range`.
    public func briefListingByteCount(_ range: Range<Int32>, directoryKey: [UInt8], fileKey: [UInt8]) -> Int {
        let paths = self.directoryPathTable()
        var total = 0
        for directory in range {
            let songs = self.directories[Int(directory)].songs
            let path = paths.byteCount(directory)
            total +=
                directoryKey.count + path + 1 + songs.count * (fileKey.count + path + 2)
                + self.songs.nameByteCount(of: songs)
        }
        return total
    }

    /// Writes, for each of directories `range` (plain ones: `Listing.takePlainDirectories(limit:)`), `directoryKey`
    /// and its path, then for each of its songs `fileKey`, the path, a slash and the song's name, each line ended by
    /// a newline: a brief recursive listing's (`listall`) lines, as its entries would give them, written by bytes.
    public func putBriefListing(
        _ range: Range<Int32>, directoryKey: [UInt8], fileKey: [UInt8], to writer: inout ByteWriter
    ) {
        let paths = self.directoryPathTable()
        let table = self.songs
        directoryKey.withUnsafeBufferPointer { directoryKey in
            fileKey.withUnsafeBufferPointer { fileKey in
                table.nameStarts.withUnsafeBufferPointer { starts in
                    table.names.withUnsafeBufferPointer { names in
                        for directory in range {
                            let songs = self.directories[Int(directory)].songs
                            precondition(
                                songs.lowerBound >= 0 && Int(songs.upperBound) < starts.count,
                                "Database: a directory's songs outside the table")
                            paths.withBytes(directory) { path in
                                let prefix = fileKey.count + path.count + 1
                                let nameBytes = Int(starts[Int(songs.upperBound)] - starts[Int(songs.lowerBound)])
                                let needed =
                                    directoryKey.count + path.count + 1 + songs.count * (prefix + 1) + nameBytes
                                writer.withRoom { room in
                                    precondition(room.count >= needed, "Database: no room for a directory's lines")
                                    let base = room.baseAddress!
                                    func put(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) {
                                        guard let source = bytes.baseAddress else { return }
                                        ByteWriter.copy(source, to: base + offset, count: bytes.count)
                                    }
                                    put(directoryKey, at: 0)
                                    put(path, at: directoryKey.count)
                                    var at = directoryKey.count + path.count
                                    base[at] = UInt8(ascii: "\n")
                                    at += 1
                                    guard !songs.isEmpty else { return at }
                                    // The first line's `file: PATH/`, written in place and copied into the next ones.
                                    put(fileKey, at: at)
                                    put(path, at: at + fileKey.count)
                                    base[at + prefix - 1] = UInt8(ascii: "/")
                                    at = SongTable.writeNameLines(
                                        songs, starts: starts, names: names,
                                        prefix: UnsafeBufferPointer(start: base + at, count: prefix), into: room, at: at
                                    )
                                    return at
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

extension Database {
    /// Calls `body` with each run of songs of one directory among the table's songs `range`, in order, and that
    /// directory: the runs are the ranges the directories' records hold, cut to `range` (a whole library's
    /// `list file`, written piece by piece).
    public func forEachDirectoryRun(in range: Range<Int32>, _ body: (Range<Int32>, Int32) -> Void) {
        guard !range.isEmpty else { return }
        let songs = self.songs
        self.directories.withUnsafeBufferPointer { directories in
            var song = range.lowerBound
            var directory = Int(songs.directory(song))
            while true {
                let end = min(range.upperBound, directories[directory].songs.upperBound)
                precondition(end > song, "Database: a song outside its directory's range")
                body(song..<end, Int32(directory))
                song = end
                guard song < range.upperBound else { return }
                // Directories are numbered in walk order, as their songs are: the next one with songs holds the
                // next song (the song's own record read only if not: a read per run missed the cache each time).
                directory += 1
                while directory < directories.count && directories[directory].songs.isEmpty { directory += 1 }
                if directory == directories.count || directories[directory].songs.lowerBound != song {
                    directory = Int(songs.directory(song))
                }
            }
        }
    }
}
