// SPDX-License-Identifier: GPL-3.0-or-later

import Testing

@testable import RawText

struct RawTextTests {
    /// A small seeded generator, so a failure reproduces.
    private struct SplitMix64: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            self.state &+= 0x9E37_79B9_7F4A_7C15
            var z = self.state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    private func escapes(_ text: String) -> [UInt8] {
        text.unicodeScalars.compactMap { RawText.rawByte($0) }
    }

    @Test func validUTF8AcceptsWhatStringValidatingAcceptsAndNothingElse() {
        var generator = SplitMix64(state: 17)
        var cases: [[UInt8]] = [
            [], Array("plain.mp3".utf8), Array("Café \u{FFFD} 東京 🎵".utf8), [0xFF], [0xC3], [0xE2, 0x82],
            [0xED, 0xA0, 0x80], [0xC0, 0xAF], [0xF4, 0x90, 0x80, 0x80], Array("caf".utf8) + [0xE9],
            Array(repeating: 0x41, count: 40) + [0x80],
        ]
        for _ in 0..<2000 {
            cases.append(
                (0..<Int.random(in: 0..<24, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator)
                })
        }
        for bytes in cases {
            let expected = String(validating: bytes, as: UTF8.self)
            let found = bytes.withUnsafeBufferPointer(RawText.validUTF8)
            #expect(found == expected, "\(bytes)")
            if let found { #expect(Array(found.utf8) == bytes) }
        }
    }

    @Test func latin1ByteBecomesOneEscape() {
        let text = RawText.decode(Array("caf".utf8) + [0xE9] + Array(" latin1.mp3".utf8))
        #expect(text == "caf\u{10FEE9} latin1.mp3")
        #expect(RawText.containsEscape(text))
        #expect(RawText.encode(text) == Array("caf".utf8) + [0xE9] + Array(" latin1.mp3".utf8))
    }

    @Test(arguments: ["", "plain.mp3", "été 東京 🎵", "\u{10FFFD}\u{100000}", "a\u{0}b", "\u{FFFD}"])
    func validUTF8IsUnchanged(_ text: String) {
        let bytes = Array(text.utf8)
        let decoded = RawText.decode(bytes)
        #expect(Array(decoded.utf8) == bytes)
        #expect(!RawText.containsEscape(decoded))
        #expect(RawText.encode(decoded) == bytes)
    }

    @Test func escapeScalarsSpelledInUTF8AreEscapedByteByByte() {
        // U+10FE80 and U+10FEFF are valid UTF-8, but decoding them as themselves would make them encode
        // to one byte; each of their bytes is escaped instead.
        let bytes: [UInt8] = [0xF4, 0x8F, 0xBA, 0x80, 0x41, 0xF4, 0x8F, 0xBB, 0xBF]
        let decoded = RawText.decode(bytes)
        #expect(self.escapes(decoded) == [0xF4, 0x8F, 0xBA, 0x80, 0xF4, 0x8F, 0xBB, 0xBF])
        #expect(RawText.encode(decoded) == bytes)
    }

    @Test(arguments: [
        [0xC0, 0x80] as [UInt8],  // overlong NUL
        [0xE0, 0x80, 0xAF],  // overlong
        [0xED, 0xA0, 0x80],  // surrogate
        [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
        [0xF8, 0x88, 0x80, 0x80, 0x80],  // five-byte form
        [0xE2, 0x82],  // truncated
        [0x80], [0xFF], [0xFE],
    ])
    func invalidSequencesAreEscapedByteByByte(_ bytes: [UInt8]) {
        let decoded = RawText.decode(bytes)
        #expect(self.escapes(decoded) == bytes)
        #expect(RawText.encode(decoded) == bytes)
    }

    @Test func randomByteStringsRoundTrip() {
        var random = SplitMix64(state: 0xFE_2024)
        for round in 0..<5000 {
            let count = Int.random(in: 0...40, using: &random)
            // Mostly high bytes and lead bytes, so valid and invalid sequences mix.
            let bytes = (0..<count).map { _ -> UInt8 in
                switch Int.random(in: 0..<4, using: &random) {
                case 0: UInt8.random(in: 0x20...0x7E, using: &random)
                case 1: [0xC3, 0xE2, 0xF0, 0xF4, 0x8F, 0xBA, 0xBB][Int.random(in: 0..<7, using: &random)]
                default: UInt8.random(in: 0x80...0xFF, using: &random)
                }
            }
            let decoded = RawText.decode(bytes)
            #expect(RawText.encode(decoded) == bytes, "round \(round): \(bytes)")
            #expect(RawText.decode(RawText.encode(decoded)) == decoded)
            // Valid UTF-8 in, no escape out; invalid in, an escape out.
            let valid = String(validating: bytes, as: UTF8.self)
            let spellsEscape = valid?.unicodeScalars.contains { RawText.escapeRange.contains($0.value) } ?? false
            #expect(RawText.containsEscape(decoded) == (valid == nil || spellsEscape))
        }
    }

    @Test func randomValidTextNeverProducesEscapes() {
        var random = SplitMix64(state: 7)
        for _ in 0..<2000 {
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0...12, using: &random) {
                let value = UInt32.random(in: 0...0x10FFFF, using: &random)
                guard let scalar = Unicode.Scalar(value), !RawText.escapeRange.contains(value) else { continue }
                scalars.append(scalar)
            }
            let text = String(scalars)
            let decoded = RawText.decode(Array(text.utf8))
            #expect(!RawText.containsEscape(decoded))
            #expect(decoded.unicodeScalars.elementsEqual(text.unicodeScalars))
            #expect(RawText.encode(decoded) == Array(text.utf8))
        }
    }

    @Test func withFilePathPassesRawBytes() {
        let path = RawText.decode(Array("/tmp/caf".utf8) + [0xE9])
        let bytes = RawText.withFilePath(path) { pointer in
            (0..<10).map { UInt8(bitPattern: pointer[$0]) }
        }
        #expect(bytes == Array("/tmp/caf".utf8) + [0xE9, 0])
        let plain = RawText.withFilePath("/tmp") { pointer in (0..<5).map { UInt8(bitPattern: pointer[$0]) } }
        #expect(plain == Array("/tmp".utf8) + [0])
    }
}
