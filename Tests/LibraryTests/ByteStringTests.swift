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

    /// The hash tables ask for (`_rawHashValue(seed:)`): the same for the same bytes however the string was made,
    /// different for different bytes (every length from 0 to 40, each position of a byte), spread over the low bits
    /// that pick a bucket, and used by dictionaries and sets of byte strings.
    @Test func rawHashesFollowTheBytesAndSpreadOverTheBuckets() {
        var names: [String] = []
        for length in 0...40 {
            let base = (0..<length).map { UInt8(97 + $0 % 26) }
            names.append(String(decoding: base, as: UTF8.self))
            for position in 0..<length {
                var changed = base
                changed[position] ^= 0x01
                names.append(String(decoding: changed, as: UTF8.self))
            }
        }
        names += (0..<20_000).map { "\($0) - Song \($0 % 97).flac" }
        for seed in [0, 1, -7, Int.max] {
            var hashes: Set<Int> = []
            var buckets = [Int](repeating: 0, count: 1024)
            for name in names {
                let hash = ByteString(name)._rawHashValue(seed: seed)
                // The same bytes in a string made another way (a copy of a substring of a longer one).
                let copy = String(Substring(("x" + name).dropFirst()))
                #expect(ByteString(copy)._rawHashValue(seed: seed) == hash)
                hashes.insert(hash)
                buckets[hash & 1023] += 1
            }
            #expect(hashes.count == names.count, "seed \(seed)")
            #expect(buckets.max()! < 3 * names.count / 1024, "seed \(seed)")
        }
        #expect(ByteString("a")._rawHashValue(seed: 1) != ByteString("a")._rawHashValue(seed: 2))
        // The empty string (the root's path), however made: its buffer's address, if any, is not read.
        let empties = [
            "", String("ab".dropFirst(2)), String(decoding: [UInt8](), as: UTF8.self),
            String(Substring("xyz").dropFirst(3)),
        ]
        #expect(Set(empties.map { ByteString($0)._rawHashValue(seed: 5) }).count == 1)
        // Only the bytes count, not those around them: runs of each length at every place in a buffer.
        let buffer = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 73 &+ 5) }
        buffer.withUnsafeBufferPointer { buffer in
            for length in 0...9 {
                let start = 20
                let reference = ByteString.rawHash(
                    of: UnsafeBufferPointer(rebasing: buffer[start..<start + length]), seed: 3)
                var copy = Array(buffer[start..<start + length])
                for padding in 0..<3 {
                    // The same bytes after other bytes, and before others.
                    copy.insert(UInt8(padding), at: 0)
                    copy.append(UInt8(200 + padding))
                    copy.withUnsafeBufferPointer { copy in
                        let inner = UnsafeBufferPointer(rebasing: copy[(padding + 1)..<(padding + 1 + length)])
                        #expect(ByteString.rawHash(of: inner, seed: 3) == reference, "length \(length)")
                    }
                }
            }
        }
        let table = Dictionary(uniqueKeysWithValues: names.enumerated().map { (ByteString($1), $0) })
        #expect(names.enumerated().allSatisfy { table[ByteString($1)] == $0 })
        let forms: Set<ByteString> = [ByteString("Caf\u{E9}"), ByteString("Cafe\u{301}"), ByteString("Caf\u{E9}")]
        #expect(forms.count == 2)
    }
}
