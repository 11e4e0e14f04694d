// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import RawText

/// Text helpers with `mpd`'s exact rules, for the line-based plugins. Pure.
enum TextLines {
    /// The lines `mpd`'s `TextInputStream` reads from `bytes`: split at `\n` with one `\r` before it
    /// removed; a line longer than its 4096-byte buffer holds is cut every 4095 bytes (the rest is the next
    /// line); a last line without a newline is kept. Each line ends at its first NUL byte, as the C string
    /// the plugins see.
    static func lines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        let capacity = 4095
        var lines: [ArraySlice<UInt8>] = []
        var start = 0
        while start < bytes.count {
            let limit = min(bytes.count, start + capacity)
            var line: ArraySlice<UInt8>
            if let newline = bytes[start..<limit].firstIndex(of: UInt8(ascii: "\n")) {
                line = bytes[start..<newline]
                if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
                start = newline + 1
            } else {
                line = bytes[start..<limit]
                start = limit
            }
            if let nul = line.firstIndex(of: 0) { line = line[..<nul] }
            lines.append(line)
        }
        return lines
    }

    /// `mpd`'s whitespace for stripping: every byte up to 0x20.
    static func isWhitespace(_ byte: UInt8) -> Bool { byte <= 0x20 }

    /// `StripLeft`.
    static func stripLeft(_ text: ArraySlice<UInt8>) -> ArraySlice<UInt8> { text.drop(while: Self.isWhitespace) }

    /// `StripRight`.
    static func stripRight(_ text: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var text = text
        while let last = text.last, Self.isWhitespace(last) { text.removeLast() }
        return text
    }

    /// `Strip`: both ends.
    static func strip(_ text: ArraySlice<UInt8>) -> ArraySlice<UInt8> { Self.stripRight(Self.stripLeft(text)) }

    /// Whether `text` equals `other`, ASCII letters compared case-insensitively.
    static func equalsIgnoringCase(_ text: some Collection<UInt8>, _ other: String) -> Bool {
        text.count == other.utf8.count && URIScheme.hasPrefixIgnoringCase(text, other)
    }

    /// C's `isspace` in the C locale.
    private static func isCSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) }

    /// C's `strtol(text, &end, 10)` on a 64-bit system: the value (clamped on overflow) and the bytes
    /// after the number (all of `text` when there is none).
    static func strtol(_ text: ArraySlice<UInt8>) -> (value: Int64, rest: ArraySlice<UInt8>) {
        let (negative, magnitude, rest) = Self.parseInteger(text)
        guard let magnitude else { return (0, text) }
        if negative {
            return (magnitude > UInt64(Int64.max) + 1 ? Int64.min : Int64(truncatingIfNeeded: 0 &- magnitude), rest)
        }
        return (magnitude > UInt64(Int64.max) ? Int64.max : Int64(magnitude), rest)
    }

    /// C's `strtoul(text, nullptr, 10)` on a 64-bit system: `ULONG_MAX` on overflow, a negative number
    /// negated modulo 2⁶⁴.
    static func strtoul(_ text: ArraySlice<UInt8>) -> UInt64 {
        let (negative, magnitude, _) = Self.parseInteger(text)
        guard let magnitude else { return 0 }
        return negative ? 0 &- magnitude : magnitude
    }

    /// C's `atoi`: `strtol` truncated to 32 bits.
    static func atoi(_ text: ArraySlice<UInt8>) -> Int32 { Int32(truncatingIfNeeded: Self.strtol(text).value) }

    /// Leading space, a sign, decimal digits; the magnitude is `UInt64.max` on overflow, `nil` without
    /// digits.
    private static func parseInteger(
        _ text: ArraySlice<UInt8>
    ) -> (negative: Bool, magnitude: UInt64?, rest: ArraySlice<UInt8>) {
        var rest = text.drop(while: Self.isCSpace)
        var negative = false
        if let sign = rest.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
            negative = sign == UInt8(ascii: "-")
            rest = rest.dropFirst()
        }
        var value: UInt64 = 0
        var digits = 0
        var overflow = false
        while let digit = rest.first, digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") {
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (plus, o2) = times.addingReportingOverflow(UInt64(digit - UInt8(ascii: "0")))
            if o1 || o2 { overflow = true }
            value = plus
            digits += 1
            rest = rest.dropFirst()
        }
        guard digits > 0 else { return (false, nil, text) }
        return (negative, overflow ? UInt64.max : value, rest)
    }

    /// A URI from the file's bytes, bytes that are not UTF-8 kept as escapes.
    static func uri(_ bytes: some Collection<UInt8>) -> String { RawText.decode(bytes) }
}
