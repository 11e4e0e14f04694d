// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import RawText
import Testing

@testable import Playlists

/// Parses `text` as a file with `suffix`.
private func parse(_ text: String, _ suffix: String) throws -> [PlaylistEntry] {
    try PlaylistRegistry.standard.entries(Array(text.utf8), suffix: suffix)
}

@Suite struct RegistryTests {
    @Test func pluginsInMPDsOrder() {
        #expect(PlaylistRegistry.catalogue.map(\.name) == ["extm3u", "m3u", "pls", "xspf", "asx", "rss", "cue"])
    }

    @Test(arguments: [
        ("m3u", true), ("M3U8", true), ("pls", true), ("Xspf", true), ("asx", true), ("rss", true),
        ("cue", true), ("flac", false), ("txt", false),
    ])
    func suffixes(suffix: String, supported: Bool) {
        #expect(PlaylistRegistry.standard.supports(suffix: suffix) == supported)
    }

    @Test func mimeTypeWithParameters() throws {
        let entries = try PlaylistRegistry.standard.entries(
            Array("a.mp3\n".utf8), mimeType: "audio/x-mpegurl; charset=x")
        #expect(entries.map(\.uri) == ["a.mp3"])
    }

    @Test func onlyCueSheetsAreDirectories() throws {
        #expect(PlaylistRegistry.standard.listsAsDirectory(suffix: "cue"))
        #expect(PlaylistRegistry.standard.listsAsDirectory(suffix: "CUE"))
        for suffix in ["m3u", "pls", "xspf", "flac", "txt"] {
            #expect(!PlaylistRegistry.standard.listsAsDirectory(suffix: suffix))
        }
        let sheet =
            "FILE \"a.flac\" WAVE\n  TRACK 01 AUDIO\n    INDEX 01 00:00:00\n  TRACK 02 AUDIO\n    INDEX 01 00:01:00\n"
        let entries = try #require(try PlaylistRegistry.standard.directoryEntries(Array(sheet.utf8), suffix: "cue"))
        #expect(entries.map(\.uri) == ["a.flac", "a.flac"])
        #expect(entries.map(\.startMilliseconds) == [0, 1000])
        #expect(entries.map(\.endMilliseconds) == [1000, 0])
        #expect(try PlaylistRegistry.standard.directoryEntries([], suffix: "txt") == nil)
    }

    @Test func unrecognisedIsAnError() {
        #expect(throws: PlaylistParseError.self) { try parse("File1=a\n", "pls") }
        #expect(throws: PlaylistParseError.self) { try parse("<playlist>", "xspf") }
    }
}

@Suite struct M3uTests {
    @Test func plainLinesStrippedCommentsSkipped() throws {
        let entries = try parse("  #c\n\t a.mp3 \r\n\n#EXTINF:10,x\nb.mp3", "m3u")
        #expect(entries == [PlaylistEntry(uri: "a.mp3"), PlaylistEntry(uri: "b.mp3")])
    }

    @Test func extinfGivesNameAndDuration() throws {
        let text =
            "#EXTM3U \r\n#EXTINF:123, Some Name \n a.mp3\nb.mp3\n#EXTINF:-1,\nc.mp3\n#EXTINF:0,x\nd.mp3\n#EXTINF:x\ne"
        let entries = try parse(text, "m3u8")
        #expect(
            entries == [
                PlaylistEntry(uri: "a.mp3", tags: [TagItem(.name, "Some Name")], durationMilliseconds: 123_000),
                PlaylistEntry(uri: "b.mp3"), PlaylistEntry(uri: "c.mp3"),
                PlaylistEntry(uri: "d.mp3", tags: [TagItem(.name, "x")], durationMilliseconds: 0),
                PlaylistEntry(uri: "e"),
            ])
    }

    @Test func longLinesAreCutEvery4095Bytes() throws {
        let long = String(repeating: "a", count: 5000)
        let entries = try parse(long + "\nb\n", "m3u")
        #expect(entries.map(\.uri.count) == [4095, 905, 1])
    }

    @Test func nulEndsALineAndOtherBytesAreKept() throws {
        let entries = try PlaylistRegistry.standard.entries([0x61, 0, 0x62, 0x0A, 0xFF, 0x0A], suffix: "m3u")
        #expect(entries.map(\.uri) == ["a", RawText.decode([0xFF])])
    }
}

@Suite struct PlsTests {
    @Test func entriesByNumberWithTitlesAndLengths() throws {
        let text =
            "junk\n[Playlist]\nnumberofentries=3\nFile2 = b.mp3\nfile1=a.mp3\nTitle1=A\nLength1=61\nLength2=-1\n; c\n[other]\nFile3=x"
        #expect(
            try parse(text, "pls") == [
                PlaylistEntry(uri: "a.mp3", tags: [TagItem(.title, "A")], durationMilliseconds: 61_000),
                PlaylistEntry(uri: "b.mp3"), PlaylistEntry(uri: ""),
            ])
    }

    @Test func zeroEntriesIsEmptyAndNoCountIsNoPlaylist() throws {
        #expect(try parse("[playlist]\nNumberOfEntries=0\nFile1=a", "pls").isEmpty)
        #expect(throws: PlaylistParseError.self) { try parse("[playlist]\nFile1=a", "pls") }
    }

    @Test func aLaterCountTruncates() throws {
        #expect(try parse("[playlist]\nFile1=a\nFile2=b\nNumberOfEntries=1\n", "pls").map(\.uri) == ["a"])
    }
}

@Suite struct XMLPluginTests {
    @Test func xspfTagsAfterTheLocationOnly() throws {
        let text = """
            <?xml version="1.0"?><playlist><trackList>
            <track><title>Early</title><location>a.mp3</location><title>A</title><creator>Me</creator>\
            <trackNum>01</trackNum><annotation>c</annotation></track>
            <track><title>none</title></track>
            <track><location>http://h/x</location></track>
            </trackList></playlist>
            """
        #expect(
            try parse(text, "xspf") == [
                PlaylistEntry(
                    uri: "a.mp3",
                    tags: [TagItem(.title, "A"), TagItem(.artist, "Me"), TagItem(.track, "01"), TagItem(.comment, "c")]),
                PlaylistEntry(uri: "http://h/x"),
            ])
    }

    @Test func asxRefsAndCaseInsensitiveNames() throws {
        let text = "<ASX><Entry><TITLE>T</TITLE><Ref HREF=\"a.mp3\"/><author>W</author></Entry><entry/></ASX>"
        #expect(
            try parse(text, "asx") == [
                PlaylistEntry(uri: "a.mp3", tags: [TagItem(.title, "T"), TagItem(.artist, "W")])
            ])
    }

    @Test func rssEnclosuresWithTextPieces() throws {
        let text =
            "<rss><channel><title>C</title><item><title>A &amp; B</title><enclosure url=\"u.mp3\"/></item></channel></rss>"
        #expect(
            try parse(text, "rss") == [
                PlaylistEntry(uri: "u.mp3", tags: [TagItem(.title, "A "), TagItem(.title, "&"), TagItem(.title, " B")])
            ])
    }

    @Test func malformedXMLThrows() {
        #expect(throws: PlaylistParseError.self) { try parse("<playlist><trackList></playlist>", "xspf") }
    }
}

@Suite struct CueTests {
    @Test func tracksWithRangesAndTags() throws {
        let text = """
            REM DATE 1999
            PERFORMER "The Band"
            TITLE "The Album"
            FILE "album.flac" WAVE
              TRACK 01 AUDIO
                TITLE "One"
                INDEX 01 00:00:00
              TRACK 02 AUDIO
                TITLE "Two"
                PERFORMER Solo
                INDEX 00 01:00:00
                INDEX 01 01:02:37
              TRACK 03 DATA
                INDEX 01 02:00:00
            """
        let entries = try parse(text, "cue")
        #expect(
            entries == [
                PlaylistEntry(
                    uri: "album.flac",
                    tags: [
                        TagItem(.date, "1999"), TagItem(.albumArtist, "The Band"), TagItem(.album, "The Album"),
                        TagItem(.track, "01"), TagItem(.title, "One"),
                    ], startMilliseconds: 0, endMilliseconds: 62_493),
                PlaylistEntry(
                    uri: "album.flac",
                    tags: [
                        TagItem(.date, "1999"), TagItem(.albumArtist, "The Band"), TagItem(.album, "The Album"),
                        TagItem(.track, "02"), TagItem(.title, "Two"), TagItem(.artist, "Solo"),
                    ], startMilliseconds: 62_493),
            ])
    }

    @Test func ignoredFileTypesAndUnterminatedQuotes() throws {
        let text =
            "FILE \"a.bin\" BINARY\nTRACK 01 AUDIO\nINDEX 01 00:00:00\nFILE \"b.wav WAVE\nFILE b.wav MP3\nTRACK 1 AUDIO\nTITLE \"x y"
        #expect(
            try parse(text, "cue") == [
                PlaylistEntry(uri: "b.wav", tags: [TagItem(.track, "1"), TagItem(.title, "x y")])
            ])
    }

    @Test(
        arguments: [("00:00:00", 0), ("01:02:75", 63_000), ("1:2", nil), ("a:00:00", nil), ("00:00:00x", nil)]
            as [(String, Int32?)])
    func positions(text: String, expected: Int32?) {
        #expect(CueParser.position(Array(text.utf8)[...]) == expected)
    }
}

@Suite struct EmbeddedCueTests {
    @Test func tracksNameTheFileItself() {
        let pairs = [
            (name: "TITLE", value: "x"),
            (
                name: "CueSheet",
                value:
                    "FILE \"other.wav\" WAVE\r\nTRACK 01 AUDIO\r\nINDEX 01 00:00:00\rTRACK 02 AUDIO\nINDEX 01 00:01:00"
            ),
        ]
        let sheet = EmbeddedCuePlaylistPlugin.cuesheet(in: pairs)
        #expect(sheet != nil)
        let entries = EmbeddedCuePlaylistPlugin.entries(cuesheet: sheet ?? "", fileName: "album.flac")
        #expect(
            entries == [
                PlaylistEntry(uri: "album.flac", tags: [TagItem(.track, "01")], endMilliseconds: 1000),
                PlaylistEntry(uri: "album.flac", tags: [TagItem(.track, "02")], startMilliseconds: 1000),
            ])
        #expect(
            EmbeddedCuePlaylistPlugin.supports(suffix: "FLAC") && !EmbeddedCuePlaylistPlugin.supports(suffix: "cue"))
    }
}
