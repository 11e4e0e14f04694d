// SPDX-License-Identifier: GPL-3.0-or-later

/// `mpd`'s `FixTagString`, which every tag value passes through before it is stored: each byte that does not
/// start a valid (in `mpd`'s lenient sense: up to 6 bytes) UTF-8 sequence becomes `?`, then every control
/// character (below 0x20) a space. Pure.
public enum TagString {
    /// The value `mpd` stores for `bytes`.
    public static func fixed(_ bytes: some Collection<UInt8>) -> String {
        if bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
        var fixed = Array(bytes)
        var index = 0
        while index < fixed.count {
            let length = self.sequenceLength(fixed, index)
            if length == 0 {
                fixed[index] = 0x3F
                index += 1
            } else {
                index += length
            }
        }
        for position in fixed.indices where fixed[position] < 0x20 { fixed[position] = 0x20 }
        return String(decoding: fixed, as: UTF8.self)
    }

    /// The length of a valid sequence at `index`, or 0.
    private static func sequenceLength(_ bytes: [UInt8], _ index: Int) -> Int {
        let lead = bytes[index]
        let length: Int
        switch lead {
        case 0x00..<0x80: return 1
        case 0xC0..<0xE0: length = 2
        case 0xE0..<0xF0: length = 3
        case 0xF0..<0xF8: length = 4
        case 0xF8..<0xFC: length = 5
        case 0xFC..<0xFE: length = 6
        default: return 0
        }
        guard index + length <= bytes.count else { return 0 }
        for offset in 1..<length where bytes[index + offset] & 0xC0 != 0x80 { return 0 }
        return length
    }
}
