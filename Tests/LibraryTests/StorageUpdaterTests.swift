// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Model
import Synchronization
import Testing

@testable import Library

/// A storage held in memory: paths to file contents (a directory is a path ending in `/`) and times.
final class MemoryStorage: Storage {
    let uri = "smb://127.0.0.1/share"
    let files: Mutex<[String: (text: String, time: Int64)]>
    let reads = Mutex<[String]>([])
    /// How many times ``close()`` was called.
    let closes = Mutex(0)

    init(_ files: [String: (text: String, time: Int64)]) { self.files = Mutex(files) }

    func close() { self.closes.withLock { $0 += 1 } }

    func status(_ path: String) throws -> StorageFileStatus {
        try self.files.withLock { files in
            if path.isEmpty { return StorageFileStatus(kind: .directory, size: 0, modificationTime: 1) }
            if let directory = files[path + "/"] {
                return StorageFileStatus(kind: .directory, size: 0, modificationTime: directory.time)
            }
            guard let file = files[path] else { throw CocoaError(.fileNoSuchFile) }
            return StorageFileStatus(kind: .regular, size: Int64(file.text.utf8.count), modificationTime: file.time)
        }
    }

    func names(in path: String) throws -> [String] {
        let prefix = path.isEmpty ? "" : path + "/"
        return self.files.withLock { files in
            Set(
                files.keys.filter { $0.hasPrefix(prefix) && $0 != prefix }.compactMap {
                    $0.dropFirst(prefix.count).split(separator: "/").first.map(String.init)
                }
            ).sorted()
        }
    }

    /// `reader` gets the file's text as its path (`TextReader` reads that).
    func readSongInfo(_ path: String, reader: any SongInfoReader) throws -> SongInfo {
        self.reads.withLock { $0.append(path) }
        return try reader.readInfo(path: self.files.withLock { $0[path]?.text } ?? "")
    }

    func contents(of path: String) throws -> [UInt8] {
        self.reads.withLock { $0.append(path) }
        guard let text = self.files.withLock({ $0[path]?.text }) else { throw CocoaError(.fileNoSuchFile) }
        return Array(text.utf8)
    }

    func playableURI(_ path: String) -> String { self.uri + "/" + path }
}

/// "Reads" a song from its text: the title is the text; `.bad` files cannot be read.
struct TextReader: SongInfoReader {
    func supports(suffix: String) -> Bool { suffix == "mp3" || suffix == "bad" }

    func readInfo(path: String) throws -> SongInfo {
        guard path != "bad" else { throw CocoaError(.fileReadCorruptFile) }
        return SongInfo(tags: [TagItem(.title, path)], durationMilliseconds: 1000)
    }

    /// No streams: `MemoryStorage` hands the text to `readInfo(path:)`.
    func readInfo(uri: String) throws -> SongInfo { throw CocoaError(.fileReadUnsupportedScheme) }
}

/// A reader whose update sessions are seen: ``startReading()`` gives a reader that prefixes every title with
/// "job:", and counts the sessions started and finished.
struct SessionReader: SongInfoReader {
    final class Counts: Sendable {
        let started = Mutex(0)
        let rereading = Mutex(0)
        let finished = Mutex(0)
    }
    let counts: Counts
    var inJob = false

    func supports(suffix: String) -> Bool { suffix == "mp3" }

    func readInfo(path: String) throws -> SongInfo {
        SongInfo(tags: [TagItem(.title, (self.inJob ? "job:" : "") + path)], durationMilliseconds: 1000)
    }

    func readInfo(uri: String) throws -> SongInfo { throw CocoaError(.fileReadUnsupportedScheme) }

    func startReading() -> any SongInfoReader {
        self.counts.started.withLock { $0 += 1 }
        return SessionReader(counts: self.counts, inJob: true)
    }

    func startRereading() -> any SongInfoReader {
        self.counts.rereading.withLock { $0 += 1 }
        return self.startReading()
    }

    func readingFinished() {
        if self.inJob { self.counts.finished.withLock { $0 += 1 } }
    }
}

struct StorageUpdaterTests {
    /// An update reads the storage's songs with the reader `startReading()` gave (a UDisks2 storage's local files
    /// then go to the update's scan workers), and finishes that reader once.
    @Test func anUpdateReadsWithAReaderOfItsOwn() {
        let storage = MemoryStorage(["a.mp3": ("A", 5), "sub/": ("", 7), "sub/b.mp3": ("B", 6)])
        let counts = SessionReader.Counts()
        let updater = StorageUpdater(storage: storage, reader: SessionReader(counts: counts), logger: .discarding)
        let (tree, _) = updater.update(TreeDirectory(name: ""), uri: "", discard: false)
        let database = Database(tree: tree, updateTime: 0)
        #expect(self.titles(database) == ["a.mp3=job:A", "sub/b.mp3=job:B"])
        #expect(counts.started.withLock { $0 } == 1)
        #expect(counts.finished.withLock { $0 } == 1)
        // A rescan reads with a reader that forgot what it kept of earlier reads.
        #expect(counts.rereading.withLock { $0 } == 0)
        _ = updater.update(tree, uri: "", discard: true)
        #expect(counts.rereading.withLock { $0 } == 1)
        #expect(counts.started.withLock { $0 } == 2)
    }

    private func titles(_ database: Database) -> [String] {
        (0..<Int32(database.songs.count)).map {
            "\(database.songs.uri($0))=\(database.songs.firstValue($0, .title) ?? "")"
        }
    }

    @Test func aStorageIsWalkedSongsPlaylistsAndDirectories() {
        let storage = MemoryStorage([
            "a.mp3": ("A", 5), "list.m3u": ("", 5), "notes.txt": ("", 5), "sub/": ("", 7), "sub/b.mp3": ("B", 6),
            "sub/c.bad": ("bad", 6), "empty/": ("", 3),
        ])
        let updater = StorageUpdater(storage: storage, reader: TextReader(), logger: .discarding)
        let (tree, modified) = updater.update(TreeDirectory(name: ""), uri: "", discard: false)
        #expect(modified)
        let database = Database(tree: tree, updateTime: 0)
        #expect(self.titles(database) == ["a.mp3=A", "sub/b.mp3=B"])
        #expect(database.directories.map(\.path) == ["", "sub"])
        #expect(database.directories[0].playlists.map(\.name) == ["list.m3u"])
        #expect(database.directories[1].modificationTime == 7)
    }

    @Test func anUpdateKeepsWhatIsUnchangedAndDropsWhatIsGone() {
        let storage = MemoryStorage(["a.mp3": ("A", 5), "sub/": ("", 7), "sub/b.mp3": ("B", 6)])
        let updater = StorageUpdater(storage: storage, reader: TextReader(), logger: .discarding)
        let first = updater.update(TreeDirectory(name: ""), uri: "", discard: false).tree
        storage.reads.withLock { $0 = [] }
        let same = updater.update(first, uri: "", discard: false)
        #expect(!same.modified)
        #expect(storage.reads.withLock { $0 }.isEmpty)
        storage.files.withLock { files in
            files["a.mp3"] = ("A2", 9)
            files["sub/b.mp3"] = nil
        }
        let changed = updater.update(first, uri: "", discard: false)
        #expect(changed.modified)
        #expect(self.titles(Database(tree: changed.tree, updateTime: 0)) == ["a.mp3=A2"])
        #expect(storage.reads.withLock { $0 } == ["a.mp3"])
    }

    @Test func anUpdateOfAPathReadsOnlyThatPath() {
        let storage = MemoryStorage(["a.mp3": ("A", 5), "sub/": ("", 7), "sub/b.mp3": ("B", 6)])
        let updater = StorageUpdater(storage: storage, reader: TextReader(), logger: .discarding)
        let first = updater.update(TreeDirectory(name: ""), uri: "", discard: false).tree
        storage.files.withLock { files in
            files["new.mp3"] = ("N", 8)
            files["sub/c.mp3"] = ("C", 8)
        }
        storage.reads.withLock { $0 = [] }
        let (tree, modified) = updater.update(first, uri: "sub", discard: false)
        #expect(modified)
        #expect(storage.reads.withLock { $0 } == ["sub/c.mp3"])
        #expect(self.titles(Database(tree: tree, updateTime: 0)) == ["a.mp3=A", "sub/b.mp3=B", "sub/c.mp3=C"])
        // A rescan reads again what it finds.
        let rescan = updater.update(tree, uri: "sub/b.mp3", discard: true)
        #expect(rescan.modified)
        #expect(storage.reads.withLock { $0 } == ["sub/c.mp3", "sub/b.mp3"])
    }

    @Test func mpdignoreFilesOfTheStorageLeaveOutWhatTheyMatchThereAndBelow() {
        let storage = MemoryStorage([
            "a.mp3": ("A", 5), "skip.mp3": ("S", 5), "sub/": ("", 7), "sub/b.mp3": ("B", 6),
            "sub/skip.mp3": ("S2", 6), "sub/deep/": ("", 7), "sub/deep/c.mp3": ("C", 6), "sub/deep/d.mp3": ("D", 6),
        ])
        let updater = StorageUpdater(storage: storage, reader: TextReader(), logger: .discarding)
        let first = updater.update(TreeDirectory(name: ""), uri: "", discard: false).tree
        #expect(Database(tree: first, updateTime: 0).songs.count == 6)
        // Added later: what they exclude goes at the next update.
        storage.files.withLock { files in
            files[".mpdignore"] = ("# comment\nskip.*\n", 8)
            files["sub/.mpdignore"] = ("d.mp3\n", 8)
        }
        let (tree, modified) = updater.update(first, uri: "", discard: false)
        #expect(modified)
        #expect(self.titles(Database(tree: tree, updateTime: 0)) == ["a.mp3=A", "sub/b.mp3=B", "sub/deep/c.mp3=C"])
        // As in mpd, an update of a path takes it whatever the patterns say; its directories inherit only the
        // patterns of the parent's `.mpdignore`.
        let path = updater.update(tree, uri: "sub/deep/d.mp3", discard: false)
        #expect(path.modified)
        #expect(self.titles(Database(tree: path.tree, updateTime: 0)).contains("sub/deep/d.mp3=D"))
        // The parent's patterns still leave out what they match below.
        let deep = updater.update(tree, uri: "sub/deep", discard: false)
        #expect(!deep.modified)
        let inSub = updater.update(path.tree, uri: "sub", discard: false)
        #expect(
            self.titles(Database(tree: inSub.tree, updateTime: 0)) == ["a.mp3=A", "sub/b.mp3=B", "sub/deep/c.mp3=C"])
        // Without them, everything is there again.
        storage.files.withLock { files in
            files[".mpdignore"] = nil
            files["sub/.mpdignore"] = nil
        }
        #expect(Database(tree: updater.update(tree, uri: "", discard: false).tree, updateTime: 0).songs.count == 6)
    }

    @Test func mountDatabaseFilesAreNamedAsMpdNamesThem() {
        #expect(
            LibraryService.mountDatabasePath(for: "smb://127.0.0.1:4455/share", in: "/var/cache/mpd")
                == "/var/cache/mpd/smb___127_0_0_1_4455_share")
        #expect(LibraryService.mountDatabasePath(for: "nfs://h/a-b_c%20", in: "/c") == "/c/nfs___h_a-b_c%20")
    }
}

/// A storage whose listing tells each entry's status (as a WebDAV listing does), which `status` may contradict.
final class ListingStorage: Storage {
    let uri = "http://127.0.0.1/dav"
    let listed: [(name: String, status: StorageFileStatus?)]
    let fresh: [String: StorageFileStatus]
    let statusCalls = Mutex<[String]>([])

    init(listed: [(name: String, status: StorageFileStatus?)], fresh: [String: StorageFileStatus]) {
        self.listed = listed
        self.fresh = fresh
    }

    func status(_ path: String) throws -> StorageFileStatus {
        self.statusCalls.withLock { $0.append(path) }
        if path.isEmpty { return StorageFileStatus(kind: .directory, size: 0, modificationTime: 1) }
        guard let status = self.fresh[path] else { throw CocoaError(.fileNoSuchFile) }
        return status
    }

    func names(in path: String) throws -> [String] { self.listed.map(\.name) }

    func entries(in path: String) throws -> [(name: String, status: StorageFileStatus?)] {
        path.isEmpty ? self.listed : []
    }

    /// `reader` gets the file's name without its suffix, upper case, as its text.
    func readSongInfo(_ path: String, reader: any SongInfoReader) throws -> SongInfo {
        try reader.readInfo(path: String(path.prefix { $0 != "." }).uppercased())
    }

    func contents(of path: String) throws -> [UInt8] { throw CocoaError(.fileNoSuchFile) }

    func playableURI(_ path: String) -> String { self.uri + "/" + path }
}

struct StorageListingUpdaterTests {
    @Test func aListingsStatusesAreUsedAndEachSongIsAskedAgainBeforeItIsRead() {
        let song = StorageFileStatus(kind: .regular, size: 10, modificationTime: 5)
        let storage = ListingStorage(
            listed: [
                ("a.mp3", song), ("gone.mp3", song), ("dir.mp3", song),
                ("sub", .init(kind: .directory, size: 0, modificationTime: 3)),
                ("unlisted.mp3", nil),
            ],
            fresh: [
                "a.mp3": StorageFileStatus(kind: .regular, size: 11, modificationTime: -1),
                "dir.mp3": StorageFileStatus(kind: .directory, size: 0, modificationTime: 5), "unlisted.mp3": song,
            ])
        let updater = StorageUpdater(storage: storage, reader: TextReader(), logger: .discarding)
        let (tree, modified) = updater.update(TreeDirectory(name: ""), uri: "", discard: false)
        #expect(modified)
        // As mpd's Song::UpdateFile: the song keeps what the second ask says; one it finds gone or not a regular
        // file is left out; the listing's status decides the rest (no ask for "sub"), one without asks once more.
        #expect(tree.songs.keys.map(\.text).sorted() == ["a.mp3", "unlisted.mp3"])
        #expect(tree.songs[ByteString("a.mp3")]?.modificationTime == -1)
        #expect(tree.songs[ByteString("a.mp3")]?.size == 11)
        #expect(
            storage.statusCalls.withLock { $0 } == ["", "a.mp3", "gone.mp3", "dir.mp3", "unlisted.mp3", "unlisted.mp3"])
    }
}
