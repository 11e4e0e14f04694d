// SPDX-License-Identifier: GPL-3.0-or-later

import MPDProtocol
import Model
import PCRE
import Testing

@testable import Library

/// The query engine (`Database.select`, `count`, `list`) against the reference: `SongFilter.matches` on every
/// song along the tree walk, a plain stable sort, and groups worked out from `SongInfo`'s fallback visits. Each
/// recorded command must give the same songs, or the same lines, in the same order.
struct QueryEngineTests {
    // MARK: - The library

    /// A deterministic library of 1,600 songs in nested directories: case and Unicode variants of one name
    /// (ß/SS, the Kelvin sign, composed and decomposed é), songs without Artist or with AlbumArtist only,
    /// multi-valued tags, sort tags, Track numbers as `strtol` reads them, ties in every sort key, and one genre
    /// on more than 1,024 songs (the engine's long-postings path).
    static let database: Database = {
        var generator = Generator(seed: 17)
        let artists = [
            "Alpha", "alpha", "Beta", "Straße", "STRASSE", "\u{212A}elvin", "Kelvin", "Caf\u{E9}", "Cafe\u{301}",
            "Zen Master", "İstanbul", "",
        ]
        let albumArtists = ["Alpha", "Various", "Beta", "Straße"]
        let albums = ["One", "Two", "Zen", "Three", "zenith"]
        let genres = ["Rock", "Rock", "Rock", "Jazz", "Pop"]
        let tracks = ["1", "2", "3", "10", "3/12", " 7", "+4", "x", "02"]
        let formats = [
            AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2),
            AudioFormat(sampleRate: 48000, sampleFormat: .s24, channels: 2),
            AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 1),
        ]
        func song(_ number: Int) -> TreeSong {
            var tags: [TagItem] = []
            if !generator.chance(10) { tags.append(TagItem(.artist, generator.pick(artists))) }
            if generator.chance(20) { tags.append(TagItem(.artist, generator.pick(artists))) }
            if generator.chance(40) { tags.append(TagItem(.albumArtist, generator.pick(albumArtists))) }
            if generator.chance(5) { tags.append(TagItem(.albumArtist, generator.pick(albumArtists))) }
            if !generator.chance(5) { tags.append(TagItem(.album, generator.pick(albums))) }
            tags.append(TagItem(.title, generator.chance(10) ? "Zen and \(number)" : "Title \(number % 97)"))
            if number < 1100 || generator.chance(50) { tags.append(TagItem(.genre, "Rock")) }
            tags.append(TagItem(.genre, generator.pick(genres)))
            if !generator.chance(10) { tags.append(TagItem(.track, generator.pick(tracks))) }
            if generator.chance(30) { tags.append(TagItem(.disc, "\(generator.next(3))")) }
            if generator.chance(50) { tags.append(TagItem(.date, "\(1990 + generator.next(8))")) }
            if generator.chance(15) { tags.append(TagItem(.artistSort, generator.pick(["Sorted A", "Sorted B"]))) }
            if generator.chance(10) { tags.append(TagItem(.albumArtistSort, generator.pick(["AA", "BB"]))) }
            if generator.chance(10) { tags.append(TagItem(.albumSort, generator.pick(["S1", "S2"]))) }
            if generator.chance(20) { tags.append(TagItem(.musicBrainzArtistID, generator.pick(["mb-b", "mb-a"]))) }
            if generator.chance(10) {
                tags.append(TagItem(.musicBrainzAlbumArtistID, generator.pick(["mb-c", "mb-a"])))
            }
            let duration: UInt64? = generator.chance(5) ? nil : UInt64(1000 + generator.next(400_000))
            let format: AudioFormat? = generator.chance(10) ? nil : generator.pick(formats)
            let info = SongInfo(tags: tags, durationMilliseconds: duration, audioFormat: format)
            let digits = String(number)
            let name = String(repeating: "0", count: 4 - digits.count) + digits + ".mp3"
            return TreeSong(
                name: name, modificationTime: Int64(1_600_000_000 + generator.next(50) * 1000), size: 0, info: info)
        }
        let paths = ["", "a", "a/x", "a/x/deep", "b", "c d", "Ωmega", "a/y"]
        var root = TreeDirectory(name: "")
        for number in 0..<1600 {
            let path = paths[number % paths.count].split(separator: "/").map(String.init)
            let made = song(number)
            func insert(_ directory: inout TreeDirectory, _ rest: ArraySlice<String>) {
                guard let name = rest.first else {
                    directory.songs[ByteString(made.name)] = made
                    return
                }
                var child = directory.children[ByteString(name)] ?? TreeDirectory(name: name)
                insert(&child, rest.dropFirst())
                directory.children[ByteString(name)] = child
            }
            insert(&root, path[...])
        }
        return Database(tree: root, updateTime: 0)
    }()

    /// A linear congruential generator: the same library on every run.
    struct Generator {
        var state: UInt64
        init(seed: UInt64) { self.state = seed }
        mutating func next(_ bound: Int) -> Int {
            self.state = self.state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((self.state >> 33) % UInt64(bound))
        }
        mutating func chance(_ percent: Int) -> Bool { self.next(100) < percent }
        mutating func pick<T>(_ items: [T]) -> T { items[self.next(items.count)] }
    }

    /// A database song as the reference matcher sees it: `SongInfo`'s values, nothing indexed.
    struct ReferenceSong: FilterSubject {
        let song: Database.Song
        var uri: String { self.song.uri }
        var lastModified: Int64? { self.song.modificationTime }
        var audioFormat: AudioFormat? { self.song.info.audioFormat }
        func tagValues(_ type: TagType) -> [String] { self.song.info.values(type) }
    }

    // MARK: - The reference

    /// Every song of the library, copied out of the table.
    static let referenceSongs = (0..<Self.database.songs.count).map { ReferenceSong(song: Self.database.songs[$0]) }

    /// Every song the filter matches, one by one along the tree walk from its base.
    static func referenceSelect(_ filter: SongFilter) throws(QueryError) -> [Int32] {
        let database = Self.database
        func matches(_ song: Int32) -> Bool { filter.matches(Self.referenceSongs[Int(song)]) }
        var start: Int32 = 0
        if let base = filter.base, !base.isEmpty, base != "/" {
            if let directory = database.directory(at: base) {
                start = directory
            } else if let song = database.song(at: base), !base.contains("//") {
                return matches(song) ? [song] : []
            } else {
                throw .noSuchDirectory
            }
        }
        var result: [Int32] = []
        database.walk(from: start, recursive: true) { song in if matches(song) { result.append(song) } }
        return result
    }

    /// A plain stable sort by `mpd`'s sort keys; descending swaps the operands (ties keep walk order).
    static func referenceSort(_ songs: [Int32], _ sort: SortOrder) -> [Int32] {
        enum Key { case number(Int64), bytes([UInt8]) }
        let keys: [Int32: Key] = Dictionary(
            uniqueKeysWithValues: songs.map { song in
                let reference = Self.referenceSongs[Int(song)].song
                switch sort.key {
                case .lastModified: return (song, .number(reference.modificationTime))
                case .tag(let type):
                    let value = reference.info.sortValue(type)
                    if type == .track || type == .disc { return (song, .number(Int64(Database.leadingInteger(value)))) }
                    return (song, .bytes(Array(value.utf8)))
                }
            })
        func less(_ a: Int32, _ b: Int32) -> Bool {
            let (x, y) = sort.descending ? (b, a) : (a, b)
            switch (keys[x]!, keys[y]!) {
            case (.number(let p), .number(let q)): return p < q
            case (.bytes(let p), .bytes(let q)): return p.lexicographicallyPrecedes(q)
            default: return false
            }
        }
        // A merge sort that takes from the left run unless the right one is strictly less: stable.
        func mergeSort(_ items: ArraySlice<Int32>) -> [Int32] {
            guard items.count > 1 else { return Array(items) }
            let middle = items.startIndex + items.count / 2
            let (left, right) = (mergeSort(items[..<middle]), mergeSort(items[middle...]))
            var (i, j) = (0, 0)
            var merged: [Int32] = []
            while i < left.count || j < right.count {
                if j == right.count || (i < left.count && !less(right[j], left[i])) {
                    merged.append(left[i])
                    i += 1
                } else {
                    merged.append(right[j])
                    j += 1
                }
            }
            return merged
        }
        return mergeSort(songs[...])
    }

    /// The values `mpd` groups a song under: the tag's, else its first fallback's, else "".
    static func groupValues(_ song: Int32, _ type: TagType) -> [String] {
        var values: [String] = []
        Self.referenceSongs[Int(song)].song.info.visitWithFallbackOrEmpty(type) { values.append($0) }
        return values
    }

    /// Rows of values as bytes: Swift strings would merge canonically equivalent values, `mpd` compares bytes.
    static func bytesPrecede(_ a: [[UInt8]], _ b: [[UInt8]]) -> Bool {
        a.lexicographicallyPrecedes(b) { $0.lexicographicallyPrecedes($1) }
    }

    // MARK: - Recorded commands

    /// `find` (case-sensitive) and `search` (folding) filters, as clients send them.
    static let filters: [(command: String, arguments: [String])] = [
        ("find", ["(artist == 'Alpha')"]),
        ("find", ["(artist == 'Kelvin')"]),
        ("find", ["(artist == '\u{212A}elvin')"]),
        ("find", ["(artist == 'Cafe\u{301}')"]),
        ("find", ["(genre == 'Rock')"]),
        ("find", ["(genre == 'Jazz')"]),
        ("find", ["((genre == 'Rock') AND (album == 'Zen'))"]),
        ("find", ["((genre == 'Rock') AND (base 'a/x'))"]),
        ("find", ["((album == 'One') AND (artist == 'Beta') AND (track == '3'))"]),
        ("find", ["(albumartist == 'Alpha')"]),
        ("find", ["(albumartist == '')"]),
        ("find", ["(artist == '')"]),
        ("find", ["(artistsort == 'Alpha')"]),
        ("find", ["(artistsort == 'Sorted A')"]),
        ("find", ["(albumartistsort == 'Various')"]),
        ("find", ["(artist != 'Alpha')"]),
        ("find", ["(genre != 'Rock')"]),
        ("find", ["(albumartist != 'Alpha')"]),
        ("find", ["(albumartistsort != 'Various')"]),
        ("find", ["(albumartist == 'Straße')"]),
        ("find", ["(albumartist == 'Kelvin')"]),
        ("find", ["(albumartistsort == 'Kelvin')"]),
        ("find", ["(albumsort == 'Zen')"]),
        ("find", ["((genre != 'Rock') AND (base 'a'))"]),
        ("find", ["((artist != 'Beta') AND (genre == 'Jazz'))"]),
        ("find", ["((artist != 'Beta') AND (albumartist != 'Alpha'))"]),
        ("find", ["(!(artist == 'Alpha'))"]),
        ("find", ["(!((artist == 'Alpha') AND (album == 'One')))"]),
        ("find", ["(artist contains 'lph')"]),
        ("find", ["(artist !contains 'a')"]),
        ("find", ["(title =~ '^Title 1[0-9]$')"]),
        ("find", ["(title !~ 'Zen')"]),
        ("find", ["(artist =~ '^(?i)stra')"]),
        ("find", ["(any == 'Zen')"]),
        ("find", ["(any contains 'Rock')"]),
        ("find", ["(any != 'Rock')"]),
        ("find", ["(any == 'No such value')"]),
        ("find", ["(any != 'No such value')"]),
        ("find", ["(any == '')"]),
        ("find", ["((any == 'Jazz') AND (base 'a'))"]),
        ("find", ["(file == 'a/x/0002.mp3')"]),
        ("find", ["((file == 'a/x/0002.mp3') AND (base 'b'))"]),
        ("find", ["((file == 'b/0004.mp3') AND (genre contains 'o'))"]),
        ("find", ["((genre contains 'o') AND (file == 'b/0004.mp3'))"]),
        ("find", ["(file == 'nowhere.mp3')"]),
        ("find", ["(file == 'a/x/../x/0002.mp3')"]),
        ("find", ["(file == 'a//x/0002.mp3')"]),
        ("find", ["(file == '0000.mp3')"]),
        ("find", ["(file != 'a/x/0002.mp3')"]),
        ("find", ["(albumartist contains 'a')"]),
        ("find", ["(albumartist !contains 'ph')"]),
        ("find", ["(albumartist != '')"]),
        ("find", ["(artist contains '')"]),
        ("find", ["(albumartistsort =~ '^(A|S)')"]),
        ("find", ["(albumsort !~ 'e')"]),
        ("find", ["(artistsort contains 'e')"]),
        ("find", ["((genre == 'Rock') AND (artist contains 'a'))"]),
        ("find", ["((genre == 'Rock') AND (albumartist == 'Alpha') AND (genre == 'Jazz'))"]),
        ("find", ["((genre == 'Rock') AND (artist == 'Kelvin'))"]),
        ("find", ["((genre == 'Pop') AND (albumartistsort == 'Alpha'))"]),
        ("find", ["((genre == 'Rock') AND (genre != 'Jazz') AND (base 'a'))"]),
        ("find", ["((genre == 'Rock') AND (album == 'None of these'))"]),
        ("find", ["((genre == 'Jazz') AND (albumartist contains 'a'))"]),
        ("find", ["((artist contains 'a') AND (title !~ '^Title'))"]),
        ("find", ["((title =~ 'Zen') AND (any contains 'Rock') AND (track != '3'))"]),
        ("find", ["(file contains 'deep')"]),
        ("find", ["(base 'a')"]),
        ("find", ["(base 'a/x')"]),
        ("find", ["(base 'c d')"]),
        ("find", ["(base 'a/x/0002.mp3')"]),
        ("find", ["(base '')"]),
        ("find", ["(modified-since '1600025000')"]),
        ("find", ["(modified-since '2020-09-13T13:00:00Z')"]),
        ("find", ["(AudioFormat == '44100:16:2')"]),
        ("find", ["(AudioFormat =~ '44100:*:*')"]),
        ("find", ["((AudioFormat == '48000:24:2') AND (genre == 'Rock'))"]),
        ("find", ["((AudioFormat =~ '*:*:1') AND (base 'a'))"]),
        ("find", ["(!(AudioFormat == '44100:16:2'))"]),
        ("find", ["(modified-since '9999-01-01T00:00:00Z')"]),
        ("find", ["((modified-since '1600025000') AND (base 'a') AND (AudioFormat =~ '44100:*:*'))"]),
        ("find", ["artist", "Alpha", "album", "One"]),
        ("find", ["albumartist", "Beta"]),
        ("find", ["any", "Zen"]),
        ("find", ["file", "b/0004.mp3"]),
        ("find", ["base", "a/y", "genre", "Pop"]),
        ("find", ["((base 'a') AND (base 'a/x'))"]),
        ("find", ["((base 'a/x') AND (genre == 'Rock') AND (base 'a'))"]),
        ("find", ["((base 'a') AND (base 'b'))"]),
        ("find", ["((base 'a') AND (genre != 'Jazz'))"]),
        ("find", ["((base 'a/x') AND (artist contains 'a'))"]),
        ("find", ["((base 'a/x/deep') AND (file == 'a/x/deep/0003.mp3'))"]),
        ("find", ["((base 'a') AND (file == 'b/0004.mp3'))"]),
        ("search", ["(artist == 'strasse')"]),
        ("search", ["(artist == 'kelvin')"]),
        ("search", ["(artist contains 'CAF')"]),
        ("search", ["(title contains 'ZEN')"]),
        ("search", ["(albumartist contains 'alp')"]),
        ("search", ["(albumartist != 'alpha')"]),
        ("search", ["(!(albumartist contains 'v'))"]),
        ("search", ["(!((artist contains 'a') AND (album == 'zen')))"]),
        ("search", ["(!(!(album contains 'zen')))"]),
        ("search", ["((any contains 'zen') AND (genre == 'pop'))"]),
        ("search", ["(any contains 'istanbul')"]),
        ("search", ["(!(any contains 'e'))"]),
        ("search", ["(artist =~ '^al')"]),
        ("search", ["(file contains 'DEEP')"]),
        ("search", ["title", "zen"]),
        ("search", ["any", "kelvin", "base", "b"]),
        ("search", ["artistsort", "sorted"]),
        ("search", ["albumartistsort", "alpha"]),
        ("search", ["any", "STRASSE"]),
        ("search", ["(any == 'straße')"]),
        ("search", ["(any contains 'CAFÉ')"]),
        ("search", ["(any contains '\u{212A}')"]),
        ("search", ["(any != 'rock')"]),
        ("search", ["((any contains 'kelvin') AND (base 'a'))"]),
        ("search", ["((base 'a/x') AND (any contains 'mb-'))"]),
    ]

    static let sorts: [String] = [
        "artist", "-artist", "albumartist", "-albumartist", "artistsort", "albumartistsort", "albumsort", "album",
        "track", "-track", "disc", "-disc", "date", "-date", "title", "-title", "Last-Modified", "-Last-Modified",
        "genre", "-albumartistsort", "-albumsort", "musicbrainz_artistid", "musicbrainz_albumartistid",
        "-musicbrainz_albumartistid",
    ]

    static let windows: [String] = ["0:10", "5:", "3", "100:200", "1590:1700", "5000:"]

    static let groups: [TagType] = [
        .albumArtist, .artist, .album, .genre, .date, .track, .artistSort, .albumArtistSort,
    ]

    /// `list TYPE [group G]…` levels, outermost first.
    static let lists: [[TagType]] = [
        [.album], [.albumArtist], [.artist], [.genre], [.title], [.albumArtistSort], [.artistSort], [.date],
        [.albumArtist, .album], [.artist, .album], [.genre, .date], [.date, .genre], [.album, .title],
        [.albumArtist, .date, .album], [.genre, .albumArtist, .album, .track],
    ]

    static func parse(_ command: String, _ arguments: [String]) -> SongFilter {
        (try? FilterParser.parse(
            arguments: arguments[...], foldCase: command == "search", regex: RegularExpression.self))
            ?? SongFilter([.never])
    }

    // MARK: - Tests

    @Test func theLibraryExercisesTheFastPaths() {
        let database = Self.database
        #expect(database.songs.count == 1600)
        #expect(database.songs(with: .genre, value: "Rock").count > 1024)
        // The Kelvin sign and K merge in the Swift-keyed postings.
        #expect(!database.hasByteExactPostings(.artist))
        #expect(database.hasByteExactPostings(.genre))
        for (command, arguments) in Self.filters {
            #expect(
                (try? FilterParser.parse(
                    arguments: arguments[...], foldCase: command == "search", regex: RegularExpression.self)) != nil,
                "\(command) \(arguments) parses")
        }
    }

    @Test(arguments: Self.filters.indices)
    func selectMatchesTheReference(filter index: Int) throws {
        let (command, arguments) = Self.filters[index]
        let filter = Self.parse(command, arguments)
        let expected = try Self.referenceSelect(filter)
        #expect(try Self.database.select(filter) == expected, "\(command) \(arguments)")
        #expect(try Self.database.select(SongQuery(filter: filter)) == expected)
        let count = try Self.database.count(filter)
        #expect(count.songs == expected.count)
        let milliseconds = expected.reduce(UInt64(0)) { $0 + (Self.database.songs.durationMilliseconds($1) ?? 0) }
        #expect(count.milliseconds == milliseconds)
    }

    /// `playlistfind`/`playlistsearch` over queued songs of the snapshot: the engine must match as the song's own
    /// values would, without an audio format (an `AudioFormat` filter never matches), over a queue of every song
    /// (shuffled, with repeats: the long path with one answer per value) and over a short one (songs one by one).
    @Test(arguments: Self.filters.indices)
    func queuedSongsMatchTheSongsValuesWithoutAFormat(filter index: Int) {
        let (command, arguments) = Self.filters[index]
        let filter = Self.parse(command, arguments)
        let songs = Self.database.songs
        var generator = Generator(seed: UInt64(index))
        var queue = Array(0..<Int32(songs.count)) + (0..<400).map { _ in Int32(generator.next(songs.count)) }
        for position in queue.indices.reversed() { queue.swapAt(position, generator.next(position + 1)) }
        func reference(_ song: Int32) -> Bool {
            filter.matches(
                QueuedValues(uri: songs.uri(song), info: songs.info(song), lastModified: songs.modificationTime(song)))
        }
        #expect(Self.database.queuedSongsMatch(queue, filter) == queue.map(reference), "\(command) \(arguments)")
        let short = Array(queue[..<300])
        #expect(Self.database.queuedSongsMatch(short, filter) == short.map(reference), "\(command) \(arguments)")
        // Exactly as many songs as the library, shuffled: not the library in order, whatever their count says.
        var every = Array(0..<Int32(songs.count))
        for position in every.indices.reversed() { every.swapAt(position, generator.next(position + 1)) }
        #expect(Self.database.queuedSongsMatch(every, filter) == every.map(reference), "\(command) \(arguments)")
        let format = SongFilter([.audioFormat(AudioFormatMask(sampleRate: nil, sampleFormat: nil, channels: nil))])
        #expect((try? Self.database.select(format).isEmpty) == false, "songs of the library have formats")
        #expect(!Self.database.queuedSongsMatch(queue, format).contains(true))
        #expect(!Self.database.queuedSongsMatch(short, format).contains(true))
    }

    /// A tag item's two ways, for every filter: the songs of the values that match (`TagIndex`'s lists, for many
    /// candidates) and each candidate's values (for a few), over the library in order and over a shuffled
    /// selection with repeats.
    @Test(arguments: Self.filters.indices)
    func bothWaysOfMatchingTagItemsMatchTheReference(filter index: Int) {
        let (command, arguments) = Self.filters[index]
        let filter = Self.parse(command, arguments)
        let database = Self.database
        var generator = Generator(seed: UInt64(index) + 100)
        let all = Array(0..<Int32(database.songs.count))
        let shuffled = (0..<700).map { _ in Int32(generator.next(all.count)) }
        for candidates in [all, shuffled] {
            let expected = candidates.filter { filter.matches(Self.referenceSongs[Int($0)]) }
            for from in [0, Int.max] {
                let prepared = PreparedFilter(database, filter: filter, valueSongsFrom: from)
                let kept = withUnsafePointer(to: database.songs) { prepared.filter(candidates, in: $0) }
                #expect(kept == expected, "\(command) \(arguments), value songs from \(from)")
            }
        }
    }

    @Test func theDirectoryPathTableHoldsEachDirectorysPathByIndex() {
        let database = Self.database
        let table = database.directoryPathTable()
        #expect(table.count == database.directories.count)
        for (index, directory) in database.directories.enumerated() {
            #expect(table.withBytes(Int32(index)) { Array($0) } == Array(directory.path.utf8), "\(directory.path)")
        }
        #expect(database.directories.contains { $0.path == "Ωmega" })
        #expect(!table.mayHoldEscapes)
    }

    @Test func aBaseThatIsNeitherDirectoryNorSongIsNoSuchDirectory() {
        for base in ["nowhere", "a/nowhere", "a//x", "a/x//0002.mp3"] {
            let filter = SongFilter([.base(base)])
            #expect(throws: QueryError.noSuchDirectory) { try Self.referenceSelect(filter) }
            #expect(throws: QueryError.noSuchDirectory) { try Self.database.select(filter) }
            #expect(throws: QueryError.noSuchDirectory) { try Self.database.count(filter) }
            #expect(throws: QueryError.noSuchDirectory) { try Self.database.count(filter, groupedBy: .album) }
            #expect(throws: QueryError.noSuchDirectory) { try Self.database.list(.album, filter: filter) }
        }
    }

    /// The snapshot's folded values (what `search any` compares) are `FilterCaseFold`'s fold of each value.
    @Test func theFoldedValueTableFoldsEveryValue() {
        let values = Self.database.songs.values
        let table = Self.database.foldedValues()
        for number in 0..<Int32(values.count) {
            let expected = Array(FilterCaseFold.fold(values[number]).utf8)
            #expect(table.withFoldedBytes(number) { Array($0) } == expected, "\(values[number])")
        }
    }

    /// One scan of a folded index's bytes finds the values containing a needle as a search in each value does,
    /// with needles that also occur across the boundary of two stored values ("3t" in "title 3" "title 4").
    @Test func aFoldedIndexFindsTheValuesContainingANeedle() {
        let needles = [
            "a", "al", "ph", "e", "zen", "title 1", "", "straße", "strasse", "ka", "xyz", "é", "3t", "et", "ot",
            "e1", "7t", "ck", "kp", "title 96", "\u{301}",
        ]
        for type in [TagType.artist, .title, .album, .genre, .albumArtist, .date, .track] {
            let index = Self.database.foldedIndex(type)
            for needle in needles {
                let matcher = StringMatcher(needle, operation: .contains, foldCase: true)
                let expected = index.map { matcher.matchesIgnoringNegation(foldedBytes: $0) }
                var folded = FilterCaseFold.fold(needle)
                #expect(folded.withUTF8 { index.containing($0) } == expected, "\(type) \(needle)")
            }
        }
    }

    /// Each directory's subtree is the run of songs the planner takes for a base (the walk visits the same songs,
    /// in the same order).
    @Test func aDirectorysSubtreeIsOneRunOfSongs() throws {
        let database = Self.database
        for path in ["", "a", "a/x", "a/x/deep", "a/y", "b", "c d", "Ωmega"] {
            let directory = try #require(database.directory(at: path))
            var walked: [Int32] = []
            database.walk(from: directory, recursive: true) { walked.append($0) }
            let subtree = try #require(database.subtreeSongs(directory))
            #expect(Array(subtree) == walked, "\(path)")
        }
    }

    /// The ends found in one walk are those a walk of each subtree finds, also where songs are not numbered in walk
    /// order (then that subtree has none, and those around it still do) and for a directory no walk reaches.
    @Test func subtreeEndsAreThoseOfAWalkOfEachSubtree() {
        func directory(_ parent: Int32, _ children: [Int32], _ songs: Range<Int32>) -> Database.Directory {
            Database.Directory(
                path: "", modificationTime: 0, parent: parent, children: children, songs: songs, playlists: [],
                inode: 0, device: 0)
        }
        // 0 ─┬─ 1 ─┬─ 3
        //    │     └─ 4 (songs before 3's: 1's subtree is no run)
        //    └─ 2 (empty)
        // 5: reached by no walk.
        let directories = [
            directory(-1, [1, 2], 0..<2), directory(0, [3, 4], 2..<3), directory(0, [], 9..<9),
            directory(1, [], 5..<9), directory(1, [], 3..<5), directory(-1, [], 9..<10),
        ]
        func walked(_ index: Int32) -> Int32 {
            var next = directories[Int(index)].songs.lowerBound
            var pending = [index]
            while let directory = pending.popLast() {
                let songs = directories[Int(directory)].songs
                guard songs.lowerBound == next else { return -1 }
                next = songs.upperBound
                pending.append(contentsOf: directories[Int(directory)].children.reversed())
            }
            return next
        }
        let ends = QueryIndexes.computeSubtreeEnds(directories)
        #expect(ends == [-1, -1, 9, 9, 5, -1])
        #expect(ends.indices.dropLast().allSatisfy { ends[$0] == walked(Int32($0)) })
        let inOrder = [
            directory(-1, [1, 2], 0..<2), directory(0, [3, 4], 2..<3), directory(0, [], 9..<9),
            directory(1, [], 3..<5), directory(1, [], 5..<9),
        ]
        #expect(QueryIndexes.computeSubtreeEnds(inOrder) == [9, 9, 9, 5, 9])
        #expect(QueryIndexes.computeSubtreeEnds([]) == [])
    }

    @Test(arguments: Self.sorts)
    func sortAndWindowMatchTheReference(sort text: String) throws {
        let sort = try SortOrder.parse(text)
        for (command, arguments) in [
            ("find", ["(genre == 'Rock')"]), ("search", ["(title contains 'zen')"]), ("find", []),
            ("find", ["(base 'a')"]),
        ] {
            let filter = Self.parse(command, arguments)
            let expected = Self.referenceSort(try Self.referenceSelect(filter), sort)
            #expect(try Self.database.select(SongQuery(filter: filter, sort: sort)) == expected, "sort \(text)")
            for windowText in Self.windows {
                let window = try WindowRange.parse(windowText)
                let query = SongQuery(filter: filter, sort: sort, window: window)
                #expect(
                    try Self.database.select(query) == Self.kept(expected, window), "sort \(text) window \(windowText)")
            }
        }
    }

    @Test func aWindowWithoutSortKeepsWalkOrder() throws {
        let filter = Self.parse("search", ["(artist contains 'a')"])
        let expected = try Self.referenceSelect(filter)
        for text in Self.windows {
            let window = try WindowRange.parse(text)
            #expect(try Self.database.select(SongQuery(filter: filter, window: window)) == Self.kept(expected, window))
        }
    }

    /// What a window keeps of `songs`: START songs dropped, then at most END − START kept.
    static func kept(_ songs: [Int32], _ window: WindowRange) -> [Int32] {
        Array(songs.dropFirst(window.start).prefix(window.end.map { $0 - window.start } ?? Int.max))
    }

    @Test(arguments: Self.groups)
    func countGroupMatchesTheReference(group: TagType) throws {
        for (command, arguments) in [("find", []), ("find", ["(genre == 'Rock')"]), ("find", ["(base 'a')"])] {
            let filter = Self.parse(command, arguments)
            var counts: [[UInt8]: SongCount] = [:]
            for song in try Self.referenceSelect(filter) {
                for value in Self.groupValues(song, group) {
                    let milliseconds = Self.database.songs.durationMilliseconds(song) ?? 0
                    counts[Array(value.utf8), default: SongCount()].songs += 1
                    counts[Array(value.utf8), default: SongCount()].milliseconds += milliseconds
                }
            }
            let expected = counts.sorted { Self.bytesPrecede([$0.key], [$1.key]) }
            let actual = try Self.database.count(filter, groupedBy: group)
            #expect(actual.map { Array($0.value.utf8) } == expected.map(\.key), "count \(arguments) group \(group)")
            #expect(actual.map(\.count) == expected.map(\.value), "count \(arguments) group \(group)")
        }
    }

    @Test(arguments: Self.lists.indices)
    func listGroupMatchesTheReference(list index: Int) throws {
        let types = Self.lists[index]
        for (command, arguments) in [("find", []), ("find", ["(artist == 'Alpha')"]), ("search", ["(base 'a/x')"])] {
            let filter = Self.parse(command, arguments)
            // Every combination of each level's values, distinct, in byte order.
            var rows = Set<[[UInt8]]>()
            for song in try Self.referenceSelect(filter) {
                var combinations: [[[UInt8]]] = [[]]
                for type in types {
                    let values = Self.groupValues(song, type).map { Array($0.utf8) }
                    combinations = combinations.flatMap { prefix in values.map { prefix + [$0] } }
                }
                rows.formUnion(combinations)
            }
            var expected: [(depth: Int, value: [UInt8])] = []
            var previous: [[UInt8]]?
            for row in rows.sorted(by: Self.bytesPrecede) {
                // A level is printed when it or an outer one differs from the row before.
                let changedAt = previous.map { previous in zip(previous, row).prefix { $0 == $1 }.count } ?? 0
                for depth in changedAt..<row.count { expected.append((depth, row[depth])) }
                previous = row
            }
            let list = try Self.database.list(
                types[types.count - 1], groupedBy: Array(types.dropLast()), filter: filter)
            #expect(list.types == types)
            #expect(list.lines.map(\.depth) == expected.map(\.depth), "list \(types) \(arguments)")
            #expect(list.lines.map { Array($0.value.utf8) } == expected.map(\.value), "list \(types) \(arguments)")
        }
    }

    @Test(arguments: Self.lists.indices)
    func packedKeysGiveTheRowsOfTheTupleComparison(list index: Int) throws {
        let columns = Self.lists[index].map { Self.database.column($0) }
        let songs = try Self.database.select(Self.parse("find", []))
        // With no bits for a key, every list of two levels or more is compared tuple by tuple.
        let packed = Database.distinctRows(songs, columns)
        #expect(packed == Database.distinctRows(songs, columns, maxKeyBits: 0), "\(Self.lists[index])")
        #expect(packed.count % columns.count == 0)
    }

    /// The lists above take both ways to the rows: every column with one value per song (the songs' keys read by
    /// song), and some column with several.
    @Test func theGroupedListsHaveColumnsOfOneValueAndOfSeveral() {
        let grouped = Self.lists.filter { $0.count > 1 }.map { $0.map { Self.database.column($0).isSingleValued } }
        #expect(grouped.contains { $0.allSatisfy { $0 } })
        #expect(grouped.contains { !$0.allSatisfy { $0 } })
    }

    /// The songs of a bitmap, set bits or (flipped) clear ones, below a song count that ends mid-word or on a
    /// word's edge (bits past it set, and never read).
    @Test(arguments: [0, 1, 63, 64, 65, 130])
    func theSongsOfABitmapAreItsBitsBelowTheCount(songCount: Int) {
        var bits = [UInt64](repeating: 0, count: (songCount + 63) / 64)
        let set = (0..<songCount).filter { $0 % 3 == 0 || $0 % 7 == 5 }
        for song in set { bits[song / 64] |= 1 << UInt64(song % 64) }
        if songCount % 64 != 0 { bits[bits.count - 1] |= ~((1 << UInt64(songCount % 64)) - 1) }
        #expect(songsOfBits(bits, flipped: false, songCount: songCount) == set.map { Int32($0) })
        let clear = (0..<songCount).filter { !set.contains($0) }
        #expect(songsOfBits(bits, flipped: true, songCount: songCount) == clear.map { Int32($0) })
    }

    @Test func theRadixSortSortsKeysOfEveryWidth() {
        var generator = Generator(seed: 5)
        for bits in [1, 7, 11, 12, 22, 23, 33, 47, 63, 64] {
            for count in [0, 1, 2, 100, 5000] {
                var keys = (0..<count).map { _ in
                    let high = UInt64(generator.next(1 << 30)) << 34
                    let low = UInt64(generator.next(1 << 30)) << 4 | UInt64(generator.next(16))
                    return bits == 64 ? high | low : (high | low) & ((1 << UInt64(bits)) - 1)
                }
                // Runs of one key, as songs of one album give.
                if count > 10 { keys.replaceSubrange(0..<10, with: repeatElement(keys[10], count: 10)) }
                let expected = keys.sorted()
                Database.radixSort(&keys, bits: bits)
                #expect(keys == expected, "\(bits) bits, \(count) keys")
            }
        }
    }
}

/// A song's own values as a queued song shows them to a filter: no audio format.
private struct QueuedValues: FilterSubject {
    let uri: String
    let info: SongInfo
    let lastModified: Int64?

    var audioFormat: AudioFormat? { nil }

    func tagValues(_ type: TagType) -> [String] { self.info.tags.filter { $0.type == type }.map(\.value) }
}
