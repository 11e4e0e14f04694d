// SPDX-License-Identifier: GPL-3.0-or-later

import Formats
import Model
import TestTools
import Testing

/// A mutagen script giving every frame `mpd` 0.23 maps, added in an order unlike `mpd`'s scan order.
let fullTagScript = """
    import mutagen.id3
    globals().update({name: getattr(mutagen.id3, name) for name in dir(mutagen.id3)})
    t = ID3()
    t.add(TXXX(encoding=3, desc="MusicBrainz Work Id", text=["work-id"]))
    t.add(UFID(owner="http://musicbrainz.org", data=b"ufid-track-id"))
    t.add(UFID(owner="http://example.org", data=b"not-mapped"))
    t.add(TPUB(encoding=3, text=["Label"]))
    t.add(TIT2(encoding=3, text=["  Title with spaces  "]))
    t.add(TPE1(encoding=3, text=["Artist A", "Artist B"]))
    t.add(TPE2(encoding=1, text=["Album Artist"]))
    t.add(TALB(encoding=0, text=["Alb\\xe9m"]))
    t.add(TRCK(encoding=3, text=["03/12"]))
    t.add(TPOS(encoding=3, text=["1/2"]))
    t.add(TCON(encoding=3, text=["(13)", "Rock"]))
    t.add(TDRC(encoding=3, text=["2019-05-04"]))
    t.add(TDOR(encoding=3, text=["1999"]))
    t.add(TSOP(encoding=3, text=["Sort Artist"]))
    t.add(TSOA(encoding=3, text=["Sort Album"]))
    t.add(TSO2(encoding=3, text=["Sort AA"]))
    t.add(TCOM(encoding=3, text=["Composer"]))
    t.add(TPE3(encoding=3, text=["Conductor"]))
    t.add(TPE4(encoding=3, text=["Remixer"]))
    t.add(TIT1(encoding=3, text=["Grouping"]))
    t.add(COMM(encoding=3, lang="eng", desc="", text=["A comment\\twith tab"]))
    t.add(TXXX(encoding=3, desc="MusicBrainz Album Id", text=["album-id"]))
    t.add(TXXX(encoding=3, desc="MusicBrainz Artist Id", text=["artist-id"]))
    t.add(TXXX(encoding=3, desc="ALBUMARTISTSORT", text=[" AAS "]))
    t.add(TXXX(encoding=3, desc="musicbrainz album id", text=["wrong case, not mapped"]))
    t.add(TXXX(encoding=3, desc="replaygain_track_gain", text=["-6.50 dB"]))
    t.add(TXXX(encoding=3, desc="REPLAYGAIN_ALBUM_PEAK", text=["0.988"]))
    t.save(PATH, v2_version=VERSION)
    """

/// One tagged file and the tag lines `mpd` 0.23.12 printed for it.
struct TagCase: CustomTestStringConvertible, Sendable {
    var name: String
    var expected: [String]
    var testDescription: String { self.name }
}

// Measured on mpd 0.23.12: `listallinfo` with `metadata_to_use` listing every tag (so Comment shows).
let tagCases: [TagCase] = [
    TagCase(
        name: "full_v24.mp3",
        expected: [
            "Artist: Artist A",
            "Artist: Artist B",
            "AlbumArtist: Album Artist",
            "ArtistSort: Sort Artist",
            "AlbumSort: Sort Album",
            "AlbumArtistSort: Sort AA",
            "Title: Title with spaces",
            "Album: Albém",
            "Track: 3",
            "Date: 2019-05-04",
            "OriginalDate: 1999",
            "Genre: (13)",
            "Genre: Rock",
            "Composer: Composer",
            "Conductor: Conductor",
            "Performer: Remixer",
            "Grouping: Grouping",
            "Comment: A comment with tab",
            "Disc: 1",
            "Label: Label",
            "AlbumArtistSort:  AAS ",
            "MUSICBRAINZ_WORKID: work-id",
            "MUSICBRAINZ_ALBUMID: album-id",
            "MUSICBRAINZ_ARTISTID: artist-id",
            "MUSICBRAINZ_TRACKID: ufid-track-id",
        ]),
    TagCase(
        name: "full_v23.mp3",
        expected: [
            "Artist: Artist A/Artist B",
            "AlbumArtist: Album Artist",
            "ArtistSort: Sort Artist",
            "AlbumSort: Sort Album",
            "AlbumArtistSort: Sort AA",
            "Title: Title with spaces",
            "Album: Albém",
            "Track: 3",
            "Date: 2019-05-04",
            "OriginalDate: 1999",
            "Genre: Pop",
            "Genre: /Rock",
            "Composer: Composer",
            "Conductor: Conductor",
            "Performer: Remixer",
            "Grouping: Grouping",
            "Comment: A comment with tab",
            "Disc: 1",
            "Label: Label",
            "AlbumArtistSort:  AAS ",
            "MUSICBRAINZ_WORKID: work-id",
            "MUSICBRAINZ_ALBUMID: album-id",
            "MUSICBRAINZ_ARTISTID: artist-id",
            "MUSICBRAINZ_TRACKID: ufid-track-id",
        ]),
    TagCase(
        name: "v1_only.mp3",
        expected: [
            "Artist: V1 Artist",
            "Title: V1 Title",
            "Album: V1 Album",
            "Track: 7",
            "Date: 2001",
            "Genre: Rock",
            "Comment: v1 comment",
        ]),
    TagCase(
        name: "v2_and_v1.mp3",
        expected: [
            "Title: V2 Title"
        ]),
    TagCase(
        name: "ape_wins.mp3",
        expected: [
            "Title: Ape Title",
            "Artist: A1",
            "Artist: A2",
            "AlbumArtist: AA",
            "Date: 2004",
            "Track: 5",
        ]),
    TagCase(
        name: "ape_unrecognized.mp3",
        expected: [
            "Title: ID3 used"
        ]),
    TagCase(
        name: "ape_then_v1.mp3",
        expected: [
            "Title: v1 wins"
        ]),
    TagCase(
        name: "footer_appended.mp3",
        expected: [
            "Title: v1 title"
        ]),
    TagCase(
        name: "cleanup.mp3",
        expected: [
            "Artist: X",
            "Title: ctrl char  end",
            "Genre: Rock",
            "Disc: 7",
        ]),
    TagCase(
        name: "seek_chain.mp3",
        expected: [
            "Title: from SEEK"
        ]),
]

/// Makes the fixture named by a tag case.
func makeTagFixture(_ name: String) throws -> String {
    let base = try Fixtures.lame("tagbase.mp3", rate: 44100, channels: 2, seconds: "1")
    let audio = try Fixtures.contents(base)
    switch name {
    case "full_v24.mp3", "full_v23.mp3":
        let version = name == "full_v24.mp3" ? "4" : "3"
        return try Fixtures.tagged(name, from: base, script: "VERSION = \(version)\n" + fullTagScript)
    case "v1_only.mp3":
        return try Fixtures.bytes(
            name,
            audio
                + TagBytes.id3v1(
                    title: "V1 Title", artist: "V1 Artist", album: "V1 Album", year: "2001",
                    comment: "v1 comment", track: 7, genre: 17))
    case "v2_and_v1.mp3":
        return try Fixtures.bytes(
            name,
            TagBytes.id3v24([TagBytes.textFrame("TIT2", ["V2 Title"])]) + audio
                + TagBytes.id3v1(title: "V1 Title", artist: "V1 Artist"))
    case "ape_wins.mp3":
        let ape = TagBytes.ape(
            [
                TagBytes.text("Title", "Ape Title"), (key: "Artist", value: Array("A1\0A2".utf8), flags: 0),
                TagBytes.text("Album Artist", "AA"), TagBytes.text("Year", "2004"), TagBytes.text("track", "05"),
                (key: "Cover Art (Front)", value: Array("x\0binary".utf8), flags: 2),
            ], header: true)
        return try Fixtures.bytes(name, TagBytes.id3v24([TagBytes.textFrame("TIT2", ["ID3 loses"])]) + audio + ape)
    case "ape_unrecognized.mp3":
        let ape = TagBytes.ape([TagBytes.text("REPLAYGAIN_TRACK_GAIN", "-3 dB"), TagBytes.text("Foo", "bar")])
        return try Fixtures.bytes(name, TagBytes.id3v24([TagBytes.textFrame("TIT2", ["ID3 used"])]) + audio + ape)
    case "ape_then_v1.mp3":
        return try Fixtures.bytes(
            name, audio + TagBytes.ape([TagBytes.text("Title", "hidden")]) + TagBytes.id3v1(title: "v1 wins"))
    case "footer_appended.mp3":
        return try Fixtures.bytes(
            name,
            audio + TagBytes.id3v24([TagBytes.textFrame("TIT2", ["appended"])], footer: true)
                + TagBytes.id3v1(title: "v1 title"))
    case "cleanup.mp3":
        return try Fixtures.bytes(
            name,
            TagBytes.id3v24([
                TagBytes.textFrame("TRCK", ["0"]), TagBytes.textFrame("TPOS", ["007b"]),
                TagBytes.textFrame("TIT2", ["ctrl\u{01}char\u{1f} end", "   "]),
                TagBytes.textFrame("TPE1", ["", "X"]), TagBytes.textFrame("TCON", ["17"]),
            ]) + audio)
    case "seek_chain.mp3":
        // A first tag whose SEEK frame points at a second tag placed after 100 bytes of padding.
        let second = TagBytes.id3v24([TagBytes.textFrame("TIT2", ["from SEEK"])])
        let seekFrame = Array("SEEK".utf8) + TagBytes.syncsafe(4) + [0, 0, 0, 0, 0, 100]
        let first = TagBytes.id3v24([TagBytes.textFrame("TIT2", ["first"]), seekFrame])
        return try Fixtures.bytes(name, first + [UInt8](repeating: 0, count: 100) + second + audio)
    default:
        throw ToolError(description: "unknown fixture \(name)")
    }
}

@Suite struct MP3TagTests {
    @Test(arguments: tagCases)
    func tagsMatchMPD(_ tagCase: TagCase) throws {
        let path = try makeTagFixture(tagCase.name)
        let info = try MP3Format().readInfo(path: path)
        #expect(info.tags.map { "\($0.type.name): \($0.value)" } == tagCase.expected)
    }

    /// The decoder reports its leading ID3v2 tag's ReplayGain (as `mpd`'s mad plugin submits it); an APE tag's is
    /// the registry's APE read (what `mpd`'s decoder thread reads while ReplayGain is on).
    @Test func decoderReportsTheID3TagsReplayGainAndTheAPEReadTheAPETags() throws {
        let id3 = try makeTagFixture("full_v24.mp3")
        let gain = try MP3Format().makeDecoder(path: id3).replayGain
        // Parsed as `strtof` parses them: in float.
        #expect(gain?.trackGain == -6.5 && gain?.albumPeak.map(Float.init) == 0.988 && gain?.albumGain == nil)
        #expect(FormatRegistry.standard.readAPEReplayGain(path: id3) == nil)
        let ape = try makeTagFixture("ape_unrecognized.mp3")
        #expect(try MP3Format().makeDecoder(path: ape).replayGain == nil)
        #expect(FormatRegistry.standard.readAPEReplayGain(path: ape) == ReplayGainInfo(trackGain: -3))
    }
}
