// SPDX-License-Identifier: GPL-3.0-or-later

import Configuration

extension PlaylistRegistry {
    /// The registry a configuration's `playlist_plugin` blocks describe, and the warnings for them.
    public struct Configured: Sendable {
        /// The enabled plugins.
        public var registry: PlaylistRegistry
        /// In block order, a line for each enabled block of a plugin Fermata lacks.
        public var warnings: [String]
        /// The lines of the enabled plugins' blocks nothing read, which `mpd` warns about once started
        /// (`BlockCheck`).
        public var unread: [ConfigParameter]
    }

    /// The plugins `blocks` enable, as `mpd`'s `playlist_list_global_init` reads them: for each of its plugins
    /// the first block naming it; `enabled "no"` leaves it out (and its block unread: no warning); otherwise
    /// `as_directory` (a boolean, on by default for cue alone) says whether its files are also directories of
    /// their songs.
    ///
    /// - Throws: `ConfigError` for an `enabled` or `as_directory` that is not a boolean.
    public static func configured(_ blocks: PlaylistPluginBlocks) throws(ConfigError) -> Configured {
        var plugins: [PlaylistPlugin] = []
        var directories: Set<String> = []
        var warnings: [(block: Int, line: String)] = []
        var unread: [ConfigParameter] = []
        func read(_ name: String, asDirectoryByDefault: Bool) throws(ConfigError) -> Bool {
            guard var settings = try blocks.settings(forPlugin: name) else { return false }
            if try settings.bool("as_directory") ?? asDirectoryByDefault { directories.insert(name) }
            if name == "soundcloud" { _ = settings.string("apikey") }  // mpd's plugin reads it
            unread += settings.unread
            if let block = settings.block, let index = blocks.blocks.firstIndex(of: block),
                Self.missingNames.contains(name)
            {
                let line =
                    "\(block.location): playlist plugin \"\(name)\" is not supported by Fermata yet and is ignored"
                warnings.append((index, line))
            }
            return true
        }
        for plugin in Self.catalogue where try read(plugin.name, asDirectoryByDefault: plugin.name == "cue") {
            plugins.append(plugin)
        }
        var flac = false
        for name in Self.missingNames {
            let enabled = try read(name, asDirectoryByDefault: false)
            if name == "flac" { flac = enabled }
        }
        let embeddedCue = try read(Self.embeddedCueName, asDirectoryByDefault: false)
        let registry = PlaylistRegistry(
            plugins: plugins, directoryPluginNames: directories, readsEmbeddedCueSheets: embeddedCue,
            listsFlacFilesAsPlaylists: flac)
        return Configured(
            registry: registry, warnings: warnings.sorted { $0.block < $1.block }.map(\.line), unread: unread)
    }
}
