// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// The `AudioFormat` operand, parsed as `mpd` 0.23 parses audio formats (`AudioFormatMask.parse` in Model).
enum FilterAudioFormat {
    /// Parses `R:B:C` or `dsdN:C`; with `mask` (the `=~` form) any field may be `*`.
    ///
    /// - Throws: `ACK` code 2 with the parser's message (at most 1023 bytes, as `mpd`'s buffer).
    static func parse(_ text: [UInt8], mask: Bool) throws(AckError) -> AudioFormatMask {
        do {
            return try AudioFormatMask.parse(text, mask: mask)
        } catch {
            throw AckError(.arg, FilterCNumbers.truncated(error.message, toBytes: 1023))
        }
    }
}
