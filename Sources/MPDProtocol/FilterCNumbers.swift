// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// C's `strtoul` and `strtol` (base 10, "C" locale) over UTF-8 bytes, for parsers that must accept exactly what
/// `mpd` accepts: leading white space, an optional sign, and an end position that is the start when no digit
/// was read.
enum FilterCNumbers {
    /// `isspace` in the "C" locale.
    @inline(__always)
    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) }

    /// `strtoul(bytes + start, &end, 10)`: a negative number wraps modulo 2⁶⁴ and overflow gives `UInt64.max`.
    ///
    /// - Returns: the value and the index after the last digit, or `start` when there is no digit.
    static func strtoul(_ bytes: [UInt8], from start: Int) -> (value: UInt64, end: Int) {
        guard let (magnitude, negative, overflow, end) = scan(bytes, from: start) else { return (0, start) }
        if overflow { return (UInt64.max, end) }
        return (negative ? 0 &- magnitude : magnitude, end)
    }

    /// `strtol(bytes + start, &end, 10)` for a 64-bit `long`: overflow clamps to `Int64.min` or `Int64.max`.
    ///
    /// - Returns: the value and the index after the last digit, or `start` when there is no digit.
    static func strtol(_ bytes: [UInt8], from start: Int) -> (value: Int64, end: Int) {
        guard let (magnitude, negative, overflow, end) = scan(bytes, from: start) else { return (0, start) }
        if negative {
            if overflow || magnitude > UInt64(Int64.max) + 1 { return (Int64.min, end) }
            return (magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude), end)
        }
        if overflow || magnitude > UInt64(Int64.max) { return (Int64.max, end) }
        return (Int64(magnitude), end)
    }

    private static func scan(
        _ bytes: [UInt8], from start: Int
    ) -> (magnitude: UInt64, negative: Bool, overflow: Bool, end: Int)? {
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

    /// The bytes of `text` up to its first NUL: `mpd` sees every argument as a C string.
    static func cString(_ text: String) -> [UInt8] {
        var bytes = Array(text.utf8)
        if let nul = bytes.firstIndex(of: 0) { bytes.removeSubrange(nul...) }
        return bytes
    }

    /// `text` cut to at most `limit` bytes, as `snprintf` into a buffer of `limit + 1` bytes cuts it.
    static func truncated(_ text: String, toBytes limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        return String(decoding: text.utf8.prefix(limit), as: UTF8.self)
    }

    /// ASCII case-insensitive equality (`strcasecmp` in the "C" locale).
    static func equalsIgnoringASCIICase(_ bytes: some Collection<UInt8>, _ word: String) -> Bool {
        guard bytes.count == word.utf8.count else { return false }
        return zip(bytes, word.utf8).allSatisfy { lowerASCII($0) == lowerASCII($1) }
    }

    /// The tag whose canonical name equals `bytes` ASCII-case-insensitively (`tag_name_parse_i`).
    ///
    /// Unlike `TagType(parsing:)`, Unicode case mappings such as the Kelvin sign never make a name match.
    static func tagType(_ bytes: some Collection<UInt8>) -> TagType? {
        TagType.allCases.first { equalsIgnoringASCIICase(bytes, $0.name) }
    }

    @inline(__always)
    private static func lowerASCII(_ byte: UInt8) -> UInt8 { byte &- 0x41 < 26 ? byte | 0x20 : byte }
}
