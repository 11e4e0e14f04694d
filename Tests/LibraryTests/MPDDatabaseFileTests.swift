// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Model
import Posix
import TestSupport
import Testing
import Zlib

@testable import Library

@Suite struct MPDDatabaseFileTests {
    /// The header of mpd 0.23.12's database with its default `metadata_to_use`.
    static let header = """
        info_begin
        format: 2
        mpd_version: 0.23.12
        fs_charset: UTF-8
        \(TagType.allCases.filter { TagMask.defaultMetadata.contains($0) }.map { "tag: \($0.name)\n" }.joined())\
        info_end

        """

    /// The record of the FLAC song that is in two directories of `written`, after its `song_begin` line.
    static let blue = """
        Time: 1.233000
        Title: Blue
        Artist: Miles
        AlbumArtist: Miles D
        Album: Kind
        Track: 3
        Date: 1959
        Genre: Jazz
        Format: 44100:16:2
        mtime: 1796157741
        song_end
        """

    /// What Debian's mpd 0.23.12 wrote (gzip-compressed) after scanning a library of MP3, FLAC and Ogg Vorbis
    /// files with a playlist, in `tools`-made fixtures (the header lines are the same as `header`).
    static let written = """
        directory: Jazz
        mtime: 1796157741
        begin: Jazz
        song_begin: blue.flac
        \(Self.blue)
        playlist_begin: list.m3u
        mtime: 1796157741
        playlist_end
        end: Jazz
        directory: Rock
        mtime: 1796157733
        begin: Rock
        directory: Album One
        mtime: 1796157733
        begin: Rock/Album One
        song_begin: 01 one.mp3
        Time: 1.280000
        Artist: Artist A
        Title: Song One
        Album: Album One
        Track: 1
        Date: 2001
        Genre: Rock
        Format: 44100:24:2
        mtime: 1796157733
        song_end
        song_begin: 02 two.mp3
        Time: 1.280000
        Artist: Artist A
        Title: Song Two
        Album: Album One
        Track: 2
        Format: 44100:24:2
        mtime: 1796157734
        song_end
        end: Rock/Album One
        end: Rock
        directory: Ünïcode
        mtime: 1796157741
        begin: Ünïcode
        song_begin: ça.ogg
        Time: 1.233000
        Title: Ça va
        Artist: Ünï Artist
        Album: Ålbum
        Track: 1
        Format: 44100:f:2
        mtime: 1796157741
        song_end
        end: Ünïcode
        song_begin: root.flac
        \(Self.blue)

        """

    private func decode(_ body: String, header: String = Self.header, tags: TagMask = .defaultMetadata) throws
        -> Database
    {
        try MPDDatabaseFile.decode(Array((header + body).utf8), tags: tags, updateTime: 5)
    }

    @Test func readsWhatMPDWrote() throws {
        let compressed = try Gzip.deflate(Array((Self.header + Self.written).utf8))
        let database = try MPDDatabaseFile.decode(compressed, tags: .defaultMetadata, updateTime: 1_796_157_742)
        #expect(database.updateTime == 1_796_157_742)
        #expect(database.directories.map(\.path) == ["", "Jazz", "Rock", "Rock/Album One", "Ünïcode"])
        #expect(
            database.directories.map(\.modificationTime) == [
                -1, 1_796_157_741, 1_796_157_733, 1_796_157_733, 1_796_157_741,
            ])
        // Each directory's songs before its children's, in the file's order.
        #expect(
            database.songs.map(\.uri) == [
                "root.flac", "Jazz/blue.flac", "Rock/Album One/01 one.mp3", "Rock/Album One/02 two.mp3",
                "Ünïcode/ça.ogg",
            ])
        let blue = try #require(database.song(at: "Jazz/blue.flac"))
        let info = database.songs.info(blue)
        #expect(info.durationMilliseconds == 1233)
        #expect(info.audioFormat == AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        #expect(
            info.tags.map { "\($0.type.name)=\($0.value)" } == [
                "Title=Blue", "Artist=Miles", "AlbumArtist=Miles D", "Album=Kind", "Track=3", "Date=1959", "Genre=Jazz",
            ])
        #expect(database.songs.modificationTime(blue) == 1_796_157_741)
        #expect(database.songs.size(blue) == -1, "mpd's format has no size")
        #expect(database.directories[1].playlists == [TreePlaylist(name: "list.m3u", modificationTime: 1_796_157_741)])
        #expect(database.songs.audioFormat(try #require(database.song(at: "Ünïcode/ça.ogg")))?.sampleFormat == .float)
        #expect(database.statistics.songs == 5)
        #expect(database.statistics.artists == 3)
        #expect(database.songs(with: .album, value: "Album One").count == 2)
        // Written back as mpd wrote it (the version line aside).
        let text = try MPDDatabaseFile.encoded(database, tags: .defaultMetadata, compress: false)
        let expected = (Self.header + Self.written).replacingOccurrences(
            of: "mpd_version: 0.23.12", with: "mpd_version: \(MPDDatabaseFile.writerVersion)")
        #expect(String(decoding: text, as: UTF8.self) == expected)
    }

    @Test func readsEveryLineTypeAsMPDDoes() throws {
        let database = try self.decode(
            """
            directory: c.sid\r
            type: container
            mtime: 0
            begin: c.sid
            song_begin: tune_001.sid
            Time: 1.001000
            Title:   \tleading blanks go
            Comment: not enabled
            Artist:
            Album: a\u{1}b
            Playlist: yes
            Format: 44100:99:2
            mtime: 12
            song_end
            end: c.sid
            directory: x.cue
            type: playlist
            mtime: 3
            begin: x.cue
            song_begin: track0001
            Target: ../x.flac
            Range: 0-1000
            Title: a cue track
            song_end
            end: x.cue
            song_begin: b.dsf
            Time: -1
            Format: dsd64:2
            mtime: 99999999999
            song_end
            playlist_begin: p.m3u
            mtime: 1
            playlist_end
            playlist_begin: p.m3u
            mtime: 2
            playlist_end
            end: /
            Everything after the root's end is not read.
            """)
        #expect(database.directories.map(\.path) == ["", "c.sid", "x.cue"])
        #expect(database.directories[1].device == TreeDirectory.containerDevice)
        // A cue sheet's directory: its track names a file the database does not hold (mpd purges such tracks
        // only when it updates).
        #expect(database.directories[2].device == TreeDirectory.playlistDevice)
        let cueTrack = try #require(database.song(at: "x.cue/track0001"))
        #expect(
            database.songs.virtualSong(cueTrack)
                == VirtualSong(
                    track: PlaylistTrack(target: "../x.flac", startMilliseconds: 0, endMilliseconds: 1000),
                    targetURI: nil, tags: [TagItem(.title, "a cue track")]))
        #expect(database.songs.info(cueTrack).tags == [TagItem(.title, "a cue track")])
        #expect(database.directories[1].modificationTime == -1, "mtime 0 is no time, as mpd reads it: not listed")
        #expect(database.directories[0].modificationTime == -1, "mpd keeps no time for the root")
        #expect(database.directories[0].playlists == [TreePlaylist(name: "p.m3u", modificationTime: 2)])
        let tune = try #require(database.song(at: "c.sid/tune_001.sid"))
        let info = database.songs.info(tune)
        #expect(info.durationMilliseconds == 1000, "1.001 × 1000 is 1000.99999…, truncated as mpd converts it")
        #expect(info.tags == [TagItem(.title, "leading blanks go"), TagItem(.album, "a b")])
        #expect(info.hasPlaylist)
        #expect(info.audioFormat == nil)
        #expect(database.songs.modificationTime(tune) == 12)
        let dsf = try #require(database.song(at: "b.dsf"))
        #expect(database.songs.durationMilliseconds(dsf) == nil)
        #expect(database.songs.audioFormat(dsf) == AudioFormat(sampleRate: 352_800, sampleFormat: .dsd, channels: 2))
        #expect(database.songs.modificationTime(dsf) == Int64(Int32(truncatingIfNeeded: 99_999_999_999)))
        #expect(database.songs.count == 3)
        // A file that ends without "\n" and an old format number are read.
        _ = try self.decode(
            "song_begin: a.mp3\nsong_end", header: Self.header.replacingOccurrences(of: "format: 2", with: "format: 1"))
    }

    @Test func refusesWhatMPDRefuses() throws {
        let refused: [(header: String, body: String, message: String)] = [
            ("info_begn\n", "", "Database corrupted"),
            (
                Self.header.replacingOccurrences(of: "format: 2", with: "format: 3"), "",
                "Database format mismatch, discarding database file"
            ),
            (
                Self.header.replacingOccurrences(of: "fs_charset: UTF-8", with: "fs_charset: ISO-8859-1"), "",
                "Existing database has charset \"ISO-8859-1\" instead of \"UTF-8\"; discarding database file"
            ),
            (
                Self.header.replacingOccurrences(of: "tag: Genre\n", with: ""), "",
                "Tag list mismatch, discarding database file"
            ),
            (
                Self.header.replacingOccurrences(of: "tag: Genre\n", with: "tag: Genre\ntag: Colour\n"), "",
                "Unrecognized tag 'Colour', discarding database file"
            ),
            (
                Self.header.replacingOccurrences(of: "tag: Genre\n", with: "tag: genre\n"), "",
                "Unrecognized tag 'genre', discarding database file"
            ),
            (
                Self.header.replacingOccurrences(of: "info_end", with: "mpd_version: 2\ninfo_end"), "",
                "Duplicate version line"
            ),
            (Self.header, "hello\n", "Malformed line: hello"),
            (Self.header, "song_begin: a\nsong_end\nsong_begin: a\nsong_end\n", "Duplicate song: a"),
            (
                Self.header, "directory: d\nbegin: d\nend: d\ndirectory: d\nbegin: d\nend: d\n",
                "Duplicate subdirectory: d"
            ),
            (Self.header, "song_begin: a\nLength: 3\nsong_end\n", "unknown line in db: Length: 3"),
            (Self.header, "song_begin: a\n: 3\nsong_end\n", "unknown line in db: : 3"),
            (Self.header, "playlist_begin: p\nname: 3\nplaylist_end\n", "unknown line in db: name: 3"),
            (Self.header, "directory: d\nsize: 3\nbegin: d\nend: d\n", "Malformed line: size: 3"),
            (Self.header, "directory: d\nbegin: d\nsong_begin: a\n", "Unexpected end of file"),
            (Self.header, "directory: d/e\nbegin: d/e\nend: d/e\n", "Invalid name: d/e"),
            (Self.header, "song_begin: ..\nsong_end\n", "Invalid name: .."),
        ]
        for (header, body, message) in refused {
            #expect(throws: MPDDatabaseFile.Failure(message)) { try self.decode(body, header: header) }
        }
        let nested = { (depth: Int) in
            String(repeating: "directory: d\nbegin: d\n", count: depth) + String(repeating: "end: d\n", count: depth)
        }
        _ = try self.decode(nested(MPDDatabaseFile.maximumDepth))
        #expect(throws: MPDDatabaseFile.Failure("Directories nested too deep")) {
            try self.decode(nested(MPDDatabaseFile.maximumDepth + 1))
        }
        // Tags mpd was not configured for may be listed.
        _ = try self.decode("", tags: TagMask([.artist]))
        #expect(throws: MPDDatabaseFile.Failure.self) { try self.decode("", tags: .all) }
    }

    @Test func truncatedAndDamagedFilesAreRefusedOrReadNeverACrash() throws {
        let text = Array((Self.header + Self.written).utf8)
        for cut in 0..<text.count {
            _ = try? MPDDatabaseFile.decode(Array(text[0..<cut]), tags: .defaultMetadata, updateTime: 0)
        }
        let compressed = try Gzip.deflate(text)
        for cut in 0..<(compressed.count - 1) {
            #expect(throws: MPDDatabaseFile.Failure.self) {
                try MPDDatabaseFile.decode(Array(compressed[0..<cut]), tags: .defaultMetadata, updateTime: 0)
            }
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            var damaged = text
            for _ in 0..<4 {
                damaged[Int.random(in: 0..<damaged.count, using: &generator)] = UInt8.random(
                    in: 0...255, using: &generator)
            }
            if let database = try? MPDDatabaseFile.decode(damaged, tags: .defaultMetadata, updateTime: 0) {
                _ = database.makeTree()
                _ = try MPDDatabaseFile.encoded(database, tags: .defaultMetadata)
            }
        }
    }

    @Test func roundTripsWhatTheFormatHolds() throws {
        var root = TreeDirectory(name: "")
        var info = SongInfo(
            tags: [TagItem(.artist, "B"), TagItem(.title, "T\u{E9}"), TagItem(.artist, "A"), TagItem(.track, "2")],
            durationMilliseconds: 125_500, audioFormat: AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2),
            replayGain: ReplayGainInfo(trackGain: -6.5), hasPicture: true, hasPlaylist: true)
        // A name that is not UTF-8 (one raw byte) is written as its bytes.
        root.songs["caf\u{10FEE9}.flac"] = TreeSong(
            name: "caf\u{10FEE9}.flac", modificationTime: 1_700_000_000, size: 10, info: info)
        info = SongInfo(tags: [TagItem(.title, "\u{212A}"), TagItem(.title, "K")], durationMilliseconds: 1)
        var sub = TreeDirectory(name: "Sub dir")
        sub.modificationTime = 7
        sub.songs["x.ogg"] = TreeSong(name: "x.ogg", modificationTime: 3, size: 4, info: info)
        sub.playlists = [
            TreePlaylist(name: "z.m3u", modificationTime: 5), TreePlaylist(name: "a.pls", modificationTime: 1),
        ]
        var container = TreeDirectory(name: "g.nsf")
        container.device = TreeDirectory.containerDevice
        container.modificationTime = 8
        container.songs["tune_001.nsf"] = TreeSong(
            name: "tune_001.nsf", modificationTime: 8, size: 100, info: SongInfo())
        sub.children["g.nsf"] = container
        root.children["Sub dir"] = sub
        let database = Database(tree: root, updateTime: 1)
        for compress in [true, false] {
            let bytes = try MPDDatabaseFile.encoded(database, tags: .all, compress: compress)
            #expect(Gzip.isCompressed(bytes) == compress)
            let loaded = try MPDDatabaseFile.decode(bytes, tags: .all, updateTime: 1)
            #expect(loaded.songs.map(\.uri) == database.songs.map(\.uri))
            #expect(loaded.directories.map(\.path) == database.directories.map(\.path))
            // The root's time is not in the file (as in mpd's): it comes back as none.
            #expect(
                loaded.directories.map(\.modificationTime) == [-1]
                    + database.directories.dropFirst().map(\.modificationTime))
            #expect(loaded.directories.map(\.device) == database.directories.map(\.device))
            #expect(loaded.directories.map(\.playlists) == database.directories.map(\.playlists))
            for song in 0..<Int32(database.songs.count) {
                let (was, now) = (database.songs.info(song), loaded.songs.info(song))
                #expect(now.tags == was.tags)
                #expect(now.audioFormat == was.audioFormat)
                #expect(now.hasPlaylist == was.hasPlaylist)
                #expect(now.durationMilliseconds == was.durationMilliseconds)
                #expect(loaded.songs.modificationTime(song) == database.songs.modificationTime(song))
            }
            #expect(try MPDDatabaseFile.encoded(loaded, tags: .all, compress: compress) == bytes)
        }
    }

    @Test func companionCopyIsUsedOnlyWithItsStamp() throws {
        let music = try MusicDirectory()
        let path = music.path + "/db"
        let database = try MPDDatabaseFile.decode(
            Array((Self.header + Self.written).utf8), tags: .defaultMetadata, updateTime: 1)
        try DatabaseFile.write(try MPDDatabaseFile.encoded(database, tags: .defaultMetadata), to: path)
        let stamp = try #require(DatabaseFile.Stamp(path: path))
        let companion = DatabaseFile.companionPath(for: path)
        try DatabaseFile.write(
            DatabaseFile.stamped(DatabaseFile.encoded(database, tags: .defaultMetadata), stamp), to: companion)
        let loaded = try #require(DatabaseFile.load(from: companion, tags: .defaultMetadata, stamp: stamp))
        #expect(loaded.songs.map(\.uri) == database.songs.map(\.uri))
        var other = stamp
        other.size += 1
        #expect(DatabaseFile.load(from: companion, tags: .defaultMetadata, stamp: other) == nil)
        other = stamp
        other.inode += 1
        #expect(DatabaseFile.load(from: companion, tags: .defaultMetadata, stamp: other) == nil)
        #expect(DatabaseFile.load(from: companion, tags: .all, stamp: stamp) == nil)
    }
}
