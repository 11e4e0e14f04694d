// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

/// The `decoder { plugin "…" … }` blocks of a configuration, read as `mpd` 0.23.12 reads them
/// (`decoder/DecoderList.cxx`, `config/Block.cxx`).
///
/// - Every block must name its `plugin`: one without is fatal (`block without 'plugin' in line N`).
/// - A plugin is configured by the FIRST block naming it; later blocks for it, and blocks naming a plugin the
///   program does not have, are ignored silently.
/// - `enabled "no"` leaves the plugin out (it then never scans or decodes anything and is absent from
///   `decoders`); the value is checked as a boolean.
/// - Each key of a block whose plugin is enabled that the plugin did not read is warned about once started:
///   `option 'x' on line N was not recognized` (``DecoderPluginSettings/unread``, ``BlockCheck``).
///
/// A value type; safe from any thread.
public struct DecoderBlocks: Sendable, Hashable {
    /// The blocks, in file order.
    public let blocks: [ConfigBlock]
    /// The key naming a block's plugin: `plugin` (`decoder`, `input`) or `name` (`playlist_plugin`).
    public let key: String
    /// The home directory a leading `~` of a path setting stands for (the configuration's `$HOME`).
    public var home = "/"

    /// Checks the blocks.
    ///
    /// - Parameters:
    ///   - blocks: The blocks, in file order.
    ///   - key: The key naming each block's plugin.
    /// - Throws: `ConfigError` at the first block without that key, with `mpd`'s message.
    public init(_ blocks: [ConfigBlock], key: String = "plugin") throws(ConfigError) {
        for block in blocks where block[key] == nil {
            throw ConfigError(location: block.location, message: "block without '\(key)' in line \(block.line)")
        }
        self.blocks = blocks
        self.key = key
    }

    /// No block at all: every plugin with its defaults.
    public static let none = DecoderBlocks(unchecked: [])

    /// No `playlist_plugin` block at all.
    public static let noPlaylistPlugins = DecoderBlocks(unchecked: [], key: "name")

    private init(unchecked blocks: [ConfigBlock], key: String = "plugin") {
        self.blocks = blocks
        self.key = key
    }

    /// What the plugin named `plugin` reads: its block (the first naming it), or an empty one.
    ///
    /// - Throws: `ConfigError` when its `enabled` is not a boolean (`Error in setting "enabled" on line N; …`).
    /// - Returns: `nil` when the block says `enabled "no"`.
    public func settings(forPlugin plugin: String) throws(ConfigError) -> DecoderPluginSettings? {
        var settings = DecoderPluginSettings(
            plugin: plugin, block: self.blocks.first { $0[self.key] == plugin }, home: self.home)
        _ = settings.string(self.key)
        guard try settings.bool("enabled") ?? true else { return nil }
        return settings
    }
}

/// One decoder plugin's `decoder` block, as the plugin's initialization reads it: each accessor marks its key
/// as read (`mpd`'s `used` flag), so ``unread`` can name the keys nobody read. Values are parsed with
/// `mpd`'s rules and error texts; a missing key (or no block at all) gives `nil`, and the plugin applies its
/// own default.
///
/// A value type, used by one thread while the plugin list is built.
public struct DecoderPluginSettings: Sendable, Hashable {
    /// The plugin's name, as in `plugin "…"`.
    public let plugin: String
    /// The block, or `nil` when none names the plugin.
    public let block: ConfigBlock?
    /// What a leading `~` of a path stands for.
    public let home: String
    private var read: Set<String> = []

    /// Settings for `plugin` from `block`.
    ///
    /// - Parameters:
    ///   - plugin: The plugin's name.
    ///   - block: Its block, or `nil` for none (every key then missing).
    ///   - home: What a leading `~` of a path stands for.
    public init(plugin: String, block: ConfigBlock?, home: String = "/") {
        self.plugin = plugin
        self.block = block
        self.home = home
    }

    /// Whether the block has the key (`mpd`'s `GetBlockParam(key) != nullptr`), which counts as reading it.
    public mutating func contains(_ key: String) -> Bool { self.parameter(key) != nil }

    /// The raw value of a key.
    public mutating func string(_ key: String) -> String? { self.parameter(key)?.value }

    /// A path (`mpd`'s `ConfigBlock::GetPath`): a leading `~` or `~/` is the home directory, `~user/` that
    /// user's.
    ///
    /// - Throws: `ConfigError` `not an absolute path: x` or `no such user: x`, as `mpd`'s `ParsePath` words them.
    public mutating func path(_ key: String) throws(ConfigError) -> String? {
        guard let parameter = self.parameter(key) else { return nil }
        return try ConfigValue.path(parameter, home: self.home)
    }

    /// A boolean (`yes`/`true`/`1`, `no`/`false`/`0`, any case).
    ///
    /// - Throws: `ConfigError` `Error in setting "key" on line N; Not a valid boolean ("yes" or "no"): "x"`.
    public mutating func bool(_ key: String) throws(ConfigError) -> Bool? {
        guard let parameter = self.parameter(key) else { return nil }
        return try Self.inSetting(parameter) { (parameter) throws(ConfigError) in try ConfigValue.bool(parameter) }
    }

    /// A decimal number of zero or more (`GetUnsignedValue`).
    ///
    /// - Throws: `ConfigError` `Error in setting "key" on line N; Failed to parse number` (or `Value must not be
    ///   negative`).
    public mutating func unsigned(_ key: String) throws(ConfigError) -> Int? {
        guard let parameter = self.parameter(key) else { return nil }
        return try Self.inSetting(parameter) { (parameter) throws(ConfigError) in
            try ConfigValue.unsigned(parameter)
        }
    }

    /// A decimal number above zero (`GetPositiveValue`).
    ///
    /// - Throws: `ConfigError` `Error in setting "key" on line N; Value must be positive` (or `Failed to parse
    ///   number`).
    public mutating func positive(_ key: String) throws(ConfigError) -> Int? {
        guard let parameter = self.parameter(key) else { return nil }
        return try Self.inSetting(parameter) { (parameter) throws(ConfigError) in
            try ConfigValue.positive(parameter)
        }
    }

    /// A signed `int` as C `strtol` with base 0 reads it (`GetBlockValue(key, int)`): decimal, `0x` hex or `0`
    /// octal, with a sign; the whole value must be the number.
    ///
    /// - Throws: `ConfigError` `Not a valid number in line N`.
    public mutating func integer(_ key: String) throws(ConfigError) -> Int? {
        guard let parameter = self.parameter(key) else { return nil }
        let failure = ConfigError(location: parameter.location, message: "Not a valid number in line \(parameter.line)")
        guard !parameter.value.utf8.contains(0) else { throw failure }
        var end: UnsafeMutablePointer<CChar>?
        let (number, complete) = parameter.value.withCString { text in
            let number = strtol(text, &end, 0)
            return (number, end != nil && end != UnsafeMutablePointer(mutating: text) && end?.pointee == 0)
        }
        guard complete else { throw failure }
        // mpd returns the long as an int: the low 32 bits.
        return Int(Int32(truncatingIfNeeded: number))
    }

    /// An error at the block (its opening line) with a message of the plugin's own, such as `mpd`'s modplug
    /// `Invalid loop count in line 12: -2`.
    public func error(_ message: String) -> ConfigError {
        ConfigError(location: self.block?.location ?? ConfigLocation(file: "", line: 0), message: message)
    }

    /// The lines of the block nobody has read, in block order (none without a block): `mpd` warns about each once
    /// started (``BlockCheck``).
    public var unread: [ConfigParameter] {
        guard let block = self.block else { return [] }
        return block.params.filter { !self.read.contains($0.name) }
    }

    private mutating func parameter(_ key: String) -> ConfigParameter? {
        guard let parameter = self.block?.parameter(named: key) else { return nil }
        self.read.insert(key)
        return parameter
    }

    /// `mpd`'s `BlockParam::With`: a parse error nested in `Error in setting "key" on line N`.
    private static func inSetting<Value>(
        _ parameter: ConfigParameter, _ parse: (ConfigParameter) throws(ConfigError) -> Value
    ) throws(ConfigError) -> Value {
        do {
            return try parse(parameter)
        } catch {
            throw ConfigError(
                location: parameter.location,
                message: "Error in setting \"\(parameter.name)\" on line \(parameter.line); \(error.message)")
        }
    }
}
