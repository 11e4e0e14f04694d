// SPDX-License-Identifier: GPL-3.0-or-later

import Configuration
import Testing

@testable import Playlists

/// The registry built from `playlist_plugin` blocks, as `mpd` 0.23.12's `playlist_list_global_init` builds
/// its list (messages checked against `mpd --no-daemon` with the same blocks).
struct PlaylistRegistryConfigurationTests {
    private static let path = "/etc/fermata/mpd.conf"

    private func configured(_ text: String) throws -> PlaylistRegistry.Configured {
        let blocks = try ConfigFile(parsing: text, path: Self.path).blocks(named: "playlist_plugin")
        return try PlaylistRegistry.configured(PlaylistPluginBlocks(blocks, key: "name"))
    }

    private func block(_ name: String, _ keys: [(String, String)]) -> String {
        "playlist_plugin {\n    name \"\(name)\"\n" + keys.map { "    \($0) \"\($1)\"\n" }.joined() + "}\n"
    }

    @Test func withoutBlocksEveryPluginIsOnAndCueSheetsAreDirectories() throws {
        let configured = try self.configured("")
        #expect(configured.registry.plugins.map(\.name) == PlaylistRegistry.catalogue.map(\.name))
        #expect(configured.registry.directoryPluginNames == ["cue"])
        #expect(configured.registry.readsEmbeddedCueSheets)
        #expect(configured.warnings.isEmpty && configured.unread.isEmpty)
        for suffix in ["m3u", "pls", "cue", "flac", "mp4a", "OGG"] {
            #expect(configured.registry.listsAsPlaylist(suffix: suffix), "\(suffix)")
        }
        #expect(!configured.registry.listsAsPlaylist(suffix: "txt"))
    }

    @Test func disabledPluginsAreLeftOutAndTheirBlocksUnread() throws {
        let text =
            self.block("m3u", [("enabled", "no"), ("unknown", "1")]) + self.block("embcue", [("enabled", "false")])
            + self.block("flac", [("enabled", "0")])
        let configured = try self.configured(text)
        #expect(!configured.registry.plugins.contains { $0.name == "m3u" })
        // extm3u still claims .m3u files.
        #expect(configured.registry.supports(suffix: "m3u"))
        #expect(!configured.registry.readsEmbeddedCueSheets)
        #expect(!configured.registry.listsAsPlaylist(suffix: "mp4a"))
        #expect(!configured.registry.listsAsPlaylist(suffix: "flac"))
        #expect(configured.warnings.isEmpty && configured.unread.isEmpty)
    }

    @Test func asDirectoryGoesByTheFirstPluginClaimingTheSuffix() throws {
        let text =
            self.block("cue", [("as_directory", "no")]) + self.block("m3u", [("as_directory", "yes")])
            + self.block("pls", [("as_directory", "yes")])
        let registry = try self.configured(text).registry
        #expect(!registry.listsAsDirectory(suffix: "cue"))
        #expect(registry.listsAsDirectory(suffix: "pls"))
        // extm3u comes first for .m3u, and its as_directory is off.
        #expect(!registry.listsAsDirectory(suffix: "m3u"))
        let sheet = try self.configured(self.block("extm3u", [("as_directory", "yes")])).registry
        #expect(sheet.listsAsDirectory(suffix: "M3U"))
        #expect(sheet.listsAsDirectory(suffix: "cue"))
    }

    @Test func theFirstBlockNamingAPluginConfiguresIt() throws {
        let registry = try self.configured(self.block("pls", [("as_directory", "yes")]) + self.block("pls", []))
            .registry
        #expect(registry.listsAsDirectory(suffix: "pls"))
    }

    @Test func unreadKeysOfEnabledBlocksAndMissingPluginsAreReported() throws {
        let text =
            self.block("soundcloud", [("apikey", "x")]) + self.block("pls", [("foo", "bar")])
            + self.block("nosuch", [("x", "y")])
        let configured = try self.configured(text)
        #expect(
            configured.warnings == [
                "\(Self.path):1: playlist plugin \"soundcloud\" is not supported by Fermata yet and is ignored"
            ])
        #expect(configured.unread == [ConfigParameter(name: "foo", value: "bar", file: Self.path, line: 7)])
    }

    @Test func badValuesAndNamelessBlocksAreFatal() throws {
        #expect(throws: ConfigError.self) { try self.configured(self.block("pls", [("as_directory", "maybe")])) }
        #expect(throws: ConfigError.self) { try self.configured(self.block("pls", [("enabled", "maybe")])) }
        do {
            _ = try self.configured("playlist_plugin {\n    as_directory \"yes\"\n}\n")
            Issue.record("a block without name was accepted")
        } catch let error as ConfigError {
            #expect(error.message == "block without 'name' in line 1")
        }
    }
}
