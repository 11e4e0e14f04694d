// SPDX-License-Identifier: GPL-3.0-or-later

import Model

extension OutputConfiguration {
    /// The plugin parameter `name` as written, or `defaultValue` when the block does not set it (or sets it empty).
    ///
    /// Pure; any thread.
    public func string(_ name: String, default defaultValue: String) -> String {
        guard let value = self.parameters[name], !value.isEmpty else { return defaultValue }
        return value
    }

    /// A yes/no plugin parameter, read as `mpd` reads block booleans (`yes`/`true`/`1`, `no`/`false`/`0`).
    ///
    /// - Throws: `Error in setting "name"; Not a valid boolean ("yes" or "no"): "value"`.
    public func bool(_ name: String, default defaultValue: Bool) throws(OutputError) -> Bool {
        guard let value = self.parameters[name] else { return defaultValue }
        switch value.lowercased() {
        case "yes", "true", "1": return true
        case "no", "false", "0": return false
        default: throw self.settingError(name, "Not a valid boolean (\"yes\" or \"no\"): \"\(value)\"")
        }
    }

    /// A positive integer plugin parameter, read as `mpd` reads them (C `strtol`, nothing after the digits).
    ///
    /// - Throws: `Error in setting "name"; Failed to parse number` or `…; Value must be positive`.
    public func positive(_ name: String, default defaultValue: UInt32) throws(OutputError) -> UInt32 {
        guard let number = try self.long(name) else { return defaultValue }
        guard number > 0 else { throw self.settingError(name, "Value must be positive") }
        // mpd keeps the low 32 bits of a larger value.
        return UInt32(truncatingIfNeeded: number)
    }

    /// A non-negative integer plugin parameter, read as `mpd` reads them (C `strtol`, nothing after the digits; `mpd`
    /// keeps the low 32 bits of a larger value).
    ///
    /// - Throws: `Error in setting "name"; Failed to parse number` or `…; Value must not be negative`.
    public func unsigned(_ name: String, default defaultValue: UInt32) throws(OutputError) -> UInt32 {
        guard let number = try self.long(name) else { return defaultValue }
        guard number >= 0 else { throw self.settingError(name, "Value must not be negative") }
        return UInt32(truncatingIfNeeded: number)
    }

    /// The parameter `name` as `mpd`'s `ParseLong` reads it; `nil` when the block does not set it.
    private func long(_ name: String) throws(OutputError) -> Int64? {
        guard let value = self.parameters[name] else { return nil }
        let bytes = Array(value.utf8)
        let (number, end) = CNumbers.strtol(bytes, from: 0)
        guard end > 0, end == bytes.count else { throw self.settingError(name, "Failed to parse number") }
        return number
    }

    /// `mpd`'s `BlockParam::With`: the reason nested in `Error in setting "name" on line N` (without the line when
    /// the configuration does not know it).
    private func settingError(_ name: String, _ reason: String) -> OutputError {
        let line = self.parameterLines[name].map { " on line \($0)" } ?? ""
        return OutputError("Error in setting \"\(name)\"\(line); \(reason)")
    }
}
