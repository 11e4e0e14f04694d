// SPDX-License-Identifier: GPL-3.0-or-later

/// The raw contents of an `mpd.conf`: its parameters and blocks in file order, includes followed.
///
/// Parsing checks the syntax and the option names (see ``ConfigOption``) but not the values; ``Settings`` does
/// that. A repeated non-repeatable parameter is kept here (the last one wins when it is read); a repeated
/// non-repeatable block is an error. A value type; safe from any thread.
public struct ConfigFile: Sendable, Hashable {
    /// Every top-level `name "value"` line, in reading order, included files spliced in at their `include` line.
    public var parameters: [ConfigParameter]

    /// Every `name { … }` block, in reading order.
    public var blocks: [ConfigBlock]

    /// Creates a configuration from parts already parsed.
    ///
    /// - Parameters:
    ///   - parameters: The top-level lines, in order.
    ///   - blocks: The blocks, in order.
    public init(parameters: [ConfigParameter] = [], blocks: [ConfigBlock] = []) {
        self.parameters = parameters
        self.blocks = blocks
    }

    /// Reads and parses the file at `path` and every file it includes.
    ///
    /// Does blocking file I/O.
    ///
    /// - Parameter path: The configuration file; included files are found relative to its directory.
    /// - Throws: ``ConfigError`` naming the file and line of the first problem.
    public init(contentsOf path: String) throws(ConfigError) {
        var parser = ConfigParser()
        try parser.parseFile(atPath: path)
        self.init(parameters: parser.parameters, blocks: parser.blocks)
    }

    /// Parses `text` as if it were the contents of the file at `path`.
    ///
    /// Only `include` lines touch the file system; they are found relative to `path`'s directory.
    ///
    /// - Parameters:
    ///   - text: The configuration text.
    ///   - path: The path reported in errors and locations.
    /// - Throws: ``ConfigError`` naming the file and line of the first problem.
    public init(parsing text: String, path: String) throws(ConfigError) {
        var parser = ConfigParser()
        try parser.parse(Array(text.utf8), path: path)
        self.init(parameters: parser.parameters, blocks: parser.blocks)
    }

    /// The deepest chain of nested `include` lines accepted.
    public static var maximumIncludeDepth: Int { ConfigParser.maximumIncludeDepth }

    /// Every top-level line named `name`, in order.
    public func parameters(named name: String) -> [ConfigParameter] {
        self.parameters.filter { $0.name == name }
    }

    /// The line that counts for a non-repeatable option: the last one named `name`.
    public func parameter(named name: String) -> ConfigParameter? {
        self.parameters.last { $0.name == name }
    }

    /// Every block named `name`, in order.
    public func blocks(named name: String) -> [ConfigBlock] {
        self.blocks.filter { $0.name == name }
    }
}
