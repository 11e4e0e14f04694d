// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Testing

@Suite struct URISchemeTests {
    @Test(arguments: [
        ("http://host/a#frag", true), ("a/b.mp3", false), ("://x", false), ("Foo+1.x://y", true),
        ("dir/with: colon.mp3", false), ("", false), (":/", false), ("a:/b://c", true), ("/music/x.mp3", false),
    ])
    func scheme(uri: String, expected: Bool) {
        #expect(URIScheme.hasScheme(uri) == expected)
    }

    @Test func schemeEndIsTheFirstSeparatorsByteOffset() {
        #expect(URIScheme.schemeEnd("http://h/x://y") == 4)
        #expect(URIScheme.schemeEnd("://x") == 0)
        #expect(URIScheme.schemeEnd("é://x") == 2)
        #expect(URIScheme.schemeEnd("a:/b://c") == 4)
        #expect(URIScheme.schemeEnd("no scheme") == nil)
    }

    @Test(arguments: [
        ("SMB://host/share", "smb://", true), ("smb://", "smb://", true), ("smb:/", "smb://", false),
        ("HtTpS://x", "https://", true), ("http://x", "https://", false), ("ÉMB://x", "emb://", false),
        ("[PlayList]", "[playlist]", true), ("file:///music", "file://", true), ("", "smb://", false),
    ])
    func prefixIgnoringCase(text: String, prefix: String, expected: Bool) {
        #expect(URIScheme.hasPrefixIgnoringCase(text.utf8, prefix) == expected)
    }

    @Test func onlyAsciiLettersFold() {
        #expect(URIScheme.lowercased(UInt8(ascii: "Q")) == UInt8(ascii: "q"))
        #expect(URIScheme.lowercased(UInt8(ascii: "@")) == UInt8(ascii: "@"))
        #expect(URIScheme.lowercased(UInt8(ascii: "[")) == UInt8(ascii: "["))
        #expect(URIScheme.lowercased(0xC9) == 0xC9)
    }
}
