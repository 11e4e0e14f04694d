// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Testing

@testable import Library

struct ListingTests {
    /// Root: three songs and a playlist file; `a` (three songs, the middle one hidden) with `a/b` (one song) and
    /// the empty `a/c`; `m`, a mount point with one song; `z` with one song.
    static func database() -> Database {
        func songs(_ names: String...) -> [ByteString: TreeSong] {
            Dictionary(
                uniqueKeysWithValues: names.map {
                    (ByteString($0), TreeSong(name: $0, modificationTime: 0, size: 0, info: SongInfo()))
                })
        }
        var root = TreeDirectory(name: "")
        root.songs = songs("r1.mp3", "r2.mp3", "r3.mp3")
        root.playlists = [TreePlaylist(name: "list.m3u", modificationTime: 5)]
        var a = TreeDirectory(name: "a")
        a.songs = songs("x1.mp3", "x2.mp3", "x3.mp3")
        var b = TreeDirectory(name: "b")
        b.songs = songs("y.mp3")
        a.children["b"] = b
        a.children["c"] = TreeDirectory(name: "c")
        root.children["a"] = a
        var m = TreeDirectory(name: "m")
        m.songs = songs("w.mp3")
        root.children["m"] = m
        var z = TreeDirectory(name: "z")
        z.songs = songs("v.mp3")
        root.children["z"] = z
        let plain = Database(tree: root, updateTime: 0)
        let hiding = Database(
            directories: plain.directories, songs: plain.songs, updateTime: 0, hiddenURIs: ["a/x2.mp3"])
        return hiding.marking(mountRoots: [plain.directory(at: "m")!: 42])
    }

    /// Each entry as text, runs of songs song by song.
    static func lines(_ listing: Database.Listing, of database: Database) -> [String] {
        listing.flatMap { entry -> [String] in
            switch entry {
            case .directory(let index): ["directory \(database.directories[Int(index)].path)"]
            case .directories(let indexes): indexes.map { "directory \(database.directories[Int($0)].path)" }
            case .mountRoot(let index): ["root \(database.directories[Int(index)].path)"]
            case .songs(let run, _): run.map { "song \(database.songs.uri($0))" }
            case .playlist(let directory, let index):
                ["playlist \(database.directories[Int(directory)].playlists[Int(index)].name)"]
            }
        }
    }

    @Test func aRecursiveListingOfTheRootGoesSongsPlaylistsThenEachDirectoryAndItsContents() throws {
        let database = Self.database()
        let expected = [
            "song r1.mp3", "song r2.mp3", "song r3.mp3", "playlist list.m3u",
            "directory a", "song a/x1.mp3", "song a/x3.mp3", "directory a/b", "song a/b/y.mp3", "directory a/c",
            "directory m", "root m", "song m/w.mp3",
            "directory z", "song z/v.mp3",
        ]
        for longest in [1, 2, 256] {
            let listing = try #require(database.listing(of: "", recursive: true, longestRun: longest))
            #expect(Self.lines(listing, of: database) == expected)
            // Runs: no longer than asked, never across a hidden song or a directory.
            for case .songs(let run, let directory) in listing {
                #expect(!run.isEmpty && run.count <= longest)
                #expect(run.allSatisfy { !database.isHidden($0) })
                // Every song of a run is of the directory the entry names.
                #expect(Set(run.map { database.songs.directory($0) }) == [directory])
            }
        }
        let whole = try #require(database.listing(of: "", recursive: true))
        // The root's three songs are one run.
        #expect(Array(whole).first == .songs(0..<3, directory: 0))
    }

    /// A recursive listing enters directories by their numbers; it lists what a walk of each directory's list of
    /// sub-directories lists, from every directory.
    @Test func aRecursiveListingFollowsTheListsOfSubDirectories() throws {
        let database = Self.database()
        func walk(_ directory: Int32) -> [String] {
            let node = database.directories[Int(directory)]
            let songs = node.songs.filter { !database.isHidden($0) }.map { "song \(database.songs.uri($0))" }
            return songs + node.playlists.map { "playlist \($0.name)" }
                + node.children.flatMap { child in
                    let path = database.directories[Int(child)].path
                    let head =
                        database.mountRootTime(child) != nil
                        ? ["directory \(path)", "root \(path)"]
                        : ["directory \(path)"]
                    return head + walk(child)
                }
        }
        for directory in database.directories.indices.map(Int32.init) {
            let path = database.directories[Int(directory)].path
            let listing = try #require(database.listing(of: path, recursive: true))
            let head =
                directory == 0
                ? [] : database.mountRootTime(directory) != nil ? ["root \(path)"] : ["directory \(path)"]
            #expect(Self.lines(listing, of: database) == head + walk(directory), "\(path)")
        }
    }

    @Test func aListingBelowTheRootStartsWithItsDirectoryOrItsStoragesRoot() throws {
        let database = Self.database()
        let a = try #require(database.listing(of: "a", recursive: true))
        #expect(
            Self.lines(a, of: database) == [
                "directory a", "song a/x1.mp3", "song a/x3.mp3", "directory a/b", "song a/b/y.mp3", "directory a/c",
            ])
        let m = try #require(database.listing(of: "m", recursive: true))
        #expect(Self.lines(m, of: database) == ["root m", "song m/w.mp3"])
    }

    @Test func aFlatListingShowsTheDirectorysOwnEntriesOnly() throws {
        let database = Self.database()
        let root = try #require(database.listing(of: "", recursive: false))
        #expect(
            Self.lines(root, of: database) == [
                "song r1.mp3", "song r2.mp3", "song r3.mp3", "playlist list.m3u", "directory a", "directory m",
                "directory z",
            ])
        let a = try #require(database.listing(of: "a", recursive: false))
        #expect(Self.lines(a, of: database) == ["song a/x1.mp3", "song a/x3.mp3", "directory a/b", "directory a/c"])
        // Sub-directories come in runs no longer than asked, in their order, and only in a flat listing.
        for longest in [1, 2, 256] {
            let listing = try #require(database.listing(of: "", recursive: false, longestRun: longest))
            let runs = listing.compactMap { entry -> [String]? in
                guard case .directories(let run) = entry else { return nil }
                return run.map { database.directories[Int($0)].path }
            }
            #expect(runs.allSatisfy { !$0.isEmpty && $0.count <= longest })
            #expect(runs.flatMap { $0 } == ["a", "m", "z"])
        }
        let recursive = try #require(database.listing(of: "", recursive: true))
        #expect(!recursive.contains { if case .directories = $0 { true } else { false } })
    }

    @Test func aSongIsListedAloneAndAnythingElseIsNoListing() throws {
        let database = Self.database()
        let song = try #require(database.listing(of: "a/b/y.mp3", recursive: true))
        #expect(Self.lines(song, of: database) == ["song a/b/y.mp3"])
        #expect(database.listing(of: "a/nothing", recursive: true) == nil)
        // A hidden song (a file a cue sheet names) is found by its URI, as by `song(at:)`.
        let hidden = try #require(database.listing(of: "a/x2.mp3", recursive: false))
        #expect(Self.lines(hidden, of: database) == ["song a/x2.mp3"])
    }

    @Test func advanceStopsWhereItsBodySaysAndGoesOnFromThere() throws {
        let database = Self.database()
        var listing = try #require(database.listing(of: "", recursive: true, longestRun: 1))
        var taken: [Database.ListingEntry] = []
        let stopped = listing.advance { entry in
            taken.append(entry)
            return taken.count < 4
        }
        #expect(stopped && taken.count == 4)
        let more = listing.advance { entry in
            taken.append(entry)
            return true
        }
        #expect(!more)
        let all = try #require(database.listing(of: "", recursive: true, longestRun: 1))
        #expect(taken == Array(all))
    }

    /// A brief listing's lines as its entries give them (mount roots and playlists as the server would not print
    /// them: these only need to be told apart).
    static func briefText(_ entry: Database.ListingEntry, of database: Database) -> String {
        switch entry {
        case .directory(let index): "directory: \(database.directories[Int(index)].path)\n"
        case .directories(let indexes):
            indexes.map { "directory: \(database.directories[Int($0)].path)\n" }.joined()
        case .mountRoot(let index): "root: \(database.directories[Int(index)].path)\n"
        case .songs(let run, _): run.map { "file: \(database.songs.uri($0))\n" }.joined()
        case .playlist(let directory, let index):
            "playlist: \(database.directories[Int(directory)].playlists[Int(index)].name)\n"
        }
    }

    /// Plain directories taken a run at a time and written by bytes (`takePlainDirectories`, `putBriefListing`)
    /// give the lines their entries give, wherever the listing starts and however many are taken at once; a
    /// directory with a playlist file or more songs than a run holds, and a mount point, go through the entries;
    /// a snapshot with hidden songs takes none.
    @Test(arguments: [1, 2, 64])
    func plainDirectoriesWrittenByBytesAreTheirEntriesLines(limit: Int) throws {
        func songs(_ names: [String]) -> [ByteString: TreeSong] {
            Dictionary(
                uniqueKeysWithValues: names.map {
                    (ByteString($0), TreeSong(name: $0, modificationTime: 0, size: 0, info: SongInfo()))
                })
        }
        var root = TreeDirectory(name: "")
        root.songs = songs(["r.mp3"])
        for artist in 0..<4 {
            var node = TreeDirectory(name: "Artist \(artist)")
            for album in 0..<3 {
                var leaf = TreeDirectory(name: "Album \(album) with a name long enough to pass 32 bytes")
                leaf.songs = songs((0..<(album == 2 && artist == 1 ? 5 : album + 1)).map { "\($0) - a song.flac" })
                if artist == 2 && album == 1 { leaf.playlists = [TreePlaylist(name: "p.m3u", modificationTime: 1)] }
                node.children[ByteString(leaf.name)] = leaf
            }
            root.children[ByteString(node.name)] = node
        }
        let plain = Database(tree: root, updateTime: 0)
        let mounted = plain.marking(mountRoots: [plain.directory(at: "Artist 3")!: 7])
        let starts = ["", "Artist 1", "Artist 2/Album 1 with a name long enough to pass 32 bytes"]
        for (database, takesSome, starts) in [
            (plain, true, starts), (mounted, true, starts), (Self.database(), false, ["", "a"]),
        ] {
            for start in starts {
                let directory = try #require(database.directory(at: start))
                let expected = Database.Listing(of: directory, in: database, recursive: true, longestRun: 4)
                    .map { Self.briefText($0, of: database) }.joined()
                var listing = Database.Listing(of: directory, in: database, recursive: true, longestRun: 4)
                var bytes: [UInt8] = []
                var taken = 0
                while true {
                    let run = listing.takePlainDirectories(limit: limit)
                    if !run.isEmpty {
                        #expect(run.count <= limit)
                        taken += run.count
                        let keys = (Array("directory: ".utf8), Array("file: ".utf8))
                        let count = database.briefListingByteCount(run, directoryKey: keys.0, fileKey: keys.1)
                        bytes.append(writingAtMost: count) { writer in
                            database.putBriefListing(run, directoryKey: keys.0, fileKey: keys.1, to: &writer)
                            #expect(writer.count == count)
                        }
                        continue
                    }
                    guard let entry = listing.next() else { break }
                    bytes += Array(Self.briefText(entry, of: database).utf8)
                }
                #expect(String(decoding: bytes, as: UTF8.self) == expected, "from '\(start)'")
                #expect(
                    (taken > 0) == (takesSome && start != "Artist 2/Album 1 with a name long enough to pass 32 bytes"))
            }
        }
    }

    /// The runs of one directory in pieces of the table (of 1, 3 and all songs): together each piece, in order, and
    /// each run's songs those of its directory.
    @Test(arguments: [1, 3, 1000])
    func directoryRunsCoverAPieceInOrderEachOfOneDirectory(piece: Int) {
        let database = Self.database()
        let songs = database.songs
        var covered: [Int32] = []
        for start in stride(from: 0, to: songs.count, by: piece) {
            let range = Int32(start)..<Int32(min(songs.count, start + piece))
            var runs: [Range<Int32>] = []
            database.forEachDirectoryRun(in: range) { run, directory in
                runs.append(run)
                #expect(!run.isEmpty && run.allSatisfy { songs.directory($0) == directory })
                #expect(database.directories[Int(directory)].songs.contains(run.lowerBound))
            }
            #expect(runs.flatMap { Array($0) } == Array(range))
            // A run ends at its piece's end or at its directory's last song.
            #expect(runs.dropLast().allSatisfy { songs.directory($0.upperBound - 1) != songs.directory($0.upperBound) })
            covered += runs.flatMap { Array($0) }
        }
        #expect(covered == Array(Int32(0)..<Int32(songs.count)))
        #expect(songs.count > 3)
    }
}
