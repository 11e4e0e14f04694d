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

    /// `mpd`'s `FixTagString` (see `TagString.fixed`).
    static func fixedString(_ bytes: [UInt8]) -> String { TagString.fixed(bytes) }
}
