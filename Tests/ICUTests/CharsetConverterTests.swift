// SPDX-License-Identifier: GPL-3.0-or-later

import ICU
import Testing

@Suite struct CharsetConverterTests {
    @Test func legacyCharsetsBecomeUTF8() throws {
        let latin1 = try #require(CharsetConverter(charset: "ISO-8859-1"))
        #expect(latin1.utf8([0x43, 0x61, 0x66, 0xE9]) == Array("Café".utf8))
        #expect(latin1.utf8([]) == [])
        let cyrillic = try #require(CharsetConverter(charset: "windows-1251"))
        #expect(cyrillic.utf8([0xCF, 0xF0, 0xE8]) == Array("При".utf8))
        let japanese = try #require(CharsetConverter(charset: "Shift_JIS"))
        #expect(japanese.utf8([0x93, 0xFA, 0x96, 0x7B]) == Array("日本".utf8))
        // Bytes the charset does not map become U+FFFD.
        let ascii = try #require(CharsetConverter(charset: "US-ASCII"))
        #expect(ascii.utf8([0x41, 0xFF]) == Array("A\u{FFFD}".utf8))
    }

    @Test func unknownCharsetsAreRefused() {
        #expect(CharsetConverter(charset: "no-such-charset") == nil)
    }
}
