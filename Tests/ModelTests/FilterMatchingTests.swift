// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import PCRE
import Testing

/// A song for matching tests, using the default (fold-on-demand) folded values.
private struct Song: FilterSubject {
    var uri = "dir/song.mp3"
    var tags: [TagItem] = []
    var lastModified: Int64? = 1_600_000_000
    var audioFormat: AudioFormat? = AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2)

    init(_ tags: [TagItem] = [], uri: String = "dir/song.mp3") {
        self.tags = tags
        self.uri = uri
    }

    func tagValues(_ type: TagType) -> [String] { self.tags.filter { $0.type == type }.map(\.value) }
}

/// The same song, but handing out pre-folded values as a library index would.
private struct IndexedSong: FilterSubject {
    let song: Song
    var uri: String { self.song.uri }
    var foldedURI: FoldedText { FoldedText(folding: self.song.uri) }
    var lastModified: Int64? { self.song.lastModified }
    var audioFormat: AudioFormat? { self.song.audioFormat }
    func tagValues(_ type: TagType) -> [String] { self.song.tagValues(type) }
    func foldedTagValues(_ type: TagType) -> [FoldedText] { self.song.tagValues(type).map(FoldedText.init(folding:)) }
}

private func tag(_ type: TagType, _ op: StringMatcher.Operation, _ value: String, fold: Bool = false, not: Bool = false)
    -> FilterItem
{
    .tag(type, StringMatcher(value, operation: op, foldCase: fold, negated: not))
}

struct FilterMatchingTests {
    private let artistOnly = Song([TagItem(.artist, "Gamma")])
    private let withAlbumArtist = Song([TagItem(.artist, "beta"), TagItem(.albumArtist, "Gamma")])
    private let untagged = Song()

    /// The byte path (a value of the library's value table, no `String`) answers as the `String` path: bytes are
    /// compared, so canonically equivalent but byte-distinct text differs, as in mpd.
    @Test func aCaseSensitiveMatcherAnswersTheSameOnBytes() throws {
        let matchers = [
            StringMatcher("Café", operation: .equals, foldCase: false, negated: false),
            StringMatcher("af", operation: .contains, foldCase: false, negated: true),
            StringMatcher("", operation: .contains, foldCase: false, negated: false),
            try StringMatcher(regex: "^C.f", foldCase: false, using: RegularExpression.self),
        ]
        let haystacks = ["Café", "Cafe\u{301}", "cafe", "", "A café", "Caf\u{E9}s"]
        for matcher in matchers {
            for haystack in haystacks {
                var text = haystack
                let onBytes = text.withUTF8 { matcher.matchesIgnoringNegation(bytes: $0) }
                #expect(onBytes == matcher.matchesIgnoringNegation(haystack), "\(matcher.operatorText) \(haystack)")
            }
        }
        let composed = StringMatcher("Caf\u{E9}", operation: .equals, foldCase: false, negated: false)
        var decomposed = "Cafe\u{301}"
        #expect(!decomposed.withUTF8 { composed.matchesIgnoringNegation(bytes: $0) })
    }

    @Test func albumArtistFallsBackToArtist() {
        #expect(tag(.albumArtist, .equals, "Gamma").matches(self.artistOnly))
        #expect(tag(.albumArtist, .equals, "Gamma").matches(self.withAlbumArtist))
        #expect(!tag(.albumArtist, .equals, "beta").matches(self.withAlbumArtist))
        #expect(tag(.artistSort, .equals, "Gamma").matches(self.artistOnly))
        #expect(tag(.albumArtistSort, .equals, "Gamma").matches(self.artistOnly))
        #expect(tag(.albumSort, .equals, "One").matches(Song([TagItem(.album, "One")])))
        #expect(!tag(.album, .equals, "One").matches(Song([TagItem(.albumSort, "One")])))
        #expect(!tag(.composerSort, .equals, "C").matches(Song([TagItem(.composer, "C")])))
    }

    /// AlbumArtistSort → AlbumArtist → Artist; ArtistSort itself is not consulted, and the first present fallback
    /// decides.
    @Test func albumArtistSortChain() {
        let song = Song([TagItem(.artist, "A"), TagItem(.artistSort, "AS"), TagItem(.albumArtist, "AA")])
        #expect(tag(.albumArtistSort, .equals, "AA").matches(song))
        #expect(!tag(.albumArtistSort, .equals, "A").matches(song))
        #expect(!tag(.albumArtistSort, .equals, "AS").matches(song))
        #expect(tag(.albumArtistSort, .equals, "A").matches(Song([TagItem(.artist, "A"), TagItem(.artistSort, "AS")])))
    }

    @Test func emptyValueMatchesAnAbsentTagAndItsFallbacks() throws {
        #expect(tag(.genre, .equals, "").matches(self.untagged))
        #expect(!tag(.genre, .equals, "", not: true).matches(self.untagged))
        #expect(!tag(.albumArtist, .equals, "").matches(self.artistOnly))
        #expect(tag(.albumArtist, .equals, "").matches(self.untagged))
        #expect(
            try FilterItem.tag(.genre, StringMatcher(regex: "", foldCase: false, using: RegularExpression.self))
                .matches(self.untagged))
        #expect(
            try !FilterItem.tag(
                .genre, StringMatcher(regex: "", foldCase: false, negated: true, using: RegularExpression.self)
            ).matches(self.untagged)
        )
        #expect(tag(.genre, .contains, "").matches(self.untagged))
        #expect(!tag(.genre, .contains, "", not: true).matches(self.untagged))
    }

    @Test func negationOfAnAbsentTagMatches() {
        #expect(tag(.artist, .equals, "X", not: true).matches(self.untagged))
        #expect(!FilterItem.not(tag(.artist, .equals, "")).matches(self.untagged))
    }

    @Test func multiValuedTags() {
        let song = Song([TagItem(.artist, "P1"), TagItem(.artist, "P2")])
        #expect(tag(.artist, .equals, "P2").matches(song))
        #expect(!tag(.artist, .equals, "P2", not: true).matches(song))
        #expect(tag(.artist, .equals, "P3", not: true).matches(song))
    }

    @Test func anyLooksAtEveryTagButNotTheURI() {
        let song = Song([TagItem(.composer, "Bach")], uri: "Mozart.mp3")
        #expect(FilterItem.anyTag(StringMatcher("Bach", operation: .equals, foldCase: false)).matches(song))
        #expect(!FilterItem.anyTag(StringMatcher("Mozart", operation: .contains, foldCase: false)).matches(song))
        #expect(!FilterItem.anyTag(StringMatcher("", operation: .equals, foldCase: false)).matches(self.untagged))
        #expect(FilterItem.anyTag(StringMatcher("", operation: .equals, foldCase: false, negated: true)).matches(song))
    }

    @Test(arguments: [
        ("a", "a/b.mp3", true), ("a", "a", true), ("a", "ab/c.mp3", false), ("a/", "a/b.mp3", true),
        ("", "x.mp3", true), ("d e", "d e/sub/f.mp3", true), ("a/b.mp3", "a/b.mp3", true), ("a/b", "a/bc", false),
    ])
    func base(directory: String, uri: String, matches: Bool) {
        #expect(FilterItem.base(directory).matches(Song(uri: uri)) == matches)
    }

    @Test func fileComparesTheWholeURI() {
        let song = Song(uri: "Dir/Song.mp3")
        #expect(FilterItem.uri(StringMatcher("Dir/Song.mp3", operation: .equals, foldCase: false)).matches(song))
        #expect(!FilterItem.uri(StringMatcher("dir/song.mp3", operation: .equals, foldCase: false)).matches(song))
        #expect(FilterItem.uri(StringMatcher("dir/song.MP3", operation: .equals, foldCase: true)).matches(song))
        #expect(FilterItem.uri(StringMatcher("r/S", operation: .contains, foldCase: false)).matches(song))
    }

    @Test func modifiedSinceWrapsLikeMPDsNanoseconds() {
        var song = self.untagged
        song.lastModified = 1_600_000_000
        #expect(FilterItem.modifiedSince(1_600_000_000).matches(song))
        #expect(!FilterItem.modifiedSince(1_600_000_001).matches(song))
        // 2262-04-12 overflows 64-bit nanoseconds and wraps negative in mpd: everything matches.
        #expect(FilterItem.modifiedSince(9_223_372_800).matches(song))
        #expect(!FilterItem.modifiedSince(9_223_372_036).matches(song))
        song.lastModified = nil
        #expect(!FilterItem.modifiedSince(0).matches(song))
    }

    @Test func audioFormatMasks() {
        var song = self.untagged
        let exact = AudioFormatMask(AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2))
        #expect(FilterItem.audioFormat(exact).matches(song))
        #expect(
            FilterItem.audioFormat(AudioFormatMask(sampleRate: nil, sampleFormat: .s24, channels: nil)).matches(song))
        #expect(!FilterItem.audioFormat(AudioFormatMask(sampleRate: nil, sampleFormat: nil, channels: 1)).matches(song))
        song.audioFormat = nil
        #expect(
            !FilterItem.audioFormat(AudioFormatMask(sampleRate: nil, sampleFormat: nil, channels: nil)).matches(song))
        #expect(exact.description == "44100:24:2")
        #expect(AudioFormatMask(sampleRate: 352_800, sampleFormat: .dsd, channels: nil).description == "dsd64:*")
        #expect(AudioFormatMask(sampleRate: nil, sampleFormat: .float, channels: 2).description == "*:f:2")
    }

    @Test func regexIsUnanchoredAndCaselessOnlyWhenFolding() throws {
        let song = Song([TagItem(.title, "Straße")])
        #expect(
            try FilterItem.tag(.title, StringMatcher(regex: "raß", foldCase: false, using: RegularExpression.self))
                .matches(song))
        #expect(
            try !FilterItem.tag(.title, StringMatcher(regex: "STRA", foldCase: false, using: RegularExpression.self))
                .matches(song))
        #expect(
            try FilterItem.tag(.title, StringMatcher(regex: "STRA", foldCase: true, using: RegularExpression.self))
                .matches(song))
        #expect(
            try !FilterItem.tag(.title, StringMatcher(regex: "STRASSE", foldCase: true, using: RegularExpression.self))
                .matches(song))
    }

    @Test func foldedComparisonsUseFullFoldingWithMPDsQuirk() {
        let song = Song([TagItem(.title, "Straße"), TagItem(.artist, "ß")])
        #expect(tag(.title, .contains, "SS", fold: true).matches(song))
        #expect(tag(.title, .equals, "STRASSE", fold: true).matches(song))
        #expect(!tag(.title, .contains, "ß", fold: true).matches(song))
        #expect(tag(.artist, .equals, "ß", fold: true).matches(song))
        #expect(!tag(.artist, .equals, "ss", fold: true).matches(song))
        #expect(!tag(.title, .equals, "stras", fold: true).matches(song))
    }

    @Test func preFoldedIndexGivesTheSameResults() throws {
        let songs = [
            Song([TagItem(.title, "Straße"), TagItem(.artist, "İstanbul")], uri: "A/B.mp3"), self.artistOnly,
            self.untagged, Song([TagItem(.albumArtist, "ΣΊΣΥΦΟΣ")]),
        ]
        let items: [FilterItem] = [
            tag(.title, .contains, "SS", fold: true), tag(.artist, .equals, "i\u{307}stanbul", fold: true),
            tag(.albumArtist, .contains, "gam", fold: true), tag(.albumArtist, .equals, "σίσυφος", fold: true),
            tag(.genre, .equals, "", fold: true), tag(.artist, .contains, "x", fold: true, not: true),
            .anyTag(StringMatcher("GAMMA", operation: .equals, foldCase: true)),
            .uri(StringMatcher("a/b", operation: .contains, foldCase: true)),
            try .tag(.title, StringMatcher(regex: "^s", foldCase: true, using: RegularExpression.self)),
        ]
        for song in songs {
            for item in items { #expect(item.matches(song) == item.matches(IndexedSong(song: song))) }
        }
    }

    @Test func comparisonsAreByteWise() {
        let song = Song([TagItem(.title, "e\u{301}")])
        #expect(!tag(.title, .equals, "é").matches(song))
        #expect(tag(.title, .contains, "e").matches(song))
        #expect(!tag(.title, .contains, "é").matches(Song([TagItem(.title, "e\u{301}x")])))
    }

    @Test func songFilterFlattensAndFoldsNegation() {
        let filter = SongFilter([
            .and([.base("a"), .and([tag(.artist, .equals, "A")])]),
            .not(tag(.title, .equals, "T")),
            .not(.base("b")),
        ])
        #expect(filter.items.count == 4)
        #expect(filter.base == "a")
        #expect(filter.hasOtherThanBase)
        if case .tag(.title, let matcher) = filter.items[2] { #expect(matcher.negated) } else { Issue.record() }
        if case .not(.base("b")) = filter.items[3] {} else { Issue.record("NOT(base) stays a NOT") }
        #expect(SongFilter().matches(self.untagged))
        #expect(SongFilter([.base("x")]).base == "x")
        #expect(!SongFilter([.base("x")]).hasOtherThanBase)
        #expect(!SongFilter([.never]).matches(self.untagged))
    }

    @Test func fallbackTable() {
        #expect(TagType.albumArtistSort.fallbackTags == [.albumArtist, .artist])
        #expect(TagType.albumArtist.fallbackTags == [.artist])
        #expect(TagType.artistSort.fallbackTags == [.artist])
        #expect(TagType.albumSort.fallbackTags == [.album])
        #expect(TagType.composerSort.fallbackTags.isEmpty)
        #expect(TagType.title.fallbackTags.isEmpty)
    }
}
