// SPDX-License-Identifier: GPL-3.0-or-later

import ID3Tag
import Model

/// `mpd`'s tag builder rules, applied to what a tag reader reports, in order.
///
/// - `Track` and `Disc`: leading zeros are skipped and the value ends at the first non-digit (`"01/10"` is
///   `1`; `"0"` becomes empty);
/// - empty values are dropped;
/// - invalid UTF-8 sequences become `?` byte by byte, then control characters (< 0x20) become spaces.
///
/// It does not apply `metadata_to_use`: every tag type is kept (including `Comment`, which `mpd` disables by
/// default); the library filters with its configured mask.
public enum TagCollector {
    /// Converts raw items to tag items with `mpd`'s clean-ups.
    public static func tagItems(_ raw: [RawTagItem]) -> [TagItem] {
        raw.compactMap { self.tagItem($0) }
    }

    /// One item, or `nil` when `mpd` would drop it.
    public static func tagItem(_ raw: RawTagItem) -> TagItem? {
        var value = raw.value[...]
        if raw.type == .track || raw.type == .disc {
            let start = value.firstIndex { $0 != 0x30 } ?? value.endIndex
            let end = value[start...].firstIndex { $0 < 0x30 || $0 > 0x39 } ?? value.endIndex
            value = value[start..<end]
        }
        guard !value.isEmpty else { return nil }
        return TagItem(raw.type, self.fixedString(Array(value)))
    }

    /// `mpd`'s `FixTagString`: `?` for each byte that does not start a valid sequence, spaces for controls.
    static func fixedString(_ bytes: [UInt8]) -> String {
        if bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
        var fixed = bytes
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

    /// The length of a valid (in `mpd`'s lenient sense: up to 6 bytes) sequence at `index`, or 0.
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
