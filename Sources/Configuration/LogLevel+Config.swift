// SPDX-License-Identifier: GPL-3.0-or-later

import Model

extension LogLevel {
    /// Parses a `log_level` value as `mpd` 0.23 does: case-sensitively.
    ///
    /// Accepts `error`, `warning`, `notice`, `info`, `verbose` (``LogLevel/debug``), and the old names `default`
    /// (notice) and `secure` (info). `mpd` 0.23 refuses `debug`, and so does this.
    ///
    /// - Returns: `nil` for any other text.
    public init?(configValue: String) {
        switch configValue {
        case "error": self = .error
        case "warning": self = .warning
        case "notice", "default": self = .notice
        case "info", "secure": self = .info
        case "verbose": self = .debug
        default: return nil
        }
    }
}
