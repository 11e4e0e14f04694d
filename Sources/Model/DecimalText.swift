// SPDX-License-Identifier: GPL-3.0-or-later

/// Writes ASCII keys and decimal numbers into a buffer made for them: no bounds or exclusivity check per byte,
/// for replies of hundreds of thousands of short lines (`plchangesposid` of a long queue). Valid only inside
/// `DecimalWriter.bytes(capacity:_:)`, which owns the buffer.
public struct DecimalWriter {
    private let out: UnsafeMutableBufferPointer<UInt8>
    /// The bytes written.
    public private(set) var count = 0

    private init(_ out: UnsafeMutableBufferPointer<UInt8>) { self.out = out }

    /// The bytes `body` writes, at most `capacity` (writing more traps).
    public static func bytes(capacity: Int, _ body: (inout DecimalWriter) -> Void) -> [UInt8] {
        guard capacity > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            var writer = DecimalWriter(buffer)
            body(&writer)
            initialized = writer.count
        }
    }

    /// Appends `text`'s UTF-8 bytes.
    public mutating func put(_ text: StaticString) {
        let length = text.utf8CodeUnitCount
        precondition(self.count + length <= self.out.count, "DecimalWriter: past its capacity")
        UnsafeMutableRawPointer(self.out.baseAddress! + self.count).copyMemory(from: text.utf8Start, byteCount: length)
        self.count += length
    }

    /// Appends `value` in decimal (its bit pattern as unsigned: callers pass counts and positions).
    public mutating func put(_ value: Int) {
        var rest = UInt(bitPattern: value)
        var digits = 1
        var power: UInt = 10
        while digits < 20 && rest >= power {
            digits += 1
            power &*= 10
        }
        precondition(self.count + digits <= self.out.count, "DecimalWriter: past its capacity")
        self.count += digits
        for index in 1...digits {
            self.out[self.count - index] = UInt8(truncatingIfNeeded: rest % 10) + 0x30
            rest /= 10
        }
    }
}

/// `Last-Modified` times as `mpd` prints them (`2026-12-05T14:56:57Z`), by arithmetic for the years 1970 to 9999.
public enum ISO8601Text {
    /// Appends `seconds` (since 1970-01-01 UTC) as 20 bytes, when its year is 1970 to 9999; `false` (nothing
    /// appended) for any other time, which the caller formats through the C library.
    public static func append(_ seconds: Int64, to bytes: inout [UInt8]) -> Bool {
        guard seconds >= 0, seconds < 253_402_300_800 else { return false }
        let (year, month, day) = Self.civilDate(daysSinceEpoch: seconds / 86_400)
        let time = seconds % 86_400
        let (hour, minute, second) = (time / 3600, time / 60 % 60, time % 60)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { text in
            func put(_ value: Int64, at index: Int, digits: Int) {
                var rest = value
                for offset in stride(from: digits - 1, through: 0, by: -1) {
                    text[index + offset] = UInt8(truncatingIfNeeded: rest % 10) + 0x30
                    rest /= 10
                }
            }
            put(year, at: 0, digits: 4)
            text[4] = UInt8(ascii: "-")
            put(month, at: 5, digits: 2)
            text[7] = UInt8(ascii: "-")
            put(day, at: 8, digits: 2)
            text[10] = UInt8(ascii: "T")
            put(hour, at: 11, digits: 2)
            text[13] = UInt8(ascii: ":")
            put(minute, at: 14, digits: 2)
            text[16] = UInt8(ascii: ":")
            put(second, at: 17, digits: 2)
            text[19] = UInt8(ascii: "Z")
            bytes.append(contentsOf: UnsafeBufferPointer(text))
        }
        return true
    }

    /// The proleptic Gregorian date of a day counted from 1970-01-01 (0 or later): Howard Hinnant's
    /// `civil_from_days`, on eras of 400 years.
    static func civilDate(daysSinceEpoch days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468  // from 0000-03-01
        let era = shifted / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153  // March is 0
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
