// SPDX-License-Identifier: GPL-3.0-or-later

/// Writes reply bytes (keys, decimal numbers, names and values) into a buffer reserved for them: one capacity
/// check per piece, no exclusivity or uniqueness check per byte, for replies of hundreds of thousands of lines
/// (`plchangesposid` of a long queue, song blocks of `listallinfo`). Valid only inside
/// `ByteWriter.bytes(capacity:_:)` or `Array.append(writingAtMost:_:)`, which own the buffer; writing past the
/// capacity traps.
public struct ByteWriter {
    @usableFromInline let out: UnsafeMutableBufferPointer<UInt8>
    @usableFromInline var written = 0

    @usableFromInline init(_ out: UnsafeMutableBufferPointer<UInt8>) { self.out = out }

    /// The bytes written.
    @inlinable public var count: Int { self.written }

    /// The bytes `body` writes, at most `capacity` (writing more traps).
    public static func bytes(capacity: Int, _ body: (inout ByteWriter) -> Void) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.append(writingAtMost: capacity, body)
        return bytes
    }

    /// Room for `length` more bytes, counted as written.
    @inlinable @inline(__always)
    mutating func claim(_ length: Int) -> UnsafeMutablePointer<UInt8> {
        precondition(length <= self.out.count &- self.written, "ByteWriter: past its capacity")
        defer { self.written &+= length }
        return self.out.baseAddress! + self.written
    }

    /// Appends `text`'s UTF-8 bytes.
    @inlinable @inline(__always)
    public mutating func put(_ text: StaticString) {
        let length = text.utf8CodeUnitCount
        self.claim(length).update(from: text.utf8Start, count: length)
    }

    /// Appends one byte.
    @inlinable @inline(__always)
    public mutating func put(byte: UInt8) { self.claim(1).pointee = byte }

    /// Appends `bytes`.
    @inlinable @inline(__always)
    public mutating func put(bytes: some Collection<UInt8>) {
        let copied: Void? = bytes.withContiguousStorageIfAvailable { source in
            guard let base = source.baseAddress else { return }
            Self.copy(base, to: self.claim(source.count), count: source.count)
        }
        if copied == nil {
            let target = self.claim(bytes.count)
            for (offset, byte) in bytes.enumerated() { target[offset] = byte }
        }
    }

    /// Copies `count` bytes: up to 64 by overlapping word and vector loads and stores in line (most keys, values,
    /// names and directory paths of a reply are that short, and a call of `memmove` for each costs more than the
    /// copy), longer runs by `memmove`.
    @inlinable @inline(__always)
    public static func copy(_ source: UnsafePointer<UInt8>, to target: UnsafeMutablePointer<UInt8>, count: Int) {
        let (from, to) = (UnsafeRawPointer(source), UnsafeMutableRawPointer(target))
        switch count {
        case 8...16:
            let (head, tail) = (
                from.loadUnaligned(as: UInt64.self), from.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self)
            )
            to.storeBytes(of: head, as: UInt64.self)
            to.storeBytes(of: tail, toByteOffset: count &- 8, as: UInt64.self)
        case 17...32:
            let first = from.loadUnaligned(as: UInt64.self)
            let second = from.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            let third = from.loadUnaligned(fromByteOffset: count &- 16, as: UInt64.self)
            let fourth = from.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self)
            to.storeBytes(of: first, as: UInt64.self)
            to.storeBytes(of: second, toByteOffset: 8, as: UInt64.self)
            to.storeBytes(of: third, toByteOffset: count &- 16, as: UInt64.self)
            to.storeBytes(of: fourth, toByteOffset: count &- 8, as: UInt64.self)
        case 33...64:
            // A `file: DIR/` start is often this long: the first 32 bytes, then the last 32.
            for offset in [0, count &- 32] {
                let first = from.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                let second = from.loadUnaligned(fromByteOffset: offset &+ 8, as: UInt64.self)
                let third = from.loadUnaligned(fromByteOffset: offset &+ 16, as: UInt64.self)
                let fourth = from.loadUnaligned(fromByteOffset: offset &+ 24, as: UInt64.self)
                to.storeBytes(of: first, toByteOffset: offset, as: UInt64.self)
                to.storeBytes(of: second, toByteOffset: offset &+ 8, as: UInt64.self)
                to.storeBytes(of: third, toByteOffset: offset &+ 16, as: UInt64.self)
                to.storeBytes(of: fourth, toByteOffset: offset &+ 24, as: UInt64.self)
            }
        case 4..<8:
            let (head, tail) = (
                from.loadUnaligned(as: UInt32.self), from.loadUnaligned(fromByteOffset: count &- 4, as: UInt32.self)
            )
            to.storeBytes(of: head, as: UInt32.self)
            to.storeBytes(of: tail, toByteOffset: count &- 4, as: UInt32.self)
        case 0..<4:
            for offset in 0..<count { target[offset] = source[offset] }
        default:
            target.update(from: source, count: count)
        }
    }

    /// Appends `value` in decimal (its bit pattern as unsigned: callers pass counts and positions).
    @inlinable @inline(__always)
    public mutating func put(_ value: Int) { self.put(decimal: UInt64(UInt(bitPattern: value))) }

    /// Appends `value` in decimal, with at least `minimumDigits` digits (zero-padded, up to 20).
    @inlinable
    public mutating func put(decimal value: UInt64, minimumDigits: Int = 1) {
        if value < 1000 && minimumDigits <= 1 {
            // A song's seconds, a track number, a count: no loop.
            let small = UInt32(truncatingIfNeeded: value)
            if small < 10 {
                self.claim(1).pointee = 0x30 | UInt8(truncatingIfNeeded: small)
            } else if small < 100 {
                let pair = UInt16(truncatingIfNeeded: ISO8601Text.twoDigits(small))
                UnsafeMutableRawPointer(self.claim(2)).storeBytes(of: pair.littleEndian, as: UInt16.self)
            } else {
                let hundreds = small / 100
                let pair = UInt16(truncatingIfNeeded: ISO8601Text.twoDigits(small &- hundreds &* 100))
                let target = self.claim(3)
                target.pointee = 0x30 | UInt8(truncatingIfNeeded: hundreds)
                UnsafeMutableRawPointer(target + 1).storeBytes(of: pair.littleEndian, as: UInt16.self)
            }
            return
        }
        var digits = 1
        var power: UInt64 = 10
        while digits < 20 && value >= power {
            digits &+= 1
            power &*= 10
        }
        digits = max(digits, min(minimumDigits, 20))
        let target = self.claim(digits)
        var rest = value
        for index in stride(from: digits &- 1, through: 0, by: -1) {
            target[index] = UInt8(truncatingIfNeeded: rest % 10) &+ 0x30
            rest /= 10
        }
    }

    /// Appends a point and the three digits of `thousandths` (below 1000; larger values are taken modulo 1000), as
    /// `.050`: one store.
    @inlinable @inline(__always)
    public mutating func put(thousandths value: UInt64) {
        let fraction = UInt32(truncatingIfNeeded: value % 1000)
        let hundreds = fraction / 100
        let tens = fraction / 10 &- hundreds &* 10
        let ones = fraction &- fraction / 10 &* 10
        let text = UInt32(UInt8(ascii: ".")) | (0x30 | hundreds) << 8 | (0x30 | tens) << 16 | (0x30 | ones) << 24
        UnsafeMutableRawPointer(self.claim(4)).storeBytes(of: text.littleEndian, as: UInt32.self)
    }

    /// Appends `seconds` (since 1970-01-01 UTC) as `ISO8601Text` writes it, 20 bytes, when its year is 1970 to
    /// 9999; `false` (nothing written) for any other time.
    @inlinable
    public mutating func putISO8601(_ seconds: Int64) -> Bool {
        guard seconds >= 0, seconds < 253_402_300_800 else { return false }
        return self.putISO8601(seconds, date: ISO8601Text.Day(daysSinceEpoch: seconds / 86_400))
    }

    /// `putISO8601(_:)` with the date of `seconds` already worked out (`ISO8601Text.DayCache`): the time of day's
    /// digits and three stores.
    @inlinable
    public mutating func putISO8601(_ seconds: Int64, date: ISO8601Text.Day) -> Bool {
        guard seconds >= 0, seconds < 253_402_300_800 else { return false }
        let time = UInt32(truncatingIfNeeded: seconds % 86_400)
        let hours = time / 3600
        let minutes = time / 60 &- hours &* 60
        let rest = time &- (time / 60) &* 60
        let colon = UInt64(UInt8(ascii: ":"))
        // `YYYY-MM-`, `DDTHH:MM`, `:SSZ`.
        let second =
            UInt64(date.tail) | ISO8601Text.twoDigits(hours) << 24 | colon << 40 | ISO8601Text.twoDigits(minutes) << 48
        let third = UInt32(
            truncatingIfNeeded: colon | ISO8601Text.twoDigits(rest) << 8 | UInt64(UInt8(ascii: "Z")) << 24)
        let text = UnsafeMutableRawPointer(self.claim(20))
        text.storeBytes(of: date.head.littleEndian, as: UInt64.self)
        text.storeBytes(of: second.littleEndian, toByteOffset: 8, as: UInt64.self)
        text.storeBytes(of: third.littleEndian, toByteOffset: 16, as: UInt32.self)
        return true
    }
}

/// The keys of reply lines (`Artist: `), each in a slot of 32 bytes (zeros after the key), so that a writer can
/// copy any key with two 16-byte stores. Keys are at most 32 bytes.
public struct LineKeys: Sendable {
    @usableFromInline let slots: [UInt8]
    @usableFromInline let lengths: [UInt8]
    /// The length of the longest key (0 without any).
    public let longest: Int

    /// The keys, numbered in order.
    public init(_ keys: [[UInt8]]) {
        var slots = [UInt8](repeating: 0, count: keys.count * 32)
        for (index, key) in keys.enumerated() {
            precondition(key.count <= 32, "LineKeys: a key longer than 32 bytes")
            slots.replaceSubrange(index * 32..<index * 32 + key.count, with: key)
        }
        self.slots = slots
        self.lengths = keys.map { UInt8($0.count) }
        self.longest = keys.map(\.count).max() ?? 0
    }

    /// The number of keys.
    public var count: Int { self.lengths.count }
}

extension LineKeys {
    /// Calls `body` with the slots (key `n` starts at `32 * n`) and the keys' lengths, in place.
    @inlinable
    public func withSlots<Result>(
        _ body: (_ slots: UnsafeBufferPointer<UInt8>, _ lengths: UnsafeBufferPointer<UInt8>) -> Result
    ) -> Result {
        self.slots.withUnsafeBufferPointer { slots in self.lengths.withUnsafeBufferPointer { body(slots, $0) } }
    }
}

extension ByteWriter {
    /// Lets `body` write straight into the room left and counts as written the number of bytes it returns (at most
    /// the room's size: more traps), for writers that check their own bounds once per many pieces.
    @inlinable @inline(__always)
    public mutating func withRoom(_ body: (UnsafeMutableBufferPointer<UInt8>) -> Int) {
        let room = UnsafeMutableBufferPointer(rebasing: self.out[self.written...])
        let count = body(room)
        precondition(count >= 0 && count <= room.count, "ByteWriter: past its capacity")
        self.written &+= count
    }
}

extension Array where Element == UInt8 {
    /// Appends what `body` writes, at most `capacity` bytes (writing more traps), straight into the array's
    /// storage (grown as `append` grows it).
    @inlinable @inline(__always)
    public mutating func append(writingAtMost capacity: Int, _ body: (inout ByteWriter) -> Void) {
        self.append(addingCapacity: capacity) { span in
            span.withUnsafeMutableBufferPointer { buffer, initialized in
                var writer = ByteWriter(UnsafeMutableBufferPointer(rebasing: buffer[initialized...]))
                body(&writer)
                initialized += writer.count
            }
        }
    }
}

/// `Last-Modified` times as `mpd` prints them (`2026-12-05T14:56:57Z`), by arithmetic for the years 1970 to 9999.
public enum ISO8601Text {
    /// Appends `seconds` (since 1970-01-01 UTC) as 20 bytes, when its year is 1970 to 9999; `false` (nothing
    /// appended) for any other time, which the caller formats through the C library.
    public static func append(_ seconds: Int64, to bytes: inout [UInt8]) -> Bool {
        var done = false
        bytes.append(writingAtMost: 20) { done = $0.putISO8601(seconds) }
        return done
    }

    /// A year, a month (1–12) and a day of the month (1–31).
    public typealias CivilDate = (year: Int64, month: Int64, day: Int64)

    /// A day's date as the text a time of that day starts with, `YYYY-MM-DDT` (11 bytes), in two words stored as
    /// they are (the first byte in the low byte); worked out once for a run of times of one day.
    public struct Day: Sendable {
        /// `YYYY-MM-`.
        @usableFromInline let head: UInt64
        /// `DDT` in the low three bytes.
        @usableFromInline let tail: UInt32

        /// The day `days` after 1970-01-01 (0 or later; a year of up to 4 digits).
        @inlinable
        public init(daysSinceEpoch days: Int64) {
            let date = ISO8601Text.civilDate(daysSinceEpoch: days)
            let year = UInt32(truncatingIfNeeded: date.year)
            let dash = UInt64(UInt8(ascii: "-"))
            self.head =
                ISO8601Text.twoDigits(year / 100) | ISO8601Text.twoDigits(year % 100) << 16 | dash << 32
                | ISO8601Text.twoDigits(UInt32(truncatingIfNeeded: date.month)) << 40 | dash << 56
            self.tail = UInt32(
                truncatingIfNeeded: ISO8601Text.twoDigits(UInt32(truncatingIfNeeded: date.day))
                    | UInt64(UInt8(ascii: "T")) << 16)
        }

        /// 1970-01-01, for a time whose line is not written.
        public static var epoch: Day { Day(daysSinceEpoch: 0) }
    }

    /// The two digits of `value` (below 100) as two bytes, the first in the low byte.
    @inlinable @inline(__always)
    static func twoDigits(_ value: UInt32) -> UInt64 {
        let tens = value / 10
        return UInt64(0x3030 | tens | (value &- tens &* 10) << 8)
    }

    /// The date of the day a time (0 or later) falls on, worked out once for a run of times of one day: the
    /// directories and songs of a listing were mostly written on a few days.
    public struct DayCache {
        @usableFromInline var days: Int64 = 0
        @usableFromInline var day = Day(daysSinceEpoch: 0)

        public init() {}

        /// The date of `seconds` (since 1970-01-01 UTC, 0 or later), as `putISO8601(_:date:)` takes it.
        @inlinable
        public mutating func date(of seconds: Int64) -> Day {
            let days = seconds / 86_400
            if days != self.days {
                self.days = days
                self.day = Day(daysSinceEpoch: days)
            }
            return self.day
        }
    }

    /// The proleptic Gregorian date of a day counted from 1970-01-01 (0 or later): Howard Hinnant's
    /// `civil_from_days`, on eras of 400 years.
    @inlinable
    static func civilDate(daysSinceEpoch days: Int64) -> CivilDate {
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
