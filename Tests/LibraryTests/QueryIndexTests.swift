// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Testing

@testable import Library

/// The per-snapshot query indexes.
struct QueryIndexTests {
    /// A flat database, one song per entry, named so that the entries keep their order.
    private func database(_ songs: [[TagItem]]) -> (Database, [Int32]) {
        var root = TreeDirectory(name: "")
        for (number, tags) in songs.enumerated() {
            let name = "\(number + 10).mp3"
            root.songs[ByteString(name)] = TreeSong(
                name: name, modificationTime: 0, size: 0, info: SongInfo(tags: tags))
        }
        let database = Database(tree: root, updateTime: 0)
        return (database, songs.indices.map { database.song(at: "\($0 + 10).mp3")! })
    }

    @Test func foldedIndexFoldsEachSongsOwnValuesAsFiltersDo() {
        let (database, songs) = self.database([
            [TagItem(.title, "Hello WORLD"), TagItem(.artist, "A")],
            [TagItem(.title, "Straße"), TagItem(.title, "ß")],
            [TagItem(.artist, "only an artist")],
            [TagItem(.title, "\u{212A}elvin"), TagItem(.title, "Kelvin")],
            [TagItem(.title, "Caf\u{E9}"), TagItem(.title, "Cafe\u{301}")],
        ])
        let index = database.foldedIndex(.title)
        func folded(_ song: Int) -> [String] { index.values(of: songs[song]).map(\.folded) }
        #expect(folded(0) == ["hello world"])
        // mpd's buffer quirk: a lone ß stays unfolded, inside a longer word it becomes "ss".
        #expect(folded(1) == ["strasse", "ß"])
        // No fallbacks and no "" for a song without the tag: filters need to see the absence.
        #expect(folded(2).isEmpty)
        #expect(folded(3) == ["kelvin", "kelvin"])
        // No normalization: the composed and decomposed forms stay byte-distinct.
        #expect(folded(4) == ["caf\u{E9}", "cafe\u{301}"])
        #expect(
            folded(4).map { Array($0.utf8) } == [
                [0x63, 0x61, 0x66, 0xC3, 0xA9], [0x63, 0x61, 0x66, 0x65, 0xCC, 0x81],
            ])
        for song in songs.indices {
            let expected = database.songs[Int(songs[song])].info.values(.title).map(FilterCaseFold.fold)
            #expect(folded(song).map { Array($0.utf8) } == expected.map { Array($0.utf8) })
        }
        // Built once per snapshot.
        #expect(database.foldedIndex(.title).values(of: songs[0]).first?.folded == "hello world")
        #expect(database.foldedIndex(.artist).values(of: songs[1]).isEmpty)
    }

    @Test func aTagIndexNumbersEachSongsOwnValuesAndListsEachValuesSongs() {
        let (database, songs) = self.database([
            [TagItem(.title, "B"), TagItem(.artist, "A")],
            [TagItem(.title, "A"), TagItem(.title, "B")],
            [TagItem(.artist, "only an artist")],
            [TagItem(.title, "\u{212A}"), TagItem(.title, "K"), TagItem(.title, "K")],
        ])
        let index = database.tagIndex(.title)
        func values(_ song: Int) -> [String] {
            index.ids(of: songs[song]).map { database.songs.values[index.tableNumbers[Int($0)]] }
        }
        // Byte-distinct values, numbered as songs first have them; no fallbacks, nothing for a song without one.
        #expect(index.count == 4)
        #expect(values(0) == ["B"])
        #expect(values(1) == ["A", "B"])
        #expect(values(2).isEmpty)
        #expect(index.ids(of: songs[3]).map { Int($0) } == [2, 3, 3])
        #expect(values(3).map { Array($0.utf8) } == [[0xE2, 0x84, 0xAA], [0x4B], [0x4B]])
        // Each value's songs, ascending, a song as often as it has the value.
        func songsOf(_ id: Int) -> [Int32] {
            Array(index.songs[Int(index.songStarts[id])..<Int(index.songStarts[id + 1])])
        }
        #expect(songsOf(0) == [songs[0], songs[1]].sorted())
        #expect(songsOf(1) == [songs[1]])
        #expect(songsOf(3) == [songs[3], songs[3]])
        let bits = index.songBits(where: [false, true, false, true], songCount: database.songs.count)
        let marked = (0..<Int32(database.songs.count)).filter { bits[Int($0) / 64] & (1 << UInt64($0 % 64)) != 0 }
        #expect(marked == [songs[1], songs[3]].sorted())
        // The folded index shares the numbers.
        #expect(database.foldedIndex(.title).ids(of: songs[3]) == index.ids(of: songs[3]))
    }

    @Test func postingsAreByteExactUnlessCanonicallyEquivalentValuesMeet() {
        let (database, songs) = self.database([
            [TagItem(.genre, "K"), TagItem(.artist, "caf\u{E9}")], [TagItem(.genre, "\u{212A}")],
            [TagItem(.genre, "Jazz"), TagItem(.artist, "caf\u{E9}")], [],
        ])
        // The Kelvin sign and K share one list: only a byte comparison tells them apart.
        #expect(database.songs(with: .genre, value: "K") == [songs[0], songs[1]])
        #expect(!database.hasByteExactPostings(.genre))
        // One artist spelling: its list also answers a decomposed needle, so a caller checks one song.
        #expect(database.hasByteExactPostings(.artist))
        #expect(database.songs(with: .artist, value: "cafe\u{301}") == [songs[0], songs[2]])
        #expect(database.hasByteExactPostings(.title))
    }
}
