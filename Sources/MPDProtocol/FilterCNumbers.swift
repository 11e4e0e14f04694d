// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// C-string helpers for the filter parser: arguments as `mpd` sees them (up to the first NUL), bounded error
/// texts, ASCII case-insensitive keywords. The number parsers themselves are `Model.CNumbers`.
enum FilterCNumbers {
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
