// SPDX-License-Identifier: GPL-3.0-or-later

import Testing

@testable import Configuration

struct ConfigOptionTests {
    @Test func namesAreUnique() {
        #expect(Set(ConfigOption.all.map(\.name)).count == ConfigOption.all.count)
    }

    /// Every name in `mpd` 0.23.12's table (probed), and whether it is a repeatable or deprecated parameter.
    @Test(arguments: [
        "music_directory", "playlist_directory", "follow_inside_symlinks", "follow_outside_symlinks", "db_file",
        "sticker_file", "log_file", "pid_file", "state_file", "state_file_interval", "restore_paused", "user", "group",
        "port", "log_level", "zeroconf_name", "zeroconf_enabled", "default_permissions", "local_permissions",
        "audio_output_format", "mixer_type", "replaygain", "replaygain_preamp", "replaygain_missing_preamp",
        "replaygain_limit", "volume_normalization", "samplerate_converter", "audio_buffer_size", "connection_timeout",
        "max_connections", "max_playlist_length", "max_command_list_size", "max_output_buffer_size",
        "filesystem_charset", "metadata_to_use", "save_absolute_paths_in_playlists", "auto_update",
        "auto_update_depth",
    ])
    func knowsASingleParameter(name: String) throws {
        let option = try #require(ConfigOption.named(name))
        #expect(option == ConfigOption(name: name, kind: .parameter))
    }

    @Test(arguments: ["bind_to_address", "password", "host_permissions"])
    func knowsARepeatableParameter(name: String) throws {
        #expect(ConfigOption.named(name) == ConfigOption(name: name, kind: .parameter, isRepeatable: true))
    }

    @Test(arguments: [
        "buffer_before_play", "http_proxy_host", "http_proxy_port", "http_proxy_user", "http_proxy_password",
        "id3v1_encoding", "gapless_mp3_playback", "despotify_user", "despotify_password", "despotify_high_bitrate",
    ])
    func knowsADeprecatedParameter(name: String) throws {
        #expect(ConfigOption.named(name) == ConfigOption(name: name, kind: .parameter, isDeprecated: true))
    }

    @Test(arguments: [
        ("audio_output", true), ("decoder", true), ("input", true), ("playlist_plugin", true), ("filter", true),
        ("neighbors", true), ("input_cache", false), ("resampler", false), ("database", false),
    ])
    func knowsABlock(name: String, isRepeatable: Bool) {
        #expect(ConfigOption.named(name) == ConfigOption(name: name, kind: .block, isRepeatable: isRepeatable))
    }

    @Test func hasExactlyTheProbedNames() {
        #expect(ConfigOption.all.count == 38 + 3 + 10 + 9)
    }

    @Test(arguments: [
        "include", "include_optional", "mixramp_analyzer", "archive_plugin", "partition", "zeroconf_port",
        "log_timestamp", "Music_directory", "",
    ])
    func doesNotKnow(name: String) {
        #expect(ConfigOption.named(name) == nil)
    }

    @Test func everyOptionParsesInItsOwnShape() throws {
        var text = ""
        for option in ConfigOption.all {
            switch option.kind {
            case .parameter: text += "\(option.name) \"x\"\n"
            case .block: text += "\(option.name) {\n}\n"
            }
        }
        let file = try ConfigFile(parsing: text, path: "/all.conf")
        #expect(file.parameters.count + file.blocks.count == ConfigOption.all.count)
    }
}
