// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Model
import RawText
import Testing

@testable import Server

/// Song blocks built as bytes say what the string-built replies say.
struct ReplyBufferTests {
    @Test(arguments: [Int64(0), 59, 86_399, 951_782_400, 1_700_000_000, -1, -62_135_596_800, 253_402_300_799])
    func timestampsMatchTheStringForm(seconds: Int64) {
        var reply = ReplyBuffer()
        SongPrinter.appendISO8601(seconds, to: &reply)
        #expect(String(decoding: reply.bytes, as: UTF8.self) == SongPrinter.iso8601(seconds))
    }

    /// The arithmetic form against the C library's: every day of 1970–2100 at a time of day that changes with
    /// it, the last second of each year to 9999, and the edges where the C library takes over.
    @Test func timestampsMatchTheCLibrary() {
        var checked: [Int64] = [0, 86_399, 86_400, 253_402_300_799, 253_402_300_800, -1, 951_868_799, 951_868_800]
        for day in Int64(0)..<47_847 { checked.append(day * 86_400 + (day * 7_919) % 86_400) }
        for year in 1970...9999 {
            var parts = tm()
            parts.tm_year = Int32(year - 1900 + 1)
            parts.tm_mday = 1
            checked.append(Int64(timegm(&parts)) - 1)
        }
        for seconds in checked {
            var fast = ReplyBuffer()
            SongPrinter.appendISO8601(seconds, to: &fast)
            var reference = ReplyBuffer()
            SongPrinter.appendISO8601ByGmtime(seconds, to: &reference)
            guard fast.bytes == reference.bytes else {
                Issue.record("\(seconds): \(String(decoding: fast.bytes, as: UTF8.self))")
                return
            }
        }
    }

    @Test func aPrefixIsMadeOnceForEachRunOfItsKey() {
        var reply = ReplyBuffer()
        var made: [Int32] = []
        for key: Int32 in [0, 0, 3, 3, 0, 7] {
            let prefix = reply.prefix(key: key) { prefix in
                made.append(key)
                prefix.append(contentsOf: "p\(key): ".utf8)
            }
            reply.append(bytes: prefix)
            reply.append(byte: UInt8(ascii: "\n"))
        }
        #expect(made == [0, 3, 0, 7])
        #expect(String(decoding: reply.bytes, as: UTF8.self) == "p0: \np0: \np3: \np3: \np0: \np7: \n")
        reply.removeAll()
        let kept = reply.prefix(key: 7) { _ in made.append(-1) }
        reply.append(bytes: kept)
        #expect(String(decoding: reply.bytes, as: UTF8.self) == "p7: ")
        #expect(made.count == 4)
    }

    @Test func tagKeysAreTheNamesWithColonAndSpace() {
        for type in TagType.allCases {
            var reply = ReplyBuffer()
            reply.key(type.name)
            #expect(SongPrinter.tagKeys[type.rawValue] == reply.bytes)
        }
    }

    @Test func songBlockCarriesDurationsAndRawURIs() {
        let info = SongInfo(tags: [TagItem(.artist, "A"), TagItem(.title, "T")], durationMilliseconds: 61_005)
        let uri = "d/" + RawText.decode([0x66, 0xFF]) + ".mp3"
        var reply = ReplyBuffer()
        SongPrinter.appendSong(uri: uri, modificationTime: 0, info: info, visibleTags: TagMask([.title]), to: &reply)
        let expected: [UInt8] =
            Array("file: d/f".utf8) + [0xFF] + Array(".mp3\nLast-Modified: 1970-01-01T00:00:00Z\nTitle: T\n".utf8)
            + Array("Time: 61\nduration: 61.005\n".utf8)
        #expect(reply.bytes == expected)
        for milliseconds: UInt64 in [0, 7, 40, 999, 1000, 1_044, 123_456_789] {
            var reply = ReplyBuffer()
            reply.appendDecimal(milliseconds / 1000)
            reply.append(byte: UInt8(ascii: "."))
            reply.appendDecimal(milliseconds % 1000, minimumDigits: 3)
            #expect(String(decoding: reply.bytes, as: UTF8.self) == SongPrinter.seconds3(milliseconds))
        }
    }

    @Test(arguments: [UInt64(0), 9, 10, 99, 100, 12_345, 4_294_967_296, UInt64.max])
    func decimalsMatchDescription(value: UInt64) {
        var reply = ReplyBuffer()
        reply.append(byte: UInt8(ascii: "<"))
        reply.appendDecimal(value)
        reply.append(byte: UInt8(ascii: ">"))
        #expect(String(decoding: reply.bytes, as: UTF8.self) == "<\(value)>")
    }
}
