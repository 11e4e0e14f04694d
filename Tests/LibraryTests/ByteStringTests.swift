// SPDX-License-Identifier: GPL-3.0-or-later

import Testing

@testable import Library

/// Keys compared by their UTF-8 bytes, as `mpd` compares file names.
@Suite struct ByteStringTests {
    @Test func equalBytesAreEqualAndTwoNormalFormsAreNot() {
        let precomposed = "Caf\u{E9}"
        let decomposed = "Cafe\u{301}"
        #expect(precomposed == decomposed)  // String's own equality merges them
        #expect(ByteString(precomposed) != ByteString(decomposed))
        #expect(!ByteString.sameBytes(precomposed, decomposed))
        #expect(ByteString.sameBytes(precomposed, "Caf\u{E9}"))
        #expect(ByteString(precomposed) == ByteString("Caf" + "\u{E9}"))
        #expect(ByteString("") == ByteString(""))
        #expect(ByteString("a") != ByteString(""))
        // Same length, one byte apart, at the start, in the middle and at the end.
        #expect(ByteString("xbc") != ByteString("abc"))
        #expect(ByteString("axc") != ByteString("abc"))
        #expect(ByteString("abx") != ByteString("abc"))
        // Longer than a small string's inline storage.
        let long = String(repeating: "01 - Some title ", count: 8)
        #expect(ByteString(long) == ByteString(String(long.utf8.map { Character(UnicodeScalar($0)) })))
        #expect(ByteString(long + "a") != ByteString(long + "b"))
    }

    @Test func aSubstringsCopyEqualsItsSource() {
        let path = "Generated/Some Artist/Some Album/01 - Title.mp3"
        let name = String(path.split(separator: "/").last!)
        #expect(ByteString(name) == ByteString("01 - Title.mp3"))
        let keys: Set<ByteString> = [ByteString(name), ByteString("01 - Title.mp3")]
        #expect(keys.count == 1)
    }
}
