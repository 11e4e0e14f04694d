// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Model
import Posix
import Synchronization
import TestSupport
import Testing

@testable import Library

@Suite(.serialized)
struct UpdaterTests {
    private func scan(
        _ music: MusicDirectory, reader: FakeReader, tree: TreeDirectory = TreeDirectory(name: ""),
        uri: String = "", discard: Bool = false
    ) -> Updater.Result {
        Updater(root: music.path, reader: reader, logger: .discarding).update(tree, uri: uri, discard: discard)
    }

    /// The top two levels are walked by several threads at once: the trees (songs, playlists, directory times and
    /// ranks: the order of new directories holding no song) are those of a walk on one thread, for a first scan
    /// and for an update that adds, changes and removes songs and directories.
    @Test func aWalkOnSeveralThreadsMakesTheTreeOfOne() throws {
        let music = try MusicDirectory()
        for artist in 0..<12 {
            for album in 0..<3 { try music.song("Music/Artist \(artist)/Album \(album)/\(album).mp3", mtime: 100) }
        }
        try music.song("top.mp3", mtime: 100)
        try music.song("Other/x.mp3", mtime: 100)
        try "#EXTM3U\n".write(toFile: music.path + "/Music/list.m3u", atomically: false, encoding: .utf8)
        func walk(_ tree: TreeDirectory, concurrency: Int) -> Updater.Result {
            Updater(root: music.path, reader: FakeReader(), logger: .discarding, concurrency: concurrency)
                .update(tree, uri: "", discard: false)
        }
        let one = walk(TreeDirectory(name: ""), concurrency: 1)
        let many = walk(TreeDirectory(name: ""), concurrency: 4)
        #expect(many.tree == one.tree)
        #expect(many.modified == one.modified)

        // New directories with no song (ranked in walk order), a new and a changed song, a directory gone.
        for name in ["Music/New B", "Music/New A", "Music/Artist 3/New", "Empty"] {
            #expect(mkdir(music.path + "/" + name, 0o755) == 0)
        }
        try music.song("Music/Artist 5/Album 9/new.mp3", mtime: 100)
        try music.song("Music/Artist 7/Album 1/1.mp3", ["Title": "Changed"], mtime: 200)
        #expect(system("rm -r '\(music.path)/Music/Artist 2'") == 0)
        let oneAgain = walk(one.tree, concurrency: 1)
        let manyAgain = walk(one.tree, concurrency: 4)
        #expect(oneAgain.modified && manyAgain.modified)
        #expect(manyAgain.tree == oneAgain.tree)
        #expect(
            Database(tree: manyAgain.tree, updateTime: 1).songs.map(\.uri)
                == Database(tree: oneAgain.tree, updateTime: 1).songs.map(\.uri))

        // Nothing changed but new empty directories: no modification, the same unsorted order.
        #expect(mkdir(music.path + "/Music/Later", 0o755) == 0)
        let oneQuiet = walk(oneAgain.tree, concurrency: 1)
        let manyQuiet = walk(oneAgain.tree, concurrency: 4)
        #expect(!oneQuiet.modified && !manyQuiet.modified)
        #expect(manyQuiet.tree == oneQuiet.tree)
        #expect(
            Database(tree: manyQuiet.tree, updateTime: 1, sorted: false).directories.map(\.path)
                == Database(tree: oneQuiet.tree, updateTime: 1, sorted: false).directories.map(\.path))
    }

    @Test func scansAndOrdersLikeMPD() throws {
        let music = try MusicDirectory()
        try music.song("b/2.mp3", ["Album": "Z", "Track": "2"])
        try music.song("b/1.mp3", ["Album": "Z", "Track": "10"])
        try music.song("b/0.mp3", ["Album": "A"])
        try music.song("A/x.mp3")
        try music.song("top.mp3")
        try "not music".write(toFile: music.path + "/notes.txt", atomically: false, encoding: .utf8)
        try "garbage".write(toFile: music.path + "/broken.mp3", atomically: false, encoding: .utf8)
        let reader = FakeReader()
        let result = self.scan(music, reader: reader)
        #expect(result.modified)
        // The reader hears once, after every file was read, that the update is done reading.
        #expect(reader.finishedReading.load(ordering: .relaxed) == 1)
        #expect(reader.readsWhenFinished.load(ordering: .relaxed) == 6)
        let database = Database(tree: result.tree, updateTime: 1)
        #expect(database.songs.map(\.uri) == ["top.mp3", "A/x.mp3", "b/0.mp3", "b/2.mp3", "b/1.mp3"])
        #expect(database.directories.map(\.path) == ["", "A", "b"])
        #expect(database.songs(with: .album, value: "Z").count == 2)
        #expect(database.statistics.songs == 5)
        #expect(database.statistics.albums == 2)
    }

    @Test func namesThatDifferOnlyInNormalisationAreDifferentFiles() throws {
        // Precomposed and decomposed: one `String`, two files (and two songs for mpd).
        let composed = "Caf\u{E9}"
        let decomposed = "Cafe\u{301}"
        let music = try MusicDirectory()
        // Through Posix, byte for byte (Foundation's file APIs may normalise names).
        for directory in [composed, decomposed] {
            try DirectoryEntries.makeDirectories(atPath: music.path + "/" + directory)
            for name in [composed, decomposed] {
                try writeFile(
                    Array("#fake\nTitle=\(name)".utf8), atPath: music.path + "/" + directory + "/" + name + ".mp3")
            }
        }
        let reader = FakeReader()
        let result = self.scan(music, reader: reader)
        let database = Database(tree: result.tree, updateTime: 1)
        #expect(database.songs.count == 4)
        #expect(database.directories.count == 3)
        for directory in [composed, decomposed] {
            for name in [composed, decomposed] {
                let song = try #require(database.song(at: directory + "/" + name + ".mp3"))
                #expect(Array(database.songs.uri(song).utf8) == Array((directory + "/" + name + ".mp3").utf8))
                #expect(database.songs.tagValues(song, .title).map { Array($0.utf8) } == [Array(name.utf8)])
            }
        }
        // Collation finds the two equal; byte order decides, the same way on every run.
        #expect(database.directories.map { Array($0.path.utf8) } == [[], Array(decomposed.utf8), Array(composed.utf8)])
        // Nothing changed on disk: an update keeps all four, and removing one file removes only that song.
        let again = self.scan(music, reader: reader, tree: database.makeTree())
        #expect(!again.modified)
        #expect(unlink(music.path + "/" + composed + "/" + decomposed + ".mp3") == 0)
        let removed = Database(tree: self.scan(music, reader: reader, tree: again.tree).tree, updateTime: 1)
        #expect(removed.songs.count == 3)
        #expect(removed.song(at: composed + "/" + decomposed + ".mp3") == nil)
        #expect(removed.song(at: composed + "/" + composed + ".mp3") != nil)
    }

    @Test func unchangedFilesAreNotReadAgainAndDeletionsDisappear() throws {
        let music = try MusicDirectory()
        let old = 1_600_000_000
        try music.song("a/1.mp3", mtime: old)
        try music.song("a/2.mp3", mtime: old)
        let reader = FakeReader()
        let first = self.scan(music, reader: reader)
        #expect(reader.reads.load(ordering: .relaxed) == 2)
        let second = self.scan(music, reader: reader, tree: first.tree)
        #expect(reader.reads.load(ordering: .relaxed) == 2)
        #expect(!second.modified)
        try FileManager.default.removeItem(atPath: music.path + "/a/2.mp3")
        let third = self.scan(music, reader: reader, tree: second.tree)
        #expect(third.modified)
        #expect(Database(tree: third.tree, updateTime: 0).songs.map(\.uri) == ["a/1.mp3"])
        #expect(reader.rereadings.load(ordering: .relaxed) == 0)
        let rescan = self.scan(music, reader: reader, tree: third.tree, discard: true)
        #expect(reader.reads.load(ordering: .relaxed) == 3)
        #expect(rescan.modified)
        // A rescan reads with a reader that forgot what it kept of earlier reads (the scan workers' verdicts).
        #expect(reader.rereadings.load(ordering: .relaxed) == 1)
    }

    @Test func partialUpdateTouchesOnlyItsPath() throws {
        let music = try MusicDirectory()
        try music.song("a/1.mp3")
        let reader = FakeReader()
        let first = self.scan(music, reader: reader)
        try music.song("b/new.mp3")
        try music.song("a/2.mp3")
        let partial = self.scan(music, reader: reader, tree: first.tree, uri: "b")
        #expect(Database(tree: partial.tree, updateTime: 0).songs.map(\.uri) == ["a/1.mp3", "b/new.mp3"])
        try FileManager.default.removeItem(atPath: music.path + "/b")
        let gone = self.scan(music, reader: reader, tree: partial.tree, uri: "b")
        #expect(Database(tree: gone.tree, updateTime: 0).directories.map(\.path) == ["", "a"])
    }

    @Test func symlinkLoopsAndUnreadableDirectoriesDoNotStopTheScan() throws {
        let music = try MusicDirectory()
        try music.song("a/1.mp3")
        try FileManager.default.createSymbolicLink(atPath: music.path + "/a/loop", withDestinationPath: "..")
        try music.song("locked/x.mp3")
        chmod(music.path + "/locked", 0)
        defer { chmod(music.path + "/locked", 0o755) }
        let result = self.scan(music, reader: FakeReader())
        let uris = Database(tree: result.tree, updateTime: 0).songs.map(\.uri)
        #expect(uris.contains("a/1.mp3"))
        #expect(!uris.contains(where: { $0.contains("loop/loop") }))
    }

    @Test func mpdignoreExcludes() throws {
        let music = try MusicDirectory()
        try music.song("keep.mp3")
        try music.song("skip-me.mp3")
        try "skip-*\n".write(toFile: music.path + "/.mpdignore", atomically: false, encoding: .utf8)
        let result = self.scan(music, reader: FakeReader())
        #expect(Database(tree: result.tree, updateTime: 0).songs.map(\.uri) == ["keep.mp3"])
    }

    @Test func mpdignoreLinesLoseTheBlanksAroundThem() {
        #expect(ExcludeList.trimmingBlanks(" \tskip-* \u{00A0}") == "skip-*")
        #expect(ExcludeList.trimmingBlanks("a b") == "a b")
        #expect(ExcludeList.trimmingBlanks(" \t ") == "")
        // Only blanks: a carriage return stays, as with Foundation's `.whitespaces`.
        #expect(ExcludeList.trimmingBlanks("x\r") == "x\r")
    }
}

struct DatabaseFileTests {
    @Test func roundTripsAndRejectsDamage() throws {
        let music = try MusicDirectory()
        try music.song("d ir/s ong.mp3", ["Artist": "Ä  b", "Title": "x y", "Album": "[1]"])
        try music.song("d ir/sub/t.mp3", ["Artist": "A"])
        let tree = Updater(root: music.path, reader: FakeReader(), logger: .discarding).update(
            TreeDirectory(name: ""), uri: "", discard: false
        ).tree
        let file = music.path + "/db"
        try DatabaseFile.save(Database(tree: tree, updateTime: 42), tags: .defaultMetadata, to: file)
        let loaded = try #require(DatabaseFile.load(from: file, tags: .defaultMetadata))
        #expect(loaded.updateTime == 42)
        #expect(loaded.makeTree() == tree)
        #expect(DatabaseFile.load(from: file, tags: .all) == nil, "another tag set means a rescan")
        #expect(DatabaseFile.load(from: music.path + "/missing", tags: .defaultMetadata) == nil)
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
        for cut in [5, bytes.count / 2, bytes.count - 3] {
            try Data(bytes[0..<cut] + [0x51, 10]).write(to: URL(fileURLWithPath: file))
            #expect(DatabaseFile.load(from: file, tags: .defaultMetadata) == nil)
        }
        for old in ["fermata-db 0\n", "fermata-db 1\nupdated 1\ntags Artist\nD 0 0 0 0 \n"] {
            bytes = Array(old.utf8)
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            #expect(DatabaseFile.load(from: file, tags: .defaultMetadata) == nil)
        }
    }

    /// Directories are stored depth first, each after its parent and every directory below an earlier sibling (a
    /// listing enters them by number): a file with `b` between `a` and `a/x` is refused, read as damaged.
    @Test func aFileWhoseDirectoriesAreNotDepthFirstIsRefused() {
        func directory(_ path: String, _ parent: Int32, _ children: [Int32]) -> Database.Directory {
            Database.Directory(
                path: path, modificationTime: 1, parent: parent, children: children, songs: 0..<0, playlists: [],
                inode: 0, device: 0)
        }
        let depthFirst = Database(
            directories: [
                directory("", -1, [1, 3]), directory("a", 0, [2]), directory("a/x", 1, []), directory("b", 0, []),
            ],
            songs: SongTable(), updateTime: 1)
        let mixed = Database(
            directories: [
                directory("", -1, [1, 2]), directory("a", 0, [3]), directory("b", 0, []), directory("a/x", 1, []),
            ],
            songs: SongTable(), updateTime: 1)
        let read = DatabaseFile.decode(DatabaseFile.encoded(depthFirst, tags: .all), tags: .all)
        #expect(read?.directories.map(\.path) == ["", "a", "a/x", "b"])
        #expect(DatabaseFile.decode(DatabaseFile.encoded(mixed, tags: .all), tags: .all) == nil)
    }

    /// A tree using every field the file stores.
    private static func fullTree() -> TreeDirectory {
        var root = TreeDirectory(name: "")
        root.modificationTime = 1_700_000_000
        root.inode = 2
        root.device = 0xFD01
        root.playlists = [
            TreePlaylist(name: "z.m3u", modificationTime: 5), TreePlaylist(name: "a.pls", modificationTime: -3),
        ]
        var info = SongInfo(
            tags: [
                TagItem(.artist, "B"), TagItem(.title, "T\u{E9}"), TagItem(.artist, "A"), TagItem(.artist, "B"),
                TagItem(.album, "Al"), TagItem(.track, "2"), TagItem(.artist, "B"),
            ],
            durationMilliseconds: 0, audioFormat: AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2),
            replayGain: ReplayGainInfo(trackGain: -6.5, trackPeak: nil, albumGain: nil, albumPeak: 0.98),
            hasPicture: true)
        root.songs["caf\u{10FEE9}.flac"] = TreeSong(
            name: "caf\u{10FEE9}.flac", modificationTime: -1, size: 1 << 40, info: info)
        info = SongInfo(
            tags: [TagItem(.album, "Al"), TagItem(.title, "\u{212A}"), TagItem(.title, "K")],
            durationMilliseconds: 123_456_789,
            audioFormat: AudioFormat(sampleRate: 2_822_400, sampleFormat: .dsd, channels: 6), hasPlaylist: true)
        root.songs["b.mp3"] = TreeSong(name: "b.mp3", modificationTime: 0, size: 0, info: info)
        root.songs["plain.wav"] = TreeSong(name: "plain.wav", modificationTime: 9, size: 44, info: SongInfo())
        var sub = TreeDirectory(name: "Sub dir")
        sub.modificationTime = 7
        sub.inode = UInt64.max
        sub.device = 1
        var empty = TreeDirectory(name: "empty")
        empty.inode = 77
        sub.children["empty"] = empty
        sub.songs["x.ogg"] = TreeSong(
            name: "x.ogg", modificationTime: 3, size: 4,
            info: SongInfo(
                tags: [TagItem(.title, "x"), TagItem(.genre, "Jazz")],
                audioFormat: AudioFormat(sampleRate: 48000, sampleFormat: .float, channels: 1),
                replayGain: ReplayGainInfo(trackGain: 0, trackPeak: 1, albumGain: -0.0, albumPeak: 2)))
        root.children["Sub dir"] = sub
        root.children["a"] = TreeDirectory(name: "a")
        return root
    }

    @Test func roundTripKeepsEveryFieldAndTheOrder() throws {
        let music = try MusicDirectory()
        let tree = Self.fullTree()
        let database = Database(tree: tree, updateTime: -5)
        let file = music.path + "/db"
        try DatabaseFile.save(database, tags: .all, to: file)
        let loaded = try #require(DatabaseFile.load(from: file, tags: .all))
        #expect(loaded.makeTree() == tree)
        #expect(loaded.updateTime == -5)
        #expect(loaded.songs.map(\.uri) == database.songs.map(\.uri))
        #expect(loaded.songs.map(\.info) == database.songs.map(\.info))
        #expect(loaded.songs.map(\.directory) == database.songs.map(\.directory))
        #expect(loaded.directories.map(\.path) == database.directories.map(\.path))
        #expect(loaded.directories.map(\.children) == database.directories.map(\.children))
        #expect(loaded.directories.map(\.songs) == database.directories.map(\.songs))
        #expect(loaded.directories.map(\.parent) == database.directories.map(\.parent))
        #expect(loaded.songs(with: .artist, value: "B") == database.songs(with: .artist, value: "B"))
        #expect(loaded.statistics == database.statistics)
        #expect(loaded.song(at: "Sub dir/x.ogg") == database.song(at: "Sub dir/x.ogg"))
        #expect(loaded.directory(at: "Sub dir/empty") != nil)
        // Saving what was loaded gives the same bytes.
        let again = music.path + "/db2"
        try DatabaseFile.save(loaded, tags: .all, to: again)
        #expect(try readFile(atPath: again) == readFile(atPath: file))
        // An empty database (the first scan of an empty music directory) too.
        try DatabaseFile.save(Database(), tags: .all, to: again)
        let empty = try #require(DatabaseFile.load(from: again, tags: .all))
        #expect(
            empty.songs.isEmpty && empty.directories.map(\.path) == [""] && empty.makeTree() == TreeDirectory(name: ""))
        // Tags outside the set are not stored.
        try DatabaseFile.save(database, tags: TagMask([.title]), to: file)
        let titles = try #require(DatabaseFile.load(from: file, tags: TagMask([.title])))
        #expect(titles.songs.map { $0.info.tags } == database.songs.map { $0.info.tags.filter { $0.type == .title } })
    }

    /// The file `fullTree()` saves to.
    private static func savedFullTree() throws -> [UInt8] {
        let music = try MusicDirectory()
        let file = music.path + "/db"
        try DatabaseFile.save(Database(tree: Self.fullTree(), updateTime: 1), tags: .all, to: file)
        return try readFile(atPath: file)
    }

    @Test func everyTruncationAndBitFlipLoadsAsNil() throws {
        let bytes = try Self.savedFullTree()
        #expect(DatabaseFile.decode(bytes, tags: .all) != nil)
        for cut in 0..<bytes.count {
            #expect(DatabaseFile.decode(Array(bytes[0..<cut]), tags: .all) == nil)
        }
        for index in bytes.indices {
            for bit in 0..<8 {
                var damaged = bytes
                damaged[index] ^= 1 << bit
                #expect(DatabaseFile.decode(damaged, tags: .all) == nil)
            }
        }
    }

    @Test func damageBehindAValidChecksumNeverCrashes() throws {
        let bytes = try Self.savedFullTree()
        let header = Array("fermata-db \(DatabaseFile.version)\n".utf8)
        let body = Array(bytes[(header.count + 8)...])
        func sealed(_ body: [UInt8]) -> [UInt8] {
            let sum = DatabaseFile.checksum(body)
            return header + (0..<8).map { UInt8(truncatingIfNeeded: sum >> (8 * $0)) } + body
        }
        #expect(DatabaseFile.decode(sealed(body), tags: .all) != nil)
        for cut in 0..<body.count { _ = DatabaseFile.decode(sealed(Array(body[0..<cut])), tags: .all) }
        // A seeded linear congruential generator, so a failure reproduces.
        var state: UInt64 = 7
        func random(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        for _ in 0..<5000 {
            var damaged = body
            for _ in 0...random(3) {
                let index = random(damaged.count)
                switch random(3) {
                case 0: damaged[index] ^= UInt8(1 << random(8))
                case 1: damaged[index] = UInt8(random(256))
                default: damaged[index] = 0xFF
                }
            }
            // Anything may come back, or nothing; the point is not crashing.
            if let loaded = DatabaseFile.decode(sealed(damaged), tags: .all) { _ = loaded.makeTree() }
        }
    }

    @Test func inconsistenciesBehindAValidChecksumLoadAsNil() throws {
        var root = TreeDirectory(name: "")
        let info = SongInfo(tags: [TagItem(.artist, "AAAA"), TagItem(.title, "BBBB")])
        root.songs["ab.mp3"] = TreeSong(name: "ab.mp3", modificationTime: 1, size: 2, info: info)
        let music = try MusicDirectory()
        let file = music.path + "/db"
        try DatabaseFile.save(Database(tree: root, updateTime: 1), tags: .all, to: file)
        let bytes = try readFile(atPath: file)
        let header = Array("fermata-db \(DatabaseFile.version)\n".utf8)
        let body = Array(bytes[(header.count + 8)...])
        func sealed(_ body: [UInt8]) -> [UInt8] {
            let sum = DatabaseFile.checksum(body)
            return header + (0..<8).map { UInt8(truncatingIfNeeded: sum >> (8 * $0)) } + body
        }
        /// `body` with the only occurrence of `old` replaced by `new` (as long).
        func replacing(_ old: String, with new: [UInt8]) throws -> [UInt8] {
            let old = Array(old.utf8)
            let starts = body.indices.filter { body[$0...].starts(with: old) }
            try #require(starts.count == 1 && new.count == old.count)
            var changed = body
            changed.replaceSubrange(starts[0]..<starts[0] + old.count, with: new)
            return changed
        }
        #expect(DatabaseFile.decode(sealed(body), tags: .all) != nil)
        // A value twice, a value that is not UTF-8, names no scan stores.
        for damaged in [
            try replacing("BBBB", with: Array("AAAA".utf8)), try replacing("BBBB", with: [0x42, 0xFF, 0x42, 0x42]),
            try replacing("ab.mp3", with: Array("a/.mp3".utf8)), try replacing("ab.mp3", with: Array("a\n.mp3".utf8)),
        ] {
            #expect(DatabaseFile.decode(sealed(damaged), tags: .all) == nil)
        }
    }
}
