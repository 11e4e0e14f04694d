// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// The `modified-since` operand: an ISO 8601 time as `mpd` 0.23 reads it (through glibc's `strptime`), or else
/// a UNIX time as `strtoull` reads it.
///
/// Accepted ISO forms: `YYYY-MM` (the month's first day); `YYYY-MM-DD` or `YYYYMMDD`; then optionally `T` and
/// `HH`, `HH:MM`, `HH:MM:SS`, `HHMM` or `HHMMSS`; then optionally `Z`, `±HH`, `±HH:MM` or `±HHMM`. No zone means
/// UTC. Fields follow `strptime`: each may be shorter than its width and preceded by white space, seconds may be
/// 60 or 61, and out-of-range days roll over (`2019-02-30` is March 2nd) as `timegm` does.
enum FilterTimestamp {
    /// Parses `text` into seconds since the epoch.
    ///
    /// A non-ISO value that is all digits (with optional leading white space and sign) is a UNIX time, taken
    /// modulo 2⁶⁴ as `time_t` (`-1` and overflowing values mean -1).
    ///
    /// - Throws: `ACK` code 2 with the ISO parser's message when both readings fail: `Failed to parse date`,
    ///   `Failed to parse time of day`, `Failed to parse time zone offset`, `Time offset hours out of range`,
    ///   `Time offset minutes out of range` or `Garbage at end of time stamp`.
    static func parse(_ text: [UInt8]) throws(AckError) -> Int64 {
        do {
            return try parseISO8601(text)
        } catch {
            let (value, end) = CNumbers.strtoul(text, from: 0)
            if end == text.count && end > 0 { return Int64(bitPattern: value) }
            throw error
        }
    }

    private static func parseISO8601(_ text: [UInt8]) throws(AckError) -> Int64 {
        var scanner = Scanner(text)
        // "%Y-%m", the whole string: a month.
        if let year = scanner.number(0...9999, digits: 4), scanner.literal("-"),
            let month = scanner.number(1...12, digits: 2), scanner.atEnd
        {
            return timegm(year: year, month: month, day: 1)
        }
        scanner = Scanner(text)
        var date = scanner.date(separated: true)
        if date == nil {
            scanner = Scanner(text)
            date = scanner.date(separated: false)
        }
        guard let (year, month, day) = date else { throw AckError(.arg, "Failed to parse date") }
        var hour = 0
        var minute = 0
        var second = 0
        if scanner.literal("T") {
            guard scanner.timeOfDay(hour: &hour, minute: &minute, second: &second) else {
                throw AckError(.arg, "Failed to parse time of day")
            }
        }
        var time = timegm(year: year, month: month, day: day) + Int64(hour * 3600 + minute * 60 + second)
        if scanner.literal("Z") {
            // UTC.
        } else if scanner.peek == UInt8(ascii: "+") || scanner.peek == UInt8(ascii: "-") {
            time -= try scanner.zoneOffset()
        }
        guard scanner.atEnd else { throw AckError(.arg, "Garbage at end of time stamp") }
        return time
    }

    /// Seconds since the epoch of midnight UTC on a proleptic Gregorian date; `day` may exceed the month's length.
    static func timegm(year: Int, month: Int, day: Int) -> Int64 {
        // Days from 1970-01-01 to year-month-01 (Howard Hinnant's days_from_civil), then the day offset.
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468 + Int64(day - 1)
        return days * 86_400
    }

    /// A cursor implementing the few `strptime` conversions `mpd` uses.
    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { self.index >= self.bytes.count }
        var peek: UInt8 { self.atEnd ? 0 : self.bytes[self.index] }

        /// A literal character; consumes it only when it matches.
        mutating func literal(_ character: Unicode.Scalar) -> Bool {
            guard self.peek == UInt8(ascii: character) else { return false }
            self.index += 1
            return true
        }

        /// glibc's `get_number`: skips white space, reads 1…`digits` digits while the value can still grow within
        /// `range`, and fails (consuming nothing) outside `range`.
        mutating func number(_ range: ClosedRange<Int>, digits: Int) -> Int? {
            var position = self.index
            while position < self.bytes.count, CNumbers.isSpace(self.bytes[position]) { position += 1 }
            guard position < self.bytes.count, self.bytes[position] &- 0x30 < 10 else { return nil }
            var value = 0
            var remaining = digits
            repeat {
                value = value * 10 + Int(self.bytes[position] &- 0x30)
                position += 1
                remaining -= 1
            } while remaining > 0 && value * 10 <= range.upperBound && position < self.bytes.count
                && self.bytes[position] &- 0x30 < 10
            guard range.contains(value) else { return nil }
            self.index = position
            return value
        }

        /// `%Y-%m-%d` or `%Y%m%d`, consuming nothing on failure.
        mutating func date(separated: Bool) -> (year: Int, month: Int, day: Int)? {
            let start = self.index
            if let year = self.number(0...9999, digits: 4), !separated || self.literal("-"),
                let month = self.number(1...12, digits: 2), !separated || self.literal("-"),
                let day = self.number(1...31, digits: 2)
            {
                return (year, month, day)
            }
            self.index = start
            return nil
        }

        /// `mpd`'s time of day after `T`: `%H`, then either `:%M[:%S]` or an optional `%M` and `%S` run together.
        mutating func timeOfDay(hour: inout Int, minute: inout Int, second: inout Int) -> Bool {
            guard let h = self.number(0...23, digits: 2) else { return false }
            hour = h
            if self.literal(":") {
                guard let m = self.number(0...59, digits: 2) else { return false }
                minute = m
                guard self.literal(":") else { return true }
                guard let s = self.number(0...61, digits: 2) else { return false }
                second = s
                return true
            }
            guard let m = self.number(0...59, digits: 2) else { return true }
            minute = m
            if let s = self.number(0...61, digits: 2) { second = s }
            return true
        }

        /// `±HHMM`, `±HH` or `±HH:MM` (each field read by `strtoul`, so it may hold white space or a sign), in
        /// seconds east of UTC.
        mutating func zoneOffset() throws(AckError) -> Int64 {
            let negative = self.peek == UInt8(ascii: "-")
            self.index += 1
            let failed = AckError(.arg, "Failed to parse time zone offset")
            let (value, end) = CNumbers.strtoul(self.bytes, from: self.index)
            let hours: UInt32
            var minutes: UInt32 = 0
            switch end - self.index {
            case 4:
                hours = UInt32(truncatingIfNeeded: value / 100)
                minutes = UInt32(truncatingIfNeeded: value % 100)
                self.index = end
            case 2:
                hours = UInt32(truncatingIfNeeded: value)
                self.index = end
                if self.literal(":") {
                    let (value, end) = CNumbers.strtoul(self.bytes, from: self.index)
                    guard end - self.index == 2 else { throw failed }
                    minutes = UInt32(truncatingIfNeeded: value)
                    self.index = end
                }
            default:
                throw failed
            }
            guard hours <= 13 else { throw AckError(.arg, "Time offset hours out of range") }
            guard minutes < 60 else { throw AckError(.arg, "Time offset minutes out of range") }
            let offset = Int64(hours) * 3600 + Int64(minutes) * 60
            return negative ? -offset : offset
        }
    }
}
