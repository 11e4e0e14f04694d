// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Model

/// `mpd`'s ReplayGain name/value parsing, shared by the ID3 and APE readers.
public enum ReplayGainParser {
    /// Applies one name/value pair if the name (ASCII case-insensitively) is `replaygain_track_gain`,
    /// `replaygain_album_gain`, `replaygain_track_peak` or `replaygain_album_peak`; the value is parsed like
    /// C's `strtof` (leading number, 0 if none).
    ///
    /// - Returns: whether the name was one of the four.
    public static func apply(name: [UInt8], value: [UInt8], to info: inout ReplayGainInfo) -> Bool {
        let lowered = name.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }
        let key = String(decoding: lowered, as: UTF8.self)
        switch key {
        case "replaygain_track_gain": info.trackGain = Self.parseFloat(value)
        case "replaygain_album_gain": info.albumGain = Self.parseFloat(value)
        case "replaygain_track_peak": info.trackPeak = Self.parseFloat(value)
        case "replaygain_album_peak": info.albumPeak = Self.parseFloat(value)
        default: return false
        }
        return true
    }

    /// C's `strtof` on the bytes up to the first NUL, widened to `Double`.
    static func parseFloat(_ bytes: [UInt8]) -> Double {
        var text = Array(bytes.prefix { $0 != 0 }).map { CChar(bitPattern: $0) }
        text.append(0)
        return Double(strtof(text, nil))
    }
}
