// SPDX-License-Identifier: GPL-3.0-or-later

/// A fatal problem in a configuration file: bad syntax, an unknown option, a bad value or an unreadable include.
///
/// The message reads like the one `mpd` 0.23 prints for the same mistake; the location always names the file and,
/// except when a whole file could not be read, the line. A value type; safe from any thread.
public struct ConfigError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where the problem is.
    public var location: ConfigLocation

    /// What is wrong, without the location, e.g. `unrecognized parameter: bogus`.
    public var message: String

    /// The `include` lines that led to `location`'s file, innermost first; empty for the main file.
    public var includedFrom: [ConfigLocation]

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - location: Where the problem is.
    ///   - message: What is wrong.
    ///   - includedFrom: The chain of `include` lines that led there, innermost first.
    public init(location: ConfigLocation, message: String, includedFrom: [ConfigLocation] = []) {
        self.location = location
        self.message = message
        self.includedFrom = includedFrom
    }

    /// Creates an error at a line of a file.
    ///
    /// - Parameters:
    ///   - file: The file's path.
    ///   - line: The 1-based line number, or 0 for the whole file.
    ///   - message: What is wrong.
    public init(file: String, line: Int, message: String) {
        self.init(location: ConfigLocation(file: file, line: line), message: message)
    }

    /// The file the problem is in.
    public var file: String { self.location.file }

    /// The 1-based line the problem is on, or 0 when the whole file could not be read.
    public var line: Int { self.location.line }

    /// One line: `path:line: message`, followed by ` (included from path:line, …)` for included files.
    public var description: String {
        var text = "\(self.location): \(self.message)"
        if !self.includedFrom.isEmpty {
            text += " (included from " + self.includedFrom.map(\.description).joined(separator: ", ") + ")"
        }
        return text
    }
}
