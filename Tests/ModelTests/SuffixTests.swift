// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Testing

@Suite struct SuffixTests {
    @Test func ofAPathIsAfterTheLastDotOfTheLastComponent() {
        #expect(Suffix.ofPath("a/b.c/d.e.MP3") == "MP3")
        #expect(Suffix.ofPath("a/.hidden") == nil)
        #expect(Suffix.ofPath("a.b/noext") == nil)
        #expect(Suffix.ofPath("a/b.") == "")
        #expect(Suffix.ofPath("song.flac?x") == "flac?x")
    }

    @Test func ofAPathLooksAtBytesAsMPDDoes() {
        // A combining mark after the "/" or the "." joins it in one Character, but mpd looks for the bytes.
        #expect(Suffix.ofPath("a.b/\u{301}noext") == nil)
        #expect(Suffix.ofPath("a/b.\u{301}mp3") == "\u{301}mp3")
    }

    /// A `String` is read in place; any other string type through its view: the same suffixes.
    @Test func ofAPathIsTheSameForAStringAndASubstring() {
        for path in [
            "a/b.c/d.e.MP3", "a/.hidden", "a.b/noext", "a/b.", "", ".", "x", "a.b/\u{301}noext", "a/b.\u{301}mp3",
        ] {
            let fromString = Suffix.ofPath(path).map(String.init)
            let fromSubstring = Suffix.ofPath(Substring("/" + path).dropFirst()).map(String.init)
            #expect(fromString == fromSubstring, "\(path)")
        }
    }

    @Test func ofAURIIgnoresTheQueryAsUriGetSuffix() {
        #expect(Suffix.ofURI("http://h/a.b/list.pls?q=x.y#f") == "pls")
        #expect(Suffix.ofURI("http://h/a.b/list") == nil)
        #expect(Suffix.ofURI("http://h/a.b/list?x.pls") == nil)
        // mpd cuts only the query: a fragment stays in the suffix.
        #expect(Suffix.ofURI("http://h/radio.ogg#t") == "ogg#t")
        #expect(Suffix.ofURI("dir/.hidden") == nil)
        #expect(Suffix.ofURI("dir\\.hidden") == nil)
        #expect(Suffix.ofURI("a.b\\noext") == nil)
        #expect(Suffix.ofURI(".mp3") == nil)
        #expect(Suffix.ofURI("x.") == "")
        #expect(Suffix.ofURI("a/b.\u{301}mp3") == "\u{301}mp3")
    }
}
