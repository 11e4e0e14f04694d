// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Model
import Testing

struct DecimalTextTests {
    @Test func theWriterPutsKeysAndDecimalsUpToItsCapacity() {
        let bytes = ByteWriter.bytes(capacity: 64) { writer in
            writer.put("a: ")
            writer.put(0)
            writer.put(" ")
            writer.put(Int.max)
            writer.put(" ")
            writer.put(-1)
            #expect(writer.count == 3 + 1 + 1 + 19 + 1 + 20)
        }
        #expect(String(decoding: bytes, as: UTF8.self) == "a: 0 \(Int.max) \(UInt.max)")
        #expect(ByteWriter.bytes(capacity: 0) { _ in }.isEmpty)
    }

    @Test func iso8601TextCoversTheYears1970To9999Only() {
        var bytes: [UInt8] = []
        #expect(ISO8601Text.append(0, to: &bytes))
        #expect(ISO8601Text.append(951_782_400, to: &bytes))  // 2000-02-29
        #expect(ISO8601Text.append(253_402_300_799, to: &bytes))
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == "1970-01-01T00:00:00Z2000-02-29T00:00:00Z9999-12-31T23:59:59Z")
        #expect(!ISO8601Text.append(-1, to: &bytes))
        #expect(!ISO8601Text.append(253_402_300_800, to: &bytes))
        #expect(bytes.count == 60)
    }

    /// Every field of every time, against the C library's `gmtime_r`: times about 32 days apart over the whole range
    /// (the step's seconds run through all sixty values), every 61st second of one day, and the ends of days.
    @Test func iso8601TextIsTheCLibrarysDateAndTime() {
        func reference(_ seconds: Int64) -> String {
            var time = time_t(seconds)
            var parts = tm()
            gmtime_r(&time, &parts)
            func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
            return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
                + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
        }
        var times: [Int64] = Array(stride(from: 0, through: 253_402_300_799, by: 2_777_777))
        times += (0..<86_400).map { 1_700_006_400 + Int64($0) }.filter { $0 % 61 == 0 || $0 % 86_400 >= 86_340 }
        times += [86_399, 86_400, 951_868_799, 253_402_300_799]
        for time in times {
            var bytes: [UInt8] = []
            #expect(ISO8601Text.append(time, to: &bytes))
            #expect(String(decoding: bytes, as: UTF8.self) == reference(time), "\(time)")
        }
    }

    /// Times of a few days, back and forth and at the edges of days (a leap day, a year's end): the date kept from
    /// the time before is used only for a time of the same day.
    @Test func aDayCacheGivesTheTextOfEachTime() {
        let times: [Int64] = [
            951_782_400, 951_868_799, 951_868_800, 951_782_401, 0, 86_399, 86_400, 946_684_799, 946_684_800,
            253_402_300_799, 951_868_800,
        ]
        var cache = ISO8601Text.DayCache()
        for time in times {
            let date = cache.date(of: time)
            var written = (false, false)
            let cached = ByteWriter.bytes(capacity: 20) { written.0 = $0.putISO8601(time, date: date) }
            let plain = ByteWriter.bytes(capacity: 20) { written.1 = $0.putISO8601(time) }
            #expect(written == (true, true))
            #expect(cached == plain, "\(time)")
        }
    }
}

struct ByteWriterTests {
    @Test func piecesGoStraightIntoTheArrayAfterWhatItHeld() {
        var bytes = Array("x".utf8)
        bytes.append(writingAtMost: 80) { writer in
            writer.put("k: ")
            writer.put(bytes: [0x41, 0xFF])
            writer.put(bytes: "é".utf8)
            writer.put(byte: 0x0A)
            writer.put(decimal: 7, minimumDigits: 3)
            writer.put(byte: 0x20)
            writer.put(decimal: 1234, minimumDigits: 2)
            writer.put(byte: 0x20)
            writer.put(decimal: UInt64.max, minimumDigits: 25)
            #expect(writer.count == 3 + 2 + 2 + 1 + 3 + 1 + 4 + 1 + 20)
        }
        #expect(bytes == Array("xk: ".utf8) + [0x41, 0xFF] + Array("é\n007 1234 \(UInt64.max)".utf8))
        bytes.append(writingAtMost: 10) { _ in }
        #expect(bytes.count == 1 + 37)
    }

    @Test func runsOfEveryLengthAreCopiedWholeAndNothingPast() {
        // The short runs are copied by overlapping word stores in line, the long ones by memmove.
        let source = (0..<100).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        for length in 0...source.count {
            var bytes: [UInt8] = [0xEE]
            bytes.append(writingAtMost: 2 * source.count + 1) { writer in
                writer.put(bytes: source[..<length])
                writer.put(byte: 0xEE)
                writer.put(bytes: source[(source.count - length)...])
            }
            var expected: [UInt8] = [0xEE]
            expected += source[..<length]
            expected.append(0xEE)
            expected += source[(source.count - length)...]
            #expect(bytes == expected, "\(length)")
        }
    }

    @Test func iso8601IsWrittenOnlyForTheYears1970To9999() {
        var written: [Bool] = []
        let bytes = ByteWriter.bytes(capacity: 40) { writer in
            written = [writer.putISO8601(1_700_000_000), writer.putISO8601(-1), writer.putISO8601(253_402_300_800)]
        }
        #expect(written == [true, false, false])
        #expect(String(decoding: bytes, as: UTF8.self) == "2023-11-14T22:13:20Z")
    }

    @Test func decimalsAreTheirDigitsWhateverTheirLength() {
        // Below 1000 without a loop, above it digit by digit; each as Swift's description writes it.
        let values: [UInt64] = Array(0...1100) + [9_999, 10_000, 123_456_789, 1 << 32, UInt64.max / 3, UInt64.max]
        for value in values {
            let bytes = ByteWriter.bytes(capacity: 20) { $0.put(decimal: value) }
            #expect(String(decoding: bytes, as: UTF8.self) == "\(value)")
        }
        let padded = ByteWriter.bytes(capacity: 20) { $0.put(decimal: 42, minimumDigits: 4) }
        #expect(String(decoding: padded, as: UTF8.self) == "0042")
    }

    @Test func iso8601TextIsTheCLibrarysForTimesAllOverTheYears() {
        // A time every 29 days and 4 h 13 min 17 s from 1970 to 9999 (hours, minutes and seconds all come round),
        // against strftime's text of gmtime_r.
        var time: Int64 = 0
        while time < 253_402_300_800 {
            var seconds = time_t(time)
            var parts = tm()
            gmtime_r(&seconds, &parts)
            var text = [CChar](repeating: 0, count: 32)
            let length = strftime(&text, 32, "%Y-%m-%dT%H:%M:%SZ", &parts)
            let expected = String(decoding: text[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            var written = false
            let bytes = ByteWriter.bytes(capacity: 20) { written = $0.putISO8601(time) }
            #expect(written)
            if String(decoding: bytes, as: UTF8.self) != expected {
                Issue.record("\(time): \(String(decoding: bytes, as: UTF8.self)), not \(expected)")
                return
            }
            time += 29 * 86_400 + 4 * 3600 + 13 * 60 + 17
        }
    }

    @Test func thousandthsAreAPointAndThreeDigits() {
        let bytes = ByteWriter.bytes(capacity: 20) { writer in
            for value: UInt64 in [0, 5, 50, 999, 1234] { writer.put(thousandths: value) }
        }
        #expect(String(decoding: bytes, as: UTF8.self) == ".000.005.050.999.234")
    }

    @Test func lineKeysSitInSlotsOf32BytesAndWritersWriteInPlace() {
        let keys = LineKeys([Array("a: ".utf8), [], Array(repeating: UInt8(ascii: "k"), count: 32)])
        #expect(keys.count == 3)
        keys.withSlots { slots, lengths in
            #expect(Array(lengths) == [3, 0, 32])
            #expect(slots.count == 96)
            #expect(Array(slots[0..<4]) == Array("a: ".utf8) + [0])
            #expect(slots[32..<64].allSatisfy { $0 == 0 })
        }
        let bytes = ByteWriter.bytes(capacity: 8) { writer in
            writer.put("ab")
            writer.withRoom { room in
                #expect(room.count == 6)
                room[0] = UInt8(ascii: "c")
                return 1
            }
            writer.put("d")
        }
        #expect(bytes == Array("abcd".utf8))
    }
}
