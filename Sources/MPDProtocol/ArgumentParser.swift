// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// Command-argument parsers with `mpd`'s rules and error texts (all `ACK` code 2).
public enum ArgumentParser {
    /// Whether `name` is one or more ASCII letters, digits or bytes of `punctuation`, as `mpd` checks the names
    /// clients make up: partitions (`-_`), channels (`_.:-`), output attributes (`_`).
    public static func isName(_ name: String, punctuation: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { byte in
                (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                    || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
                    || punctuation.utf8.contains(byte)
            }
    }

    /// Parses an unsigned number as C's `strtoul` does, refusing trailing junk.
    ///
    /// - Throws: `Integer expected: <arg>` when it is not a number; `Number too large: <arg>` above `maximum`
    ///   (a leading `-` wraps around to a huge value, as it does in `mpd`).
    public static func unsigned(_ text: String, maximum: UInt64 = UInt64(UInt32.max)) throws(AckError) -> UInt64 {
        guard let (value, negative, overflow) = parseInteger(text) else {
            throw AckError(.arg, "Integer expected: \(text)")
        }
        if overflow || negative && value != 0 || value > maximum {
            throw AckError(.arg, "Number too large: \(text)")
        }
        return value
    }

    /// Parses a signed number as `strtol` does, refusing trailing junk.
    ///
    /// - Throws: `Integer expected: <arg>`; `Number too large: <arg>` outside `Int32`.
    public static func signed(_ text: String) throws(AckError) -> Int {
        guard let (value, negative, overflow) = parseInteger(text) else {
            throw AckError(.arg, "Integer expected: \(text)")
        }
        if overflow || value > UInt64(Int32.max) + (negative ? 1 : 0) {
            throw AckError(.arg, "Number too large: \(text)")
        }
        return negative ? -Int(value) : Int(value)
    }

    /// Parses `0` or `1` as `mpd` does, with `strtol` (so ` 1`, `+1` and `01` are accepted too).
    ///
    /// - Throws: `Boolean (0/1) expected: <arg>`.
    public static func bool(_ text: String) throws(AckError) -> Bool {
        guard let (value, negative, overflow) = parseInteger(text), !overflow, value <= 1, !negative || value == 0
        else {
            throw AckError(.arg, "Boolean (0/1) expected: \(text)")
        }
        return value == 1
    }

    /// Parses a number as `mpd`'s `ParseCommandArgU32` does: `strtoul` with no bound check, then truncated to 32
    /// bits (so `-1` is 4294967295).
    ///
    /// - Throws: `Integer expected: <arg>`.
    public static func u32(_ text: String) throws(AckError) -> UInt32 {
        let bytes = Array(text.utf8)
        let (value, end) = CNumbers.strtoul(bytes, from: 0)
        guard end > 0, end == bytes.count else { throw AckError(.arg, "Integer expected: \(text)") }
        return UInt32(truncatingIfNeeded: value)
    }

    /// Parses a C float as `strtof` does, refusing trailing junk.
    ///
    /// - Throws: `Float expected: <arg>`.
    public static func float(_ text: String) throws(AckError) -> Double {
        var trimmed = Substring(text)
        while let first = trimmed.first, first == " " || first == "\t" || first == "\n" {
            trimmed = trimmed.dropFirst()
        }
        guard !trimmed.isEmpty, let value = Double(String(trimmed)) else {
            throw AckError(.arg, "Float expected: \(text)")
        }
        return value
    }

    /// `strtoul`/`strtol` digits: optional leading blanks, an optional sign, decimal digits, nothing after.
    private static func parseInteger(_ text: String) -> (UInt64, negative: Bool, overflow: Bool)? {
        let bytes = Array(text.utf8)
        guard let (magnitude, negative, overflow, end) = CNumbers.scan(bytes, from: 0), end == bytes.count else {
            return nil
        }
        return (magnitude, negative, overflow)
    }
}
