// SPDX-License-Identifier: GPL-3.0-or-later

/// A top-level name that `mpd` 0.23 accepts in `mpd.conf`, and how it may be used.
///
/// The table is `mpd` 0.23.12's, checked by running it: a name not in ``all`` is fatal
/// (`unrecognized parameter`), a ``Kind-swift.enum/block`` name must be followed by `{`, a
/// ``Kind-swift.enum/parameter`` name by a quoted value. Names are case-sensitive. The `include` and
/// `include_optional` directives are not options and are not listed. A value type; safe from any thread.
public struct ConfigOption: Sendable, Hashable {
    /// Whether an option is a `name "value"` line or a `name { … }` block.
    public enum Kind: Sendable, Hashable {
        /// A `name "value"` line.
        case parameter
        /// A `name { … }` block.
        case block
    }

    /// The option name, e.g. `music_directory`.
    public let name: String

    /// Whether the option is a line or a block.
    public let kind: Kind

    /// Whether the option may appear more than once.
    ///
    /// A repeated non-repeatable parameter is allowed and the last one wins; a repeated non-repeatable block is an
    /// error.
    public let isRepeatable: Bool

    /// Whether `mpd` 0.23 accepts the option but ignores it with a "deprecated" warning.
    public let isDeprecated: Bool

    /// Creates a table entry.
    ///
    /// - Parameters:
    ///   - name: The option name.
    ///   - kind: Line or block.
    ///   - isRepeatable: Whether it may appear more than once.
    ///   - isDeprecated: Whether `mpd` ignores it with a warning.
    public init(name: String, kind: Kind, isRepeatable: Bool = false, isDeprecated: Bool = false) {
        self.name = name
        self.kind = kind
        self.isRepeatable = isRepeatable
        self.isDeprecated = isDeprecated
    }

    /// Looks up a top-level name, case-sensitively.
    ///
    /// - Returns: `nil` when `mpd` 0.23 does not know the name.
    public static func named(_ name: String) -> ConfigOption? {
        ConfigOption.byName[name]
    }

    /// Every option `mpd` 0.23.12 accepts, parameters first, then blocks.
    public static let all: [ConfigOption] = parameters + blocks

    private static let byName: [String: ConfigOption] = Dictionary(
        uniqueKeysWithValues: ConfigOption.all.map { ($0.name, $0) })

    private static let parameters: [ConfigOption] =
        [
            "music_directory", "playlist_directory", "follow_inside_symlinks", "follow_outside_symlinks", "db_file",
            "sticker_file", "log_file", "pid_file", "state_file", "state_file_interval", "restore_paused", "user",
            "group", "port", "log_level", "zeroconf_name", "zeroconf_enabled", "default_permissions",
            "local_permissions", "audio_output_format", "mixer_type", "replaygain", "replaygain_preamp",
            "replaygain_missing_preamp", "replaygain_limit", "volume_normalization", "samplerate_converter",
            "audio_buffer_size", "connection_timeout", "max_connections", "max_playlist_length",
            "max_command_list_size", "max_output_buffer_size", "filesystem_charset", "metadata_to_use",
            "save_absolute_paths_in_playlists", "auto_update", "auto_update_depth",
        ].map { ConfigOption(name: $0, kind: .parameter) }
        + ["bind_to_address", "password", "host_permissions"].map {
            ConfigOption(name: $0, kind: .parameter, isRepeatable: true)
        }
        + [
            "buffer_before_play", "http_proxy_host", "http_proxy_port", "http_proxy_user", "http_proxy_password",
            "id3v1_encoding", "gapless_mp3_playback", "despotify_user", "despotify_password",
            "despotify_high_bitrate",
        ].map { ConfigOption(name: $0, kind: .parameter, isDeprecated: true) }

    private static let blocks: [ConfigOption] =
        ["audio_output", "decoder", "input", "playlist_plugin", "filter", "neighbors"].map {
            ConfigOption(name: $0, kind: .block, isRepeatable: true)
        }
        + ["input_cache", "resampler", "database"].map { ConfigOption(name: $0, kind: .block) }
}
