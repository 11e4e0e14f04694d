// SPDX-License-Identifier: GPL-3.0-or-later

/// One `name "value"` line of a configuration file, at the top level or inside a block.
///
/// A value type; safe from any thread.
public struct ConfigParameter: Sendable, Hashable {
    /// The option or key name, e.g. `music_directory` or, inside a block, `type`.
    public var name: String

    /// The value with its quotes removed and its backslash escapes resolved.
    public var value: String

    /// The path of the file the line is in.
    public var file: String

    /// The 1-based line number.
    public var line: Int

    /// Creates a parameter.
    ///
    /// - Parameters:
    ///   - name: The option or key name.
    ///   - value: The unquoted value.
    ///   - file: The path of the file the line is in.
    ///   - line: The 1-based line number.
    public init(name: String, value: String, file: String, line: Int) {
        self.name = name
        self.value = value
        self.file = file
        self.line = line
    }

    /// The file and line together.
    public var location: ConfigLocation { ConfigLocation(file: self.file, line: self.line) }
}
