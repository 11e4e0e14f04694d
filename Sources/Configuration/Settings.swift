// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// The typed settings of an `mpd.conf`, with `mpd` 0.23.12's defaults for everything not set.
///
/// Build one with ``init(file:environment:)``; ``init()`` gives the defaults alone. Paths have `~` expanded and
/// are absolute. Options `mpd` accepts but Fermata does not act on yet are still checked where a type is given
/// here, and are listed in ``warnings``. A value type; safe from any thread.
public struct Settings: Sendable, Hashable {
    /// The top-level options Fermata acts on; every other one present in a file earns a warning.
    ///
    /// Extend this list as features land.
    public static let supportedOptions: Set<String> = [
        "music_directory", "bind_to_address", "port", "connection_timeout", "max_connections",
        "max_command_list_size", "max_output_buffer_size", "metadata_to_use", "log_file", "log_level", "pid_file",
        "db_file", "follow_inside_symlinks", "follow_outside_symlinks", "auto_update", "auto_update_depth",
        "password", "default_permissions", "local_permissions", "host_permissions",
        "sticker_file", "playlist_directory", "save_absolute_paths_in_playlists",
        "zeroconf_enabled", "zeroconf_name", "audio_output_format", "mixer_type", "audio_buffer_size",
        "replaygain", "replaygain_preamp", "replaygain_missing_preamp", "replaygain_limit", "max_playlist_length",
        "state_file", "state_file_interval", "restore_paused", "user", "group",
        "filesystem_charset", "samplerate_converter", "volume_normalization",
    ]

    /// The blocks Fermata reads (the others are warned about and ignored).
    public static let supportedBlocks: Set<String> = [
        "audio_output", "decoder", "input", "playlist_plugin", "resampler", "database", "filter", "input_cache",
        "neighbors",
    ]

    // MARK: - Files and directories

    /// `music_directory`: an absolute path, or a storage URI such as `nfs://host/path` kept as written. Default: none.
    public var musicDirectory: String?

    /// `playlist_directory`: an absolute path. Default: none, which disables stored playlists.
    public var playlistDirectory: String?

    /// `db_file`, or the `path` of a `database { plugin "simple" … }` block: an absolute path. Default: none.
    public var dbFile: String?

    /// `compress` of a `database` block: whether the database file is gzip-compressed. Default: yes (also with
    /// `db_file`), as in `mpd`.
    public var dbCompress: Bool

    /// `cache_directory` of a `database` block: where the databases of mounted storages (`mount`) are kept, one
    /// file per storage. Default: none, which makes `mount` fail as in `mpd`.
    public var cacheDirectory: String?

    /// `hide_playlist_targets` of a `database` block: whether the files cue sheets' tracks name are left out of
    /// listings and searches. Default: yes, as in `mpd`.
    public var hidePlaylistTargets = true

    /// `state_file`: an absolute path. Default: none.
    public var stateFile: String?

    /// `sticker_file`: an absolute path. Default: none, which disables stickers.
    public var stickerFile: String?

    /// `log_file`: an absolute path, or `syslog`. Default: none (standard error, or syslog for a daemon).
    public var logFile: String?

    /// Why `log_file` is unusable (`not an absolute path: x`), which stops the start only where the log goes to the
    /// file: `mpd` does not read `log_file` with `--stderr`. ``logFile`` is then `nil`.
    public var logFileError: ConfigError?

    /// `log_level`. Default: ``LogLevel/notice``.
    public var logLevel: LogLevel

    /// `pid_file`: an absolute path. Default: none.
    public var pidFile: String?

    /// `filesystem_charset`: the character set of file names, converted to and from UTF-8 with ICU (the server
    /// refuses a name ICU does not know, as `mpd`). Default: none (names are taken as the bytes they are).
    public var filesystemCharset: String?

    // MARK: - Privileges

    /// `user`: the account the server runs as once its sockets are bound; `~` in paths is that user's home.
    /// Default: none (stay who started it).
    public var user: String?

    /// `group`: the group the server runs as instead of the user's primary group. Default: none.
    public var group: String?

    // MARK: - Network and clients

    /// Every `bind_to_address` line, its value raw, in order; empty means every interface. The lines name the
    /// setting when an address cannot be used (`Failed to listen on …`), as `mpd` names it.
    public var bindAddresses: [ConfigParameter]

    /// `port`, 1…65535. Default: 6600.
    public var port: Int

    /// `connection_timeout` in seconds. Default: 60.
    public var connectionTimeoutSeconds: Int

    /// `max_connections`. Default: 100.
    public var maxConnections: Int

    /// `max_command_list_size` in bytes (the file gives KiB). Default: 2048 KiB.
    public var maxCommandListSize: Int

    /// `max_output_buffer_size` in bytes (the file gives KiB). Default: 8192 KiB.
    public var maxOutputBufferSize: Int

    /// `save_absolute_paths_in_playlists`: stored playlists name songs by absolute path. Default: no.
    public var saveAbsolutePathsInPlaylists: Bool

    /// `max_playlist_length`: the most songs the queue holds. Default: 16384.
    public var maxPlaylistLength: Int

    // MARK: - Library

    /// `metadata_to_use`: the tags read and offered. Default: ``TagMask/defaultMetadata`` (all but Comment).
    public var metadataToUse: TagMask

    /// `auto_update`: watch the music directory. Default: no.
    public var autoUpdate: Bool

    /// `auto_update_depth`: how deep to watch; `nil` (the default) is unlimited. Read only with `auto_update`, as
    /// `mpd` reads it.
    public var autoUpdateDepth: Int?

    /// `follow_inside_symlinks`. Default: yes.
    public var followInsideSymlinks: Bool

    /// `follow_outside_symlinks`. Default: yes.
    public var followOutsideSymlinks: Bool

    // MARK: - Zeroconf

    /// `zeroconf_enabled`. Default: yes.
    public var zeroconfEnabled: Bool

    /// `zeroconf_name`; `%h` stands for the host name. Default: `Music Player @ %h`.
    public var zeroconfName: String

    // MARK: - Permissions

    /// Every `password`, raw (`secret@perm,perm`) and in order; each has been checked to hold `@` and known
    /// permission names.
    public var passwords: [String]

    /// `default_permissions`, raw; permission names checked. Default: none given, which `mpd` reads as all
    /// permissions unless a password or host permission is set.
    public var defaultPermissions: String?

    /// `local_permissions`, raw; permission names checked. Default: none given (same as the default permissions).
    public var localPermissions: String?

    /// Every `host_permissions` line (`host perm,perm`), its value raw, in order; permission names checked. The lines
    /// name the setting when its host does not resolve, as `mpd` names it.
    public var hostPermissions: [ConfigParameter]

    // MARK: - State

    /// `restore_paused`: start paused after restoring the state file. Default: no.
    public var restorePaused: Bool

    /// `state_file_interval` in seconds: how often the state file is saved. Default: 120.
    public var stateFileInterval: Int

    // MARK: - Audio outputs

    /// The global `mixer_type`: the mixer of every `audio_output` block that names none. Default: hardware.
    public var mixerType: AudioMixerSetting

    /// `audio_output_format`: the format the decoder's output is converted to (`*` keeps what the song has).
    /// Default: none. A value that does not parse stops the start, as in `mpd`.
    public var audioOutputFormat: AudioFormatMask?

    /// `audio_buffer_size` in bytes (the option is in KiB): the decoded audio buffered ahead. Default 4 MiB, as
    /// `mpd` 0.23; at least 128 KiB.
    public var audioBufferSize: Int

    /// `replaygain`: the ReplayGain mode at start-up, `off`, `track`, `album` or `auto`. Default: off.
    public var replayGainMode: String

    /// `replaygain_preamp` in dB (−15…15) for songs with ReplayGain values. Default: 0.
    public var replayGainPreamp: Double

    /// `replaygain_missing_preamp` in dB (−15…15) for songs without. Default: 0.
    public var replayGainMissingPreamp: Double

    /// `replaygain_limit`: lower the gain so the peak does not clip. Default: yes.
    public var replayGainLimit: Bool

    /// `volume_normalization`: every output's filter chain starts with the `normalize` filter. Default: no.
    public var volumeNormalization: Bool

    /// The `resampler` block or the `samplerate_converter` line. Default: soxr, high quality.
    public var resampler: ResamplerSetting

    /// The `input_cache` block: local song files kept in memory. Default: none (no cache).
    public var inputCache: InputCacheSetting?

    // MARK: - Blocks and diagnostics

    /// Every `audio_output` block, in order.
    public var audioOutputs: [ConfigBlock]

    /// Every `filter` block (a template an output's `filters` list names), in order.
    public var filters: [ConfigBlock]

    /// The `decoder` blocks, checked (each names its plugin); the format registry reads each plugin's.
    public var decoders: DecoderBlocks

    /// The `input` blocks, checked (each names its plugin); the curl input reads its own
    /// (`CurlSettings.configured(_:)`).
    public var inputs: InputBlocks
    /// The `playlist_plugin` blocks, checked (each names its plugin with `name`).
    public var playlistPlugins: PlaylistPluginBlocks

    /// The `neighbors` blocks, checked, in file order (``NeighborSetting``).
    public var neighbors: [NeighborSetting]

    /// One line, `path:line: text`, for each option or block in the file that Fermata does not act on (see
    /// ``supportedOptions``): parameters first, then blocks, each in file order.
    public var warnings: [String]

    /// What `mpd` logs about values it read and corrected or gave up on, and runs on, each at its moment: a small
    /// `audio_buffer_size` (`buffer size 65536 is too small, using 131072 bytes instead`, as it starts), a bad
    /// `auto_update_depth` (``autoUpdate`` is then off) or `zeroconf_enabled` (``zeroconfEnabled`` is then off).
    /// A bad `log_file` is not one of them: it stops the start where the log goes to the file (``logFileError``).
    public var reports: [ConfigReport] = []

    /// The blocks `mpd` checks once started, in its order: the program's parts report the lines they left unread,
    /// and this turns them into `mpd`'s warnings (see ``BlockCheck``).
    public var blockCheck: BlockCheck

    /// The lines of the blocks read here that nothing reads, for ``blockCheck``: the `resampler` block's that
    /// its plugin does not read, a `database` block's that its plugin does not read, and every `neighbors` block's
    /// but `plugin` (no neighbor plugin reads one).
    public var unread: [ConfigParameter]

    /// The defaults of `mpd` 0.23.12, as if the configuration file were empty.
    public init() {
        self.musicDirectory = nil
        self.playlistDirectory = nil
        self.dbFile = nil
        self.dbCompress = true
        self.stateFile = nil
        self.stickerFile = nil
        self.logFile = nil
        self.logLevel = .notice
        self.pidFile = nil
        self.filesystemCharset = nil
        self.user = nil
        self.group = nil
        self.bindAddresses = []
        self.port = 6600
        self.connectionTimeoutSeconds = 60
        self.maxConnections = 100
        self.maxCommandListSize = 2048 * 1024
        self.maxOutputBufferSize = 8192 * 1024
        self.maxPlaylistLength = 16384
        self.metadataToUse = .defaultMetadata
        self.saveAbsolutePathsInPlaylists = false
        self.autoUpdate = false
        self.autoUpdateDepth = nil
        self.followInsideSymlinks = true
        self.followOutsideSymlinks = true
        self.zeroconfEnabled = true
        self.zeroconfName = "Music Player @ %h"
        self.passwords = []
        self.defaultPermissions = nil
        self.localPermissions = nil
        self.hostPermissions = []
        self.restorePaused = false
        self.stateFileInterval = 120
        self.mixerType = .hardware
        self.audioOutputFormat = nil
        self.audioBufferSize = 4 << 20
        self.replayGainMode = "off"
        self.replayGainPreamp = 0
        self.replayGainMissingPreamp = 0
        self.replayGainLimit = true
        self.volumeNormalization = false
        self.resampler = ResamplerSetting()
        self.inputCache = nil
        self.audioOutputs = []
        self.filters = []
        self.decoders = .none
        self.inputs = .none
        self.playlistPlugins = .noPlaylistPlugins
        self.neighbors = []
        self.warnings = []
        self.blockCheck = BlockCheck()
        self.unread = []
    }
}
