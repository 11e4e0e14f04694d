// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Model
import Posix
import Synchronization
import TestSupport
import Testing

@testable import Library

/// Songs are `.song` files (6 s, artist and title from the file); `.cue` files are playlists listed as
/// directories: each line `URI START END TITLE` (milliseconds) is a track.
final class SheetReader: SongInfoReader {
    let sheetReads = Atomic<Int>(0)

    func supports(suffix: String) -> Bool { suffix == "song" }

    /// No streams: these tests read local files only.
    func readInfo(uri: String) throws -> SongInfo { throw CocoaError(.fileReadUnsupportedScheme) }

    func readInfo(path: String) throws -> SongInfo {
        SongInfo(
            tags: [TagItem(.title, "File title"), TagItem(.artist, "File Artist"), TagItem(.genre, "Jazz")],
            durationMilliseconds: 6000, audioFormat: AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
    }

    func listsPlaylistAsDirectory(suffix: String) -> Bool { suffix == "cue" }

    func playlistDirectorySongs(path: String, suffix: String) -> [PlaylistDirectoryEntry]? {
        guard suffix == "cue" else { return nil }
        self.sheetReads.add(1, ordering: .relaxed)
        guard let bytes = try? readFile(atPath: path) else { return [] }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map { line in
            let fields = line.split(separator: " ", maxSplits: 3).map(String.init)
            var tags = [TagItem(.album, "Sheet album"), TagItem(.comment, "dropped")]
            if fields.count > 3 { tags.append(TagItem(.title, fields[3])) }
            return PlaylistDirectoryEntry(
                uri: fields[0], info: SongInfo(tags: tags), startMilliseconds: UInt64(fields[1]) ?? 0,
                endMilliseconds: UInt64(fields[2]) ?? 0)
        }
    }
}

@Suite(.serialized)
struct CueDirectoryTests {
    static let noComment: TagMask = {
        var mask = TagMask.all
        mask.remove(.comment)
        return mask
    }()

    static func write(_ text: String, to path: String, mtime: Int) throws {
        try writeFile(Array(text.utf8), atPath: path)
        var times = [timespec(tv_sec: mtime, tv_nsec: 0), timespec(tv_sec: mtime, tv_nsec: 0)]
        guard utimensat(AT_FDCWD, path, &times, 0) == 0 else { throw Errno.current }
    }

    /// cue/album.song, cue/album.cue (three tracks of album.song, one of a missing file, one of ../other.song),
    /// other.song at the root.
    static func library() throws -> MusicDirectory {
        let music = try MusicDirectory()
        try music.song("cue/album.song", mtime: 1_000)
        try music.song("other.song", mtime: 1_001)
        try Self.write(
            "album.song 0 2000 Opening\nalbum.song 2000 4493 Second\nmissing.song 0 0 Gone\nalbum.song 4493 0\n"
                + "../other.song 500 0 Elsewhere\n", to: music.path + "/cue/album.cue", mtime: 2_000)
        return music
    }

    @Test func aSheetBecomesADirectoryOfRangesOfTheFilesItNames() throws {
        let music = try Self.library()
        let reader = SheetReader()
        let updater = Updater(root: music.path, reader: reader, logger: .discarding, metadata: Self.noComment)
        let result = updater.update(TreeDirectory(name: ""), uri: "", discard: false)
        #expect(result.modified)
        let cue = try #require(result.tree.children[ByteString("cue")])
        let sheet = try #require(cue.children[ByteString("album.cue")])
        #expect(sheet.isPlaylist)
        #expect(sheet.modificationTime == 2_000)
        // The sheet is still a playlist file; the track naming a missing file is purged, the numbers stay.
        #expect(cue.playlists.map(\.name) == ["album.cue"])
        #expect(sheet.songs.keys.map(\.text).sorted() == ["track0001", "track0002", "track0004", "track0005"])
        let second = try #require(sheet.songs[ByteString("track0002")])
        #expect(
            second.playlistTrack
                == PlaylistTrack(target: "../album.song", startMilliseconds: 2000, endMilliseconds: 4493))
        // metadata_to_use applies to the sheet's tags.
        #expect(second.info.tags == [TagItem(.album, "Sheet album"), TagItem(.title, "Second")])
        #expect(sheet.songs[ByteString("track0005")]?.playlistTrack?.target == "../../other.song")

        // The snapshot completes each track from its file and, made by an update, hides that file.
        let database = Database(tree: result.tree, updateTime: 1, markTargets: true)
        let track = try #require(database.song(at: "cue/album.cue/track0002"))
        let info = database.songs.info(track)
        #expect(
            info.tags == [
                TagItem(.album, "Sheet album"), TagItem(.title, "Second"), TagItem(.artist, "File Artist"),
                TagItem(.genre, "Jazz"),
            ])
        #expect(info.durationMilliseconds == 6000)
        #expect(info.audioFormat == AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        #expect(database.songs.modificationTime(track) == 1_000)
        #expect(database.songs.playedMilliseconds(track) == 2493)
        let last = try #require(database.song(at: "cue/album.cue/track0004"))
        #expect(database.songs.playedMilliseconds(last) == 1507)
        #expect(database.songs.virtualSong(last)?.targetURI == "cue/album.song")
        #expect(
            database.songs.virtualSong(try #require(database.song(at: "cue/album.cue/track0005")))?.targetURI
                == "other.song")
        let file = try #require(database.song(at: "cue/album.song"))
        #expect(database.isHidden(file))
        #expect(database.isHidden(try #require(database.song(at: "other.song"))))
        #expect(database.songs.virtualSong(file) == nil)
        // Left out of walks, selections and statistics; found by its URI.
        var walked: [String] = []
        database.walk(from: 0, recursive: true) { walked.append(database.songs.uri($0)) }
        #expect(
            walked == [
                "cue/album.cue/track0001", "cue/album.cue/track0002", "cue/album.cue/track0004",
                "cue/album.cue/track0005",
            ])
        #expect(database.visibleSongs().map { database.songs.uri($0) } == walked)
        #expect(try database.select(SongFilter([])).count == 4)
        #expect(try database.count(SongFilter([])).milliseconds == 2000 + 2493 + 1507 + 5500)
        #expect(database.statistics.songs == 4)
        #expect(database.statistics.playTimeSeconds == 24)
        // A snapshot not made by an update (loaded at start-up) hides nothing, as mpd.
        #expect(!Database(tree: result.tree, updateTime: 1).hasHiddenSongs)
        // A queue entry of a track plays its range of the file.
        let song = database.songs[Int(track)]
        #expect(song.virtual?.track.startMilliseconds == 2000)
        #expect(song.virtual?.targetURI == "cue/album.song")
    }

    @Test func anUnchangedSheetIsNotReadAgain() throws {
        let music = try Self.library()
        let reader = SheetReader()
        let updater = Updater(root: music.path, reader: reader, logger: .discarding, metadata: Self.noComment)
        let first = updater.update(TreeDirectory(name: ""), uri: "", discard: false)
        #expect(reader.sheetReads.load(ordering: .relaxed) == 1)
        let again = updater.update(first.tree, uri: "", discard: false)
        #expect(!again.modified)
        #expect(again.replacedTracks.isEmpty)
        #expect(reader.sheetReads.load(ordering: .relaxed) == 1)
        // From a snapshot's tree too (the tracks keep what the sheet gave, not what the snapshot completed).
        let database = Database(tree: first.tree, updateTime: 1, markTargets: true)
        #expect(database.makeTree() == first.tree)
        #expect(!updater.update(database.makeTree(), uri: "", discard: false).modified)
        // rescan reads it again, replacing its tracks (which leave the queue, as in mpd).
        let rescan = updater.update(first.tree, uri: "", discard: true)
        #expect(rescan.modified)
        let tracks = ["track0001", "track0002", "track0004", "track0005"].map { "cue/album.cue/" + $0 }
        #expect(rescan.replacedTracks.sorted() == tracks)
        #expect(reader.sheetReads.load(ordering: .relaxed) == 2)

        // A changed sheet replaces its directory; one naming nothing has none; a removed one takes it along.
        try Self.write("album.song 1000 0 Late\n", to: music.path + "/cue/album.cue", mtime: 3_000)
        let changed = updater.update(first.tree, uri: "cue", discard: false)
        #expect(changed.modified)
        #expect(changed.replacedTracks.sorted() == tracks)
        let sheet = try #require(changed.tree.children[ByteString("cue")]?.children[ByteString("album.cue")])
        #expect(sheet.songs.keys.map(\.text) == ["track0001"])
        #expect(sheet.modificationTime == 3_000)
        try Self.write("missing.song 0 0\n", to: music.path + "/cue/album.cue", mtime: 4_000)
        let dangling = updater.update(changed.tree, uri: "", discard: false)
        #expect(dangling.tree.children[ByteString("cue")]?.children.isEmpty == true)
        try Self.write("", to: music.path + "/cue/album.cue", mtime: 5_000)
        #expect(
            updater.update(changed.tree, uri: "", discard: false).tree.children[ByteString("cue")]?.children.isEmpty
                == true)
        #expect(unlink(music.path + "/cue/album.cue") == 0)
        let removed = updater.update(changed.tree, uri: "", discard: false)
        #expect(removed.modified)
        #expect(removed.tree.children[ByteString("cue")]?.children.isEmpty == true)
        #expect(removed.tree.children[ByteString("cue")]?.playlists.isEmpty == true)
    }

    @Test func theDatabaseFilesKeepTheTracks() throws {
        let music = try Self.library()
        let updater = Updater(root: music.path, reader: SheetReader(), logger: .discarding, metadata: Self.noComment)
        let tree = updater.update(TreeDirectory(name: ""), uri: "", discard: false).tree
        let database = Database(tree: tree, updateTime: 7, markTargets: true)

        // Fermata's format: as they were, hiding nothing unless decoded for an update.
        let encoded = DatabaseFile.encoded(database, tags: Self.noComment)
        let loaded = try #require(DatabaseFile.decode(encoded, tags: Self.noComment))
        #expect(!loaded.hasHiddenSongs)
        #expect(loaded.makeTree() == tree)
        for song in 0..<Int32(database.songs.count) {
            #expect(loaded.songs.virtualSong(song) == database.songs.virtualSong(song))
            #expect(loaded.songs.info(song) == database.songs.info(song))
        }
        let marked = try #require(DatabaseFile.decode(encoded, tags: Self.noComment, markTargets: true))
        #expect(Set(marked.hiddenURIs) == ["cue/album.song", "other.song"])
        // A mark stays on a song while it exists (mpd 0.23 never clears it).
        let plain = DatabaseFile.encoded(
            Database(tree: try Self.withoutSheets(tree), updateTime: 7), tags: Self.noComment)
        let sticky = try #require(
            DatabaseFile.decode(
                plain, tags: Self.noComment, markTargets: true, alsoHidden: ["other.song", "gone.song"]))
        #expect(sticky.hiddenURIs == ["other.song"])

        // mpd's format: the directory's type, each track's target, range and own tags, as mpd saves them.
        let text = String(
            decoding: try MPDDatabaseFile.encoded(database, tags: Self.noComment, compress: false), as: UTF8.self)
        #expect(
            text.contains(
                "directory: album.cue\ntype: playlist\nmtime: 2000\nbegin: cue/album.cue\nsong_begin: track0001\n"
                    + "Target: ../album.song\nRange: 0-2000\nAlbum: Sheet album\nTitle: Opening\nsong_end\n"))
        #expect(
            text.contains("song_begin: track0004\nTarget: ../album.song\nRange: 4493-\nAlbum: Sheet album\nsong_end\n"))
        let read = try MPDDatabaseFile.decode(Array(text.utf8), tags: Self.noComment, updateTime: 7)
        #expect(!read.hasHiddenSongs)
        let track = try #require(read.song(at: "cue/album.cue/track0002"))
        #expect(
            read.songs.info(track) == database.songs.info(try #require(database.song(at: "cue/album.cue/track0002"))))
        #expect(
            read.songs.virtualSong(track)?.track
                == PlaylistTrack(target: "../album.song", startMilliseconds: 2000, endMilliseconds: 4493))
        #expect(read.songs.virtualSong(track)?.targetURI == "cue/album.song")
    }

    static func withoutSheets(_ tree: TreeDirectory) throws -> TreeDirectory {
        var tree = tree
        tree.children[ByteString("cue")]?.children.removeAll()
        return tree
    }

    @Test func targetsResolveAsMPDLooksThemUp() {
        #expect(PlaylistTrack.resolve("../album.flac", from: "cue/album.cue") == "cue/album.flac")
        #expect(PlaylistTrack.resolve("../../x.flac", from: "cue/album.cue") == "x.flac")
        #expect(PlaylistTrack.resolve("../sub/x.flac", from: "album.cue") == "sub/x.flac")
        #expect(PlaylistTrack.resolve("../../x.flac", from: "album.cue") == nil)
        #expect(PlaylistTrack.resolve("../a/./x.flac", from: "c/album.cue") == nil)
        #expect(PlaylistTrack.resolve("../a//x.flac", from: "c/album.cue") == nil)
        #expect(PlaylistTrack.resolve("/music/x.flac", from: "c/album.cue") == nil)
        #expect(PlaylistTrack.resolve("http://example.com/x.flac", from: "c/album.cue") == nil)
        #expect(Updater.trackName(1) == "track0001")
        #expect(Updater.trackName(12345) == "track12345")
    }
}
