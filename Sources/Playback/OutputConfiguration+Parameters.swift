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
    /// - Throws: `Error in setting "name" on line N; Not a valid boolean ("yes" or "no"): "value"`.
    public func bool(_ name: String, default defaultValue: Bool) throws(OutputError) -> Bool {
        do {
            return try self.parameters.bool(name) ?? defaultValue
        } catch {
            throw OutputError(error.message)
        }
    }

    /// A positive integer plugin parameter, read as `mpd` reads them (C `strtol`, nothing after the digits).
    ///
    /// - Throws: `Error in setting "name" on line N; Failed to parse number` or `…; Value must be positive`.
    public func positive(_ name: String, default defaultValue: UInt32) throws(OutputError) -> UInt32 {
        do {
            return try self.parameters.positive(name) ?? defaultValue
        } catch {
            throw OutputError(error.message)
        }
    }

    /// An integer plugin parameter of zero or more, read as `mpd`'s `GetBlockValue(name, unsigned)`.
    ///
    /// - Throws: `Error in setting "name" on line N; Failed to parse number` or `…; Value must not be negative`.
    public func unsigned(_ name: String, default defaultValue: UInt32) throws(OutputError) -> UInt32 {
        do {
            return try self.parameters.unsigned(name) ?? defaultValue
        } catch {
            throw OutputError(error.message)
        }
    }
}
