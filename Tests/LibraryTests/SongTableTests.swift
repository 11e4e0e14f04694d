// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import RawText
import Testing

@testable import Library

/// The column-wise song store of a snapshot.
struct SongTableTests {
    private func tree() -> TreeDirectory {
        var root = TreeDirectory(name: "")
        var info = SongInfo(
            tags: [
                TagItem(.artist, "A"), TagItem(.title, "A rather long title, past inline strings"),
                TagItem(.artist, "B"), TagItem(.genre, ""),
            ],
            durationMilliseconds: 1234, audioFormat: AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2),
            replayGain: ReplayGainInfo(trackGain: -3.5, albumPeak: 0.9), hasPicture: true)
        root.songs["top.mp3"] = TreeSong(name: "top.mp3", modificationTime: 7, size: 99, info: info)
        var sub = TreeDirectory(name: "Caf\u{E9}")
        info = SongInfo(tags: [TagItem(.title, "A rather long title, past inline strings")], hasPlaylist: true)
        sub.songs["x.mp3"] = TreeSong(name: "x.mp3", modificationTime: -1, size: 1, info: info)
        // A file name that is not UTF-8 (byte 0xE9), as `RawText` decodes it.
        let raw = RawText.decode([0x6E, 0xE9, 0x2E, 0x6D, 0x70, 0x33])
        sub.songs[ByteString(raw)] = TreeSong(name: raw, modificationTime: 0, size: 0, info: SongInfo())
        root.children[ByteString(sub.name)] = sub
        return root
    }

    @Test func songsAreBuiltBackAsTheTreeHadThem() throws {
        let tree = self.tree()
        let database = Database(tree: tree, updateTime: 0)
        let songs = database.songs
        #expect(songs.count == 3)
        for song in songs {
            let directory = database.directories[Int(song.directory)]
            let node = directory.path.isEmpty ? tree : tree.children[ByteString(directory.path)]!
            let name = String(song.uri.dropFirst(directory.path.isEmpty ? 0 : directory.path.count + 1))
            let original = try #require(node.songs[ByteString(name)])
            #expect(song.info == original.info)
            #expect(song.modificationTime == original.modificationTime && song.size == original.size)
        }
        // Equal values are stored once, by bytes.
        #expect(songs.values.count == 4)
        let top = try #require(database.song(at: "top.mp3"))
        #expect(songs.tagValues(top, .artist) == ["A", "B"])
        #expect(songs.tagValues(top, .genre) == [""])
        #expect(songs.presentTags(top) == TagMask([.artist, .title, .genre]))
        #expect(songs.durationMilliseconds(top) == 1234 && songs.hasPicture(top) && !songs.hasPlaylist(top))
        #expect(songs.replayGain(top) == ReplayGainInfo(trackGain: -3.5, albumPeak: 0.9))
        #expect(database.makeTree() == tree)
    }

    /// `prefetch(_:before:)` reads only what lies inside the list and the table: every position of a list with
    /// songs repeated, out of order, and -1 (a queue's URL) at either end and in the middle, and of an empty list,
    /// with the table's columns left as they were.
    @Test func prefetchStaysInsideTheListAndTheTable() {
        let database = Database(tree: self.tree(), updateTime: 0)
        let songs = database.songs
        let last = Int32(songs.count - 1)
        let lists: [[Int32]] = [
            [], [-1], [last], [-1, 0, last, 1, -1, last, last, 0, 1, 2, -1, 0, 1, 2, 0, -1, last],
            Array(repeating: last, count: 30),
        ]
        let before = (0...last).map { songs.uri($0) }
        for list in lists {
            for position in 0...list.count { songs.prefetch(list, before: position) }
        }
        #expect((0...last).map { songs.uri($0) } == before)
    }

    @Test func songsAreFoundByTheBytesOfTheirURI() throws {
        let database = Database(tree: self.tree(), updateTime: 0)
        let raw = "Caf\u{E9}/" + RawText.decode([0x6E, 0xE9, 0x2E, 0x6D, 0x70, 0x33])
        for index in 0..<Int32(database.songs.count) {
            #expect(database.song(at: database.songs.uri(index)) == index)
        }
        let song = try #require(database.song(at: raw))
        #expect(database.songs.uri(song) == raw)
        // ASCII names (made without decoding) and the others give the same bytes as the path and the name joined.
        let top = try #require(database.song(at: "top.mp3"))
        #expect(Array(database.songs.uri(top).utf8) == Array("top.mp3".utf8))
        let x = try #require(database.song(at: "Caf\u{E9}/x.mp3"))
        #expect(Array(database.songs.uri(x).utf8) == Array("Caf\u{E9}/x.mp3".utf8))
        #expect(Array(database.songs.uri(song).utf8) == Array(raw.utf8))
        #expect(database.songs.name(song) == RawText.decode([0x6E, 0xE9, 0x2E, 0x6D, 0x70, 0x33]))
        // Canonically equivalent but other bytes, a directory, a trailing or doubled slash: no song.
        for missing in ["Cafe\u{301}/x.mp3", "Caf\u{E9}", "Caf\u{E9}/", "Caf\u{E9}//x.mp3", "/top.mp3", "", "x.mp3"] {
            #expect(database.song(at: missing) == nil, "\(missing)")
        }
    }

    @Test func aColumnListsSongsWithoutTheTagAsTheEmptyValueOnce() {
        let database = Database(tree: self.tree(), updateTime: 0)
        // One song has an empty genre, the others none: one "" either way.
        #expect(database.column(.genre).values == [""])
        #expect(database.column(.artist).values == ["", "A", "B"])
        #expect(database.column(.albumArtist).values == ["", "A", "B"])
        let top = database.song(at: "top.mp3")!
        #expect(Array(database.column(.albumArtist).ids(of: top)) == [1, 2])
    }

    @Test func statisticsCountDistinctValuesByBytes() {
        var root = TreeDirectory(name: "")
        for (number, artist) in ["K", "\u{212A}", "K"].enumerated() {
            let info = SongInfo(tags: [TagItem(.artist, artist)], durationMilliseconds: 1500)
            root.songs[ByteString("\(number).mp3")] = TreeSong(
                name: "\(number).mp3", modificationTime: 0, size: 0, info: info)
        }
        let statistics = Database(tree: root, updateTime: 0).statistics
        #expect(statistics.artists == 2 && statistics.albums == 0 && statistics.songs == 3)
        #expect(statistics.playTimeSeconds == 4)
    }

    @Test func aDirectoryNameStartingWithACombiningMarkKeepsItsOwnNode() throws {
        // "a/" + "\u{301}b": the slash and the accent are one Character, so a name cut back out of the path by
        // Characters would be "b" (the sibling) or missing.
        var parent = TreeDirectory(name: "a")
        for name in ["\u{301}b", "b"] {
            var child = TreeDirectory(name: name)
            child.songs["s.mp3"] = TreeSong(
                name: "s.mp3", modificationTime: 0, size: 0, info: SongInfo(tags: [TagItem(.title, name)]))
            parent.children[ByteString(name)] = child
        }
        var root = TreeDirectory(name: "")
        root.children["a"] = parent
        let database = Database(tree: root, updateTime: 0)
        #expect(Set(database.directories.map(\.path)) == ["", "a", "a/\u{301}b", "a/b"])
        for name in ["\u{301}b", "b"] {
            let song = try #require(database.song(at: "a/" + name + "/s.mp3"))
            #expect(database.songs.tagValues(song, .title) == [name])
        }
        #expect(database.makeTree() == root)
    }

    @Test func aSnapshotsColumnsHaveNoMoreRoomThanTheyUse() {
        var root = TreeDirectory(name: "")
        for number in 0..<3000 {
            let info = SongInfo(tags: [
                TagItem(.artist, "Artist \(number % 70)"), TagItem(.album, "Album \(number % 300)"),
                TagItem(.title, "Title \(number)"),
            ])
            let name = "song \(number).mp3"
            root.songs[ByteString(name)] = TreeSong(name: name, modificationTime: 1, size: 2, info: info)
        }
        let songs = Database(tree: root, updateTime: 0).songs
        func spare<T>(_ column: [T]) -> Int { (column.capacity - column.count) * MemoryLayout<T>.stride }
        #expect(songs.tagValues.count == 9000)
        for (name, room, used) in [
            ("records", spare(songs.records), songs.records.count * MemoryLayout<SongTable.Record>.stride),
            ("names", spare(songs.names), songs.names.count),
            ("tag types", spare(songs.tagTypes), songs.tagTypes.count),
            ("tag values", spare(songs.tagValues), songs.tagValues.count * 4),
            ("value bytes", spare(songs.values.bytes), songs.values.bytes.count),
        ] {
            #expect(room < max(4096, used / 16), "\(name): \(room) bytes spare for \(used)")
        }
    }

    /// A table of one directory with a song for each length of value from 0 to 70 bytes (a key of up to 32 bytes and
    /// a value of up to 32 or 64 are copied whole, longer ones as long as they are), each song with a tag of every
    /// type.
    private static func everyLength() -> SongTable {
        var root = TreeDirectory(name: "")
        for length in 0...70 {
            let value = String((0..<length).map { Character(UnicodeScalar(UInt8(97 + ($0 * 7 + length) % 26))) })
            let tags = TagType.allCases.map { TagItem($0, $0.rawValue % 2 == 0 ? value : "v\(length)") }
            let name = String(repeating: "n", count: length) + ".mp3"
            root.songs[ByteString(name)] = TreeSong(
                name: name, modificationTime: 1, size: 2, info: SongInfo(tags: tags))
        }
        return Database(tree: root, updateTime: 0).songs
    }

    @Test(arguments: [TagMask.all, TagMask([.title, .comment, .musicBrainzReleaseTrackID]), TagMask.none])
    func tagLinesAreEachVisibleKeyAndValueInStoredOrderWhateverTheRoom(mask: TagMask) {
        let songs = Self.everyLength()
        let keys = TagType.allCases.map { Array("\($0.name): ".utf8) }
        #expect(!songs.values.mayHoldEscapes)
        for song in Int32(0)..<Int32(songs.count) {
            var expected: [UInt8] = []
            for position in songs.tagPositions(song) where mask.contains(songs.tagType(at: position)) {
                expected += keys[songs.tagType(at: position).rawValue]
                songs.values.withBytes(songs.valueNumber(at: position)) { expected += $0 }
                expected.append(0x0A)
            }
            // Room for exactly the lines (each copied as long as it is), and room to spare (copied whole).
            for spare in [0, 1, 40, 70, 200] {
                var bytes: [UInt8] = [0xEE]
                bytes.append(writingAtMost: expected.count + spare) { writer in
                    songs.putTagLines(of: song, in: mask, keys: LineKeys(keys), to: &writer)
                    #expect(writer.count == expected.count)
                }
                #expect(bytes == [0xEE] + expected, "song \(song), \(spare) bytes spare")
            }
        }
    }

    @Test func nameLinesAreThePrefixAndEachNameWhateverTheRoom() {
        let songs = Self.everyLength()
        for prefix in [[], Array("file: ".utf8), Array(repeating: UInt8(ascii: "d"), count: 50)] {
            for run in [Int32(0)..<Int32(songs.count), 3..<4, 10..<40, 5..<5] {
                var expected: [UInt8] = []
                for song in run {
                    expected += prefix
                    songs.withNameBytes(song) { expected += $0 }
                    expected.append(0x0A)
                }
                for spare in [0, 64] {
                    let bytes = ByteWriter.bytes(capacity: expected.count + spare) { writer in
                        songs.putNameLines(run, prefix: prefix, to: &writer)
                    }
                    #expect(bytes == expected, "\(prefix.count)-byte prefix, songs \(run), \(spare) spare")
                }
            }
        }
    }

    /// The value bytes end with `TagValueTable.padding` zeros past the last value, in a table built anew and in one
    /// built again from a snapshot's values (no padding taken for a value).
    @Test func valueBytesEndWithPaddingThatNoValueHolds() {
        let songs = Self.everyLength()
        let values = songs.values
        let end = Int(values.offsets[values.count])
        #expect(values.bytes.count == end + TagValueTable.padding)
        #expect(values.bytes[end...].allSatisfy { $0 == 0 })
        var again = TagValueTable.Builder(values)
        let added = again.number(for: "added")
        let rebuilt = again.build()
        #expect(added == Int32(values.count))
        #expect(rebuilt[added] == "added")
        #expect(rebuilt[added - 1] == values[added - 1])
        #expect(rebuilt.bytes.count == Int(rebuilt.offsets[rebuilt.count]) + TagValueTable.padding)
    }
}
