// SPDX-License-Identifier: GPL-3.0-or-later

/// A `neighbors` block: the neighbor plugin it starts, as `mpd` 0.23.12 reads it (`NeighborGlue::Init`).
public struct NeighborSetting: Sendable, Hashable {
    /// Debian's `mpd`'s neighbor plugins, in its registry's order.
    public static let pluginNames = ["smbclient", "upnp", "udisks"]
    /// The plugins Fermata has; a block naming another of ``pluginNames`` is warned about and ignored.
    public static let supportedPluginNames: Set<String> = ["smbclient", "udisks"]

    /// The block's `plugin`.
    public var plugin: String
    /// Where the block is.
    public var location: ConfigLocation

    /// Whether Fermata runs the plugin.
    public var isSupported: Bool { Self.supportedPluginNames.contains(self.plugin) }

    /// The block's settings; throws `Missing "plugin" configuration` or `No such neighbor plugin: NAME` as `mpd`
    /// does, at the block's line.
    public init(block: ConfigBlock) throws(ConfigError) {
        guard let plugin = block["plugin"] else {
            throw ConfigError(location: block.location, message: "Missing \"plugin\" configuration")
        }
        guard Self.pluginNames.contains(plugin) else {
            throw ConfigError(location: block.location, message: "No such neighbor plugin: \(plugin)")
        }
        self.plugin = plugin
        self.location = block.location
    }
}
