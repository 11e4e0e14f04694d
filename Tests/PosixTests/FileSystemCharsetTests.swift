// SPDX-License-Identifier: GPL-3.0-or-later

import Posix
import RawText
import Synchronization
import Testing

@Suite struct FileSystemCharsetTests {
    /// ISO-8859-1 by hand: each byte is the scalar of the same value.
    static func latin1() -> FileSystemCharset.Conversion {
        .init(
            name: "ISO-8859-1",
            toUTF8: { bytes in
                String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
            },
            fromUTF8: { name in
                var bytes: [UInt8] = []
                for scalar in name.unicodeScalars { bytes.append(scalar.value < 256 ? UInt8(scalar.value) : 0x1A) }
                return bytes
            })
    }

    @Test func aClientsBytesThatAreNotUTF8ConvertOnlyWithoutACharset() {
        let invalid = RawText.decode([0x61, 0xFF])
        #expect(FileSystemCharset.bytes.converts(invalid))
        let latin1 = FileSystemCharset(Self.latin1())
        #expect(!latin1.converts(invalid))
        #expect(latin1.converts("café"))
        // A character ISO-8859-1 lacks converts, to the substitute.
        #expect(latin1.converts("日"))
        #expect(latin1.encode("日") == [0x1A])
    }

    @Test func withoutACharsetNamesKeepTheirBytes() {
        let charset = FileSystemCharset.bytes
        #expect(charset.conversion == nil)
        #expect(charset.decode([0x63, 0x61, 0x66, 0xE9]) == RawText.decode([0x63, 0x61, 0x66, 0xE9]))
        #expect(charset.encode(RawText.decode([0x63, 0x61, 0x66, 0xE9])) == [0x63, 0x61, 0x66, 0xE9])
        #expect(charset.decode(Array("café".utf8)) == "café")
        #expect(charset.encode("café") == Array("café".utf8))
    }

    @Test func aCharsetConvertsBothWays() {
        let charset = FileSystemCharset(Self.latin1())
        #expect(charset.decode([0x63, 0x61, 0x66, 0xE9]) == "café")
        #expect(charset.encode("café") == [0x63, 0x61, 0x66, 0xE9])
        // UTF-8 bytes on disk are read as two Latin-1 characters, as mpd reads them.
        #expect(charset.decode(Array("é".utf8)) == "Ã©")
        #expect(charset.encode("日") == [0x1A])
        #expect(charset.decode([]) == "" && charset.encode("") == [])
    }

    @Test func asciiNamesSkipTheConverter() {
        let calls = Atomic<Int>(0)
        let counted = FileSystemCharset.Conversion(
            name: "ISO-8859-1",
            toUTF8: { bytes in
                calls.add(1, ordering: .relaxed)
                return Self.latin1().toUTF8(bytes)
            },
            fromUTF8: { name in
                calls.add(1, ordering: .relaxed)
                return Self.latin1().fromUTF8(name)
            })
        let charset = FileSystemCharset(counted)
        let probes = calls.load(ordering: .relaxed)
        #expect(charset.decode(Array("plain.mp3".utf8)) == "plain.mp3")
        #expect(charset.encode("dir/plain.mp3") == Array("dir/plain.mp3".utf8))
        #expect(calls.load(ordering: .relaxed) == probes)
        _ = charset.decode([0xE9])
        #expect(calls.load(ordering: .relaxed) == probes + 1)
    }

    @Test func aCharsetThatIsNotASCIIBasedConvertsEveryName() {
        // A made-up charset that swaps case: ASCII does not map to itself, so nothing may skip it.
        let swapped = FileSystemCharset.Conversion(
            name: "swapped",
            toUTF8: { bytes in String(decoding: bytes.map { $0 ^ 0x20 }, as: UTF8.self) },
            fromUTF8: { name in Array(name.utf8).map { $0 ^ 0x20 } })
        let charset = FileSystemCharset(swapped)
        #expect(charset.decode(Array("abc".utf8)) == "ABC")
        #expect(charset.encode("ABC") == Array("abc".utf8))
    }

    @Test func aFailingConversionFallsBackToTheBytes() {
        let failing = FileSystemCharset.Conversion(
            name: "failing", toUTF8: { $0.contains(0xFF) ? nil : String(decoding: $0, as: UTF8.self) },
            fromUTF8: { $0.contains("\u{FF}") ? nil : Array($0.utf8) })
        let charset = FileSystemCharset(failing)
        #expect(charset.decode([0x61, 0xFF]) == RawText.decode([0x61, 0xFF]))
        #expect(charset.encode("a\u{FF}") == Array("a\u{FF}".utf8))
    }
}
