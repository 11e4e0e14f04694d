// SPDX-License-Identifier: GPL-3.0-or-later

import Library
import Model
import RawText
import Testing

@testable import Server

/// A database song's block written from the table's columns (`ByteWriter`, the format-line cache, the `file: DIR/`
/// start kept between songs) is what the `SongInfo` printer writes for the same song.
struct SongPrinterTests {
    /// Songs in three directories (one named by bytes that are not UTF-8), with formats that come back after
    /// more than the cache holds, values with raw bytes, times before the epoch and after the year 9999.
    static let database: Database = {
        let formats: [AudioFormat?] =
            (0..<11).map { AudioFormat(sampleRate: 8000 * ($0 + 1), sampleFormat: .s16, channels: 2) } + [
                nil, AudioFormat(sampleRate: 352_800, sampleFormat: .dsd, channels: 2),
                AudioFormat(sampleRate: 44100, sampleFormat: .float, channels: 1),
            ]
        let raw = RawText.decode([0x41, 0xF4, 0xFF, 0x42])
        var directories = [
            TreeDirectory(name: "a"), TreeDirectory(name: RawText.decode([0x62, 0xE9])), TreeDirectory(name: ""),
        ]
        for number in 0..<90 {
            var tags = [TagItem(.artist, "Artist \(number % 7)"), TagItem(.title, "Title \(number)")]
            if number % 5 == 0 { tags.append(TagItem(.comment, number % 10 == 0 ? raw : "plain")) }
            if number % 3 == 0 { tags.append(TagItem(.genre, "Rock")) }
            let times: [Int64] = [1_700_000_000, -5, 0, 253_402_300_800, 951_782_400]
            let info = SongInfo(
                tags: tags, durationMilliseconds: number % 4 == 0 ? nil : UInt64(number * 1_234),
                audioFormat: formats[number % formats.count])
            let name = number % 9 == 0 ? RawText.decode([0x73, 0xFE] + Array("\(number).mp3".utf8)) : "s\(number).mp3"
            let song = TreeSong(name: name, modificationTime: times[number % times.count], size: 0, info: info)
            directories[number % 3].songs[ByteString(song.name)] = song
        }
        var root = directories[2]
        for directory in directories[..<2] { root.children[ByteString(directory.name)] = directory }
        return Database(tree: root, updateTime: 0)
    }()

    @Test(arguments: [TagMask.all, TagMask([.title, .comment])])
    func tableBlocksAreTheInfoBlocks(visible: TagMask) {
        let songs = Self.database.songs
        var fromTable = ReplyBuffer()
        var fromInfo = ReplyBuffer()
        for song in Int32(0)..<Int32(songs.count) {
            SongPrinter.appendSong(song, of: songs, visibleTags: visible, to: &fromTable)
            let copy = songs[Int(song)]
            SongPrinter.appendSong(
                uri: copy.uri, modificationTime: copy.modificationTime, info: copy.info, visibleTags: visible,
                to: &fromInfo)
            SongPrinter.appendFileLine(song, of: songs, to: &fromTable)
            fromInfo.rawLine("file", copy.uri)
        }
        #expect(songs.count == 90)
        #expect(fromTable.bytes == fromInfo.bytes)
        // The raw bytes went out as such, and years past 9999 through the C library.
        #expect(fromTable.bytes.contains(0xFF))
        #expect(String(decoding: fromTable.bytes, as: UTF8.self).contains("Last-Modified: 10000-01-01T00:00:00Z"))
    }

    /// A table whose values hold no escape writes its tag lines in place (`SongTable.putTagLines`): the same
    /// blocks, for values of every length from 0 to 70 bytes and a tag of every type.
    @Test(arguments: [TagMask.all, TagMask([.title, .comment])])
    func blocksOfATableWithoutEscapesAreTheInfoBlocks(visible: TagMask) {
        var root = TreeDirectory(name: "")
        for length in 0...70 {
            let value = String(repeating: "v", count: length)
            let tags = TagType.allCases.map { TagItem($0, $0.rawValue % 3 == 0 ? value : "\($0.name) \(length)") }
            let name = "\(length).mp3"
            root.songs[ByteString(name)] = TreeSong(
                name: name, modificationTime: 1_700_000_000 + Int64(length), size: 0,
                info: SongInfo(tags: tags, durationMilliseconds: UInt64(length) * 1_001))
        }
        let songs = Database(tree: root, updateTime: 0).songs
        #expect(!songs.values.mayHoldEscapes)
        var fromTable = ReplyBuffer()
        var fromInfo = ReplyBuffer()
        for song in Int32(0)..<Int32(songs.count) {
            SongPrinter.appendSong(song, of: songs, visibleTags: visible, playlistLine: false, to: &fromTable)
            let copy = songs[Int(song)]
            SongPrinter.appendSong(
                uri: copy.uri, modificationTime: copy.modificationTime, info: copy.info, visibleTags: visible,
                to: &fromInfo)
        }
        #expect(fromTable.bytes == fromInfo.bytes)
        #expect(fromTable.bytes.count > 71 * 40)
    }

    /// No song block is longer than the table's bound (`largestSizeBound`, from its `extremes`), nor than its own
    /// (`sizeBound`); a table with a value too long for a shared bound writes each block in room of its own size.
    @Test func everyBlockFitsTheTablesBoundAndItsOwn() throws {
        var long = TreeDirectory(name: "")
        for (number, length) in [5, 20_000, 7].enumerated() {
            let info = SongInfo(tags: [TagItem(.comment, String(repeating: "x", count: length))])
            long.songs[ByteString("\(number).mp3")] = TreeSong(
                name: "\(number).mp3", modificationTime: 1, size: 0, info: info)
        }
        for database in [Self.database, Database(tree: long, updateTime: 0)] {
            let songs = database.songs
            let extremes = songs.extremes
            #expect(extremes.directoryPath == (0..<songs.count).map { songs.directoryPath(Int32($0)).utf8.count }.max())
            #expect(extremes.tags == (0..<songs.count).map { songs.tagPositions(Int32($0)).count }.max())
            #expect(extremes.value == (0..<songs.values.count).map { songs.values[Int32($0)].utf8.count }.max())
            let largest = SongPrinter.largestSizeBound(of: songs, extra: 0)
            for song in Int32(0)..<Int32(songs.count) {
                var block = ReplyBuffer()
                SongPrinter.appendSong(song, of: songs, visibleTags: .all, playlistLine: false, to: &block)
                #expect(block.bytes.count <= largest)
                #expect(block.bytes.count <= SongPrinter.sizeBound(song, of: songs, extra: 0))
                var fromInfo = ReplyBuffer()
                let copy = songs[Int(song)]
                SongPrinter.appendSong(
                    uri: copy.uri, modificationTime: copy.modificationTime, info: copy.info, visibleTags: .all,
                    to: &fromInfo)
                #expect(block.bytes == fromInfo.bytes)
            }
        }
    }

    /// Blocks whose `file: DIR/` comes from the snapshot's table of directory paths, and `file:` lines written a
    /// run of one directory's songs at a time (`listall`, `list file`), are the song-by-song ones; a table whose
    /// paths hold raw bytes (`Self.database`) takes the paths' strings.
    @Test func pathTableBlocksAndRunsOfFileLinesAreTheSongBySongOnes() {
        var plain = TreeDirectory(name: "")
        var album = TreeDirectory(name: "Album")
        var disc = TreeDirectory(name: "Disc 2")
        for number in 0..<12 {
            let info = SongInfo(tags: [TagItem(.title, "T\(number)")], hasPlaylist: number == 7)
            let song = TreeSong(name: "\(number).flac", modificationTime: 1, size: 0, info: info)
            switch number % 3 {
            case 0: plain.songs[ByteString(song.name)] = song
            case 1: album.songs[ByteString(song.name)] = song
            default: disc.songs[ByteString(song.name)] = song
            }
        }
        album.children["Disc 2"] = disc
        plain.children["Album"] = album
        for database in [Self.database, Database(tree: plain, updateTime: 0)] {
            let songs = database.songs
            let paths = database.directoryPathTable()
            let all = Array(Int32(0)..<Int32(songs.count))
            var fromPaths = ReplyBuffer()
            var fromStrings = ReplyBuffer()
            for song in all {
                SongPrinter.appendSong(song, of: songs, visibleTags: .all, paths: paths, to: &fromPaths)
                SongPrinter.appendSong(song, of: songs, visibleTags: .all, to: &fromStrings)
            }
            #expect(fromPaths.bytes == fromStrings.bytes)
            var runs = ReplyBuffer()
            var single = ReplyBuffer()
            for directory in database.directories {
                SongPrinter.appendFileLines(directory.songs, of: songs, playlistLines: true, paths: paths, to: &runs)
                for song in directory.songs {
                    SongPrinter.appendFileLine(song, of: songs, to: &single)
                    SongPrinter.appendPlaylistLine(song, of: songs, to: &single)
                }
            }
            #expect(runs.bytes == single.bytes)
            // A selection split into runs of consecutive songs of one directory: the table from song 4 on (runs
            // that end where a directory does), then songs 3 to 0 (each alone).
            let selection = Array(all[4...]) + all[..<4].reversed()
            var split = ReplyBuffer()
            var each = ReplyBuffer()
            SongPrinter.appendFileLines(selection[...], of: songs, paths: paths, to: &split)
            for song in selection { SongPrinter.appendFileLine(song, of: songs, to: &each) }
            #expect(split.bytes == each.bytes)
            // The whole table in pieces of 1, 2, 5 and 64 songs (runs cut by the pieces and by the directories'
            // ranges), as `list file` writes it: the file lines of the songs in order.
            var ordered = ReplyBuffer()
            for song in all { SongPrinter.appendFileLine(song, of: songs, to: &ordered) }
            for piece in [1, 2, 5, 64] {
                var pieces = ReplyBuffer()
                for start in stride(from: 0, to: songs.count, by: piece) {
                    SongPrinter.appendFileLines(
                        Int32(start)..<Int32(min(songs.count, start + piece)), of: database, songs: songs,
                        paths: paths, to: &pieces)
                }
                #expect(pieces.bytes == ordered.bytes, "pieces of \(piece)")
            }
        }
    }

    /// Songs in a root, a directory and a sub-directory, with formats that come back after more than the reply's
    /// cache holds (and none), times before the epoch and after the year 9999, no length, MusicBrainz ids: a table
    /// `appendSongs` writes in batches. `long` adds a comment too long for a shared bound; `sheet` a cue sheet.
    static func plainDatabase(long: Bool = false, sheet: Bool = false) -> Database {
        let formats: [AudioFormat?] =
            (0..<11).map { AudioFormat(sampleRate: 8000 * ($0 + 1), sampleFormat: .s16, channels: 2) } + [
                nil, AudioFormat(sampleRate: 352_800, sampleFormat: .dsd, channels: 2),
            ]
        var directories = [TreeDirectory(name: "Artist"), TreeDirectory(name: "Album"), TreeDirectory(name: "")]
        for number in 0..<150 {
            var tags = [TagItem(.artist, "Artist \(number % 7)"), TagItem(.title, "Title \(number)")]
            if number % 4 == 0 {
                tags.append(TagItem(.musicBrainzTrackID, "6339aa02-0ac6-4870-dea7-\(100_000 + number)"))
            }
            if number % 3 == 0 { tags.append(TagItem(.genre, "Rock")) }
            if long && number == 77 { tags.append(TagItem(.comment, String(repeating: "c", count: 20_000))) }
            let times: [Int64] = [1_700_000_000, -5, 0, 253_402_300_800, 951_782_400, 1_700_086_400]
            let info = SongInfo(
                tags: tags, durationMilliseconds: number % 5 == 0 ? nil : UInt64(number * 1_234),
                audioFormat: formats[number % formats.count], hasPlaylist: sheet && number == 30)
            let song = TreeSong(
                name: "s\(number).flac", modificationTime: times[number % times.count], size: 0, info: info)
            directories[number % 3].songs[ByteString(song.name)] = song
        }
        directories[0].children["Album"] = directories[1]
        var root = directories[2]
        root.children["Artist"] = directories[0]
        return Database(tree: root, updateTime: 0)
    }

    /// Blocks written in batches (`appendSongs`) are the song-by-song ones, for selections in table order, reversed
    /// (a sorted one) and scattered, cut into pieces as a streamed reply is, with and without `Format` lines, with
    /// and without prefetching; tables that go song by song (raw bytes, a long value, a cue sheet) too.
    @Test(arguments: [TagMask.all, TagMask([.title, .musicBrainzTrackID])])
    func songsWrittenInBatchesAreTheSongBySongBlocks(visible: TagMask) {
        let databases = [
            Self.plainDatabase(), Self.database, Self.plainDatabase(long: true), Self.plainDatabase(sheet: true),
        ]
        #expect(!databases[0].songs.values.mayHoldEscapes && !databases[0].directoryPathTable().mayHoldEscapes)
        for database in databases {
            let songs = database.songs
            let paths = database.directoryPathTable()
            let all = Array(Int32(0)..<Int32(songs.count))
            let selections = [all, all.reversed(), all.filter { $0 % 3 != 1 }, [all[5], all[2], all[5]]]
            for selected in selections {
                for format in [true, false] {
                    var each = ReplyBuffer()
                    for song in selected {
                        SongPrinter.appendSong(
                            song, of: songs, visibleTags: visible, format: format, paths: paths, to: &each)
                    }
                    for piece in [1, 7, 1000] {
                        var batched = ReplyBuffer()
                        for start in stride(from: 0, to: selected.count, by: piece) {
                            SongPrinter.appendSongs(
                                selected, start..<min(selected.count, start + piece), of: songs, visibleTags: visible,
                                format: format, paths: paths, prefetch: piece == 7, to: &batched)
                        }
                        #expect(batched.bytes == each.bytes, "pieces of \(piece), format \(format)")
                    }
                }
            }
        }
    }

    @Test func formatLinesAreMadeForEachFormatAndKept() {
        var reply = ReplyBuffer()
        let formats = (1...20).map { AudioFormat(sampleRate: $0 * 1000, sampleFormat: .s24, channels: $0 % 3 + 1) }
        for format in formats + formats.reversed() + formats {
            #expect(reply.formatLine(format) == Array("Format: \(format.description)\n".utf8))
        }
    }

    @Test func theValueTableKnowsWhetherAnyValueHoldsAnEscape() {
        #expect(Self.database.songs.values.mayHoldEscapes)
        #expect(!Database().songs.values.mayHoldEscapes)
    }
}
