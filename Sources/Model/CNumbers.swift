// SPDX-License-Identifier: GPL-3.0-or-later

/// C's `strtoul` and `strtol` (base 10, "C" locale) over UTF-8 bytes, for every parser that must accept
/// exactly what `mpd` accepts: leading white space, an optional sign, and an end position that is the start
/// when no digit was read.
public enum CNumbers {
    /// `isspace` in the "C" locale.
    @inline(__always)
    public static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) }

    /// `strtoul(bytes + start, &end, 10)`: a negative number wraps modulo 2⁶⁴ and overflow gives `UInt64.max`.
    ///
    /// - Returns: the value and the index after the last digit, or `start` when there is no digit.
    public static func strtoul(_ bytes: some Collection<UInt8>, from start: Int) -> (value: UInt64, end: Int) {
        guard let (magnitude, negative, overflow, end) = scan(bytes, from: start) else { return (0, start) }
        if overflow { return (UInt64.max, end) }
        return (negative ? 0 &- magnitude : magnitude, end)
    }

    /// `strtol(bytes + start, &end, 10)` for a 64-bit `long`: overflow clamps to `Int64.min` or `Int64.max`.
    ///
    /// - Returns: the value and the index after the last digit, or `start` when there is no digit.
    public static func strtol(_ bytes: some Collection<UInt8>, from start: Int) -> (value: Int64, end: Int) {
        guard let (magnitude, negative, overflow, end) = scan(bytes, from: start) else { return (0, start) }
        if negative {
            if overflow || magnitude > UInt64(Int64.max) + 1 { return (Int64.min, end) }
            return (magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude), end)
        }
        if overflow || magnitude > UInt64(Int64.max) { return (Int64.max, end) }
        return (Int64(magnitude), end)
    }

    /// The parts `strtoul` and `strtol` are built from: leading white space skipped, an optional sign, the
    /// decimal digits' magnitude (wrapped on overflow, which is reported), and the index after the last digit.
    ///
    /// - Returns: `nil` when no digit follows the optional sign.
    public static func scan(
        _ bytes: some Collection<UInt8>, from start: Int
    ) -> (magnitude: UInt64, negative: Bool, overflow: Bool, end: Int)? {
        let bytes = Array(bytes)
        var index = start
        while index < bytes.count, isSpace(bytes[index]) { index += 1 }
        var negative = false
        if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            negative = bytes[index] == UInt8(ascii: "-")
            index += 1
        }
        guard index < bytes.count, bytes[index] &- 0x30 < 10 else { return nil }
        var magnitude: UInt64 = 0
        var overflow = false
        while index < bytes.count, bytes[index] &- 0x30 < 10 {
            let (multiplied, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (added, o2) = multiplied.addingReportingOverflow(UInt64(bytes[index] &- 0x30))
            overflow = overflow || o1 || o2
            magnitude = added
            index += 1
        }
        return (magnitude, negative, overflow, index)
    }
}
