// SPDX-License-Identifier: GPL-3.0-or-later

/// One `name { … }` block of a configuration file, such as `audio_output`.
///
/// Keys are unique within a block; the parser rejects a repeated key. A value type; safe from any thread.
public struct ConfigBlock: Sendable, Hashable {
    /// The block name, e.g. `audio_output`.
    public var name: String

    /// The path of the file the block is in.
    public var file: String

    /// The 1-based line of the `name {` line.
    public var line: Int

    /// The `key "value"` lines inside the block, in file order.
    public var params: [ConfigParameter]

    /// Creates a block.
    ///
    /// - Parameters:
    ///   - name: The block name.
    ///   - file: The path of the file the block is in.
    ///   - line: The 1-based line of the opening line.
    ///   - params: The key lines, in file order.
    public init(name: String, file: String, line: Int, params: [ConfigParameter] = []) {
        self.name = name
        self.file = file
        self.line = line
        self.params = params
    }

    /// The file and opening line together.
    public var location: ConfigLocation { ConfigLocation(file: self.file, line: self.line) }

    /// The key line named `key`, if the block has one.
    ///
    /// - Parameter key: The key name, matched case-sensitively.
    public func parameter(named key: String) -> ConfigParameter? {
        self.params.first { $0.name == key }
    }

    /// The value of the key named `key`, if the block has one.
    public subscript(key: String) -> String? {
        self.parameter(named: key)?.value
    }
}
