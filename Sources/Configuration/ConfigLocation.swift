// SPDX-License-Identifier: GPL-3.0-or-later

/// A place in a configuration file: the file's path and a 1-based line number.
///
/// A value type; safe from any thread.
public struct ConfigLocation: Sendable, Hashable, CustomStringConvertible {
    /// The file's path, as it was opened (relative paths stay relative).
    public var file: String

    /// The 1-based line number, or 0 when the location is the whole file.
    public var line: Int

    /// Creates a location.
    ///
    /// - Parameters:
    ///   - file: The file's path.
    ///   - line: The 1-based line number, or 0 for the whole file.
    public init(file: String, line: Int) {
        self.file = file
        self.line = line
    }

    /// `path:line`, or just `path` when `line` is 0.
    public var description: String {
        self.line > 0 ? "\(self.file):\(self.line)" : self.file
    }
}
