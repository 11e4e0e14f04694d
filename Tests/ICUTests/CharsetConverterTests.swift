// SPDX-License-Identifier: GPL-3.0-or-later

import ICU
import Model
import Posix
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

@Suite struct CharsetConverterFromUTF8Tests {
    @Test func utf8BecomesTheCharset() throws {
        let latin1 = try #require(CharsetConverter(charset: "ISO-8859-1"))
        let expected: [UInt8] = [0x43, 0x61, 0x66, 0xE9, 0x2F, 0x6E, 0x61, 0xEF] + Array("ve.mp3".utf8)
        #expect(latin1.bytes("Café/naïve.mp3") == expected)
        #expect(latin1.bytes("") == [])
        // What the charset cannot hold becomes its substitution character, as mpd's FromUTF8 gives it.
        #expect(latin1.bytes("a日b") == [0x61, 0x1A, 0x62])
        let japanese = try #require(CharsetConverter(charset: "Shift_JIS"))
        #expect(japanese.bytes("日本") == [0x93, 0xFA, 0x96, 0x7B])
        // Stateful encodings end in their initial state.
        let jis = try #require(CharsetConverter(charset: "ISO-2022-JP"))
        let encoded = try #require(jis.bytes("日本"))
        #expect(jis.utf8(encoded) == Array("日本".utf8))
        #expect(encoded.suffix(3) == [0x1B, 0x28, 0x42])
    }

    @Test func longNamesFit() throws {
        let latin1 = try #require(CharsetConverter(charset: "ISO-8859-1"))
        let name = String(repeating: "é", count: 3000)
        #expect(latin1.bytes(name) == [UInt8](repeating: 0xE9, count: 3000))
    }

    @Test func unknownCharsetsGiveMPDsMessage() {
        #expect(throws: CharsetConverterError.self) { try CharsetConverter(opening: "BOGUS-CS") }
        do {
            _ = try CharsetConverter(opening: "BOGUS-CS")
        } catch {
            #expect(error.message == "Failed to initialize charset 'BOGUS-CS': U_FILE_ACCESS_ERROR")
        }
    }

    @Test func fileNamesRoundTripThroughTheSharedConverter() throws {
        let charset = try FileNameCharset("ISO-8859-1")
        #expect(charset.name == "ISO-8859-1")
        #expect(charset.utf8([0x63, 0x61, 0x66, 0xE9]) == "café")
        #expect(charset.bytes("café") == [0x63, 0x61, 0x66, 0xE9])
        // Every byte of ISO-8859-1 is a character: no name is lost.
        let all = (UInt8(1)...255).map { $0 }
        #expect(charset.bytes(try #require(charset.utf8(all))) == all)
        // UTF-8 itself: invalid bytes become U+FFFD, as mpd's converter gives them with filesystem_charset "UTF-8".
        let utf8 = try FileNameCharset("UTF-8")
        #expect(utf8.utf8([0x61, 0xE9]) == "a\u{FFFD}")
        #expect(utf8.utf8(Array("日本".utf8)) == "日本")
    }

    @Test func theProcessConversionUsesICU() throws {
        let charset = try FileNameCharset("ISO-8859-1")
        let conversion = FileSystemCharset(
            .init(name: charset.name, toUTF8: { charset.utf8($0) }, fromUTF8: { charset.bytes($0) }))
        #expect(conversion.decode([0x52, 0xE9, 0x70]) == "Rép")
        #expect(conversion.encode("Rép/x") == [0x52, 0xE9, 0x70, 0x2F, 0x78])
        #expect(conversion.decode(Array("plain.mp3".utf8)) == "plain.mp3")
    }
}
