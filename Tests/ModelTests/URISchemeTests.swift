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
}
