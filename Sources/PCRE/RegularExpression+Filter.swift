// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// PCRE2 as the engine of `=~` and `!~` filters, as in `mpd`.
extension RegularExpression: FilterRegularExpression {
    /// Compiles a filter operand with `mpd`'s options: `mpdFilter`, or `mpdFilterCaseless` when `caseless`.
    ///
    /// - Throws: `FilterRegularExpressionError` with `mpd`'s text
    ///   (`Error in regex at offset 1: missing closing parenthesis`).
    public convenience init(filterPattern pattern: String, caseless: Bool) throws(FilterRegularExpressionError) {
        do throws(RegularExpressionError) {
            try self.init(pattern, options: caseless ? .mpdFilterCaseless : .mpdFilter)
        } catch {
            throw FilterRegularExpressionError(error.description)
        }
    }
}
