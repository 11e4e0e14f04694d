// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Posix

extension Settings {
    /// Reads the typed settings from a parsed configuration, checking every value the way `mpd` 0.23 does.
    ///
    /// For a repeated non-repeatable option the last line wins, and only that line is checked.
    ///
    /// - Parameters:
    ///   - file: The parsed configuration.
    ///   - environment: Supplies `HOME` for `~` in paths; defaults to the process environment. With `user` set,
    ///     `~` is that user's home instead, as in `mpd`.
    /// - Throws: ``ConfigError`` at the file and line of the first bad value.
    public init(
        file: ConfigFile, environment: [String: String] = ProcessEnvironment.variables()
    ) throws(ConfigError) {
        self.init()
        self.user = file.parameter(named: "user")?.value
        self.group = file.parameter(named: "group")?.value
        let home =
            self.user.flatMap { UserDatabase.homeDirectory(ofUser: $0) } ?? environment["HOME"]
            ?? UserDatabase.homeDirectoryOfCurrentUser() ?? "/"
        let reader = Reader(file: file, home: home)

        if let parameter = file.parameter(named: "music_directory") {
            self.musicDirectory =
                URIScheme.hasScheme(parameter.value) ? parameter.value : try ConfigValue.path(parameter, home: home)
        }
        self.playlistDirectory = try reader.path("playlist_directory") ?? self.playlistDirectory
        try self.readDatabaseBlock(file, home: home)
        self.stateFile = try reader.path("state_file") ?? self.stateFile
        self.stickerFile = try reader.path("sticker_file") ?? self.stickerFile
        if let parameter = file.parameter(named: "log_file") {
            do {
                self.logFile =
                    parameter.value == "syslog" ? parameter.value : try ConfigValue.path(parameter, home: home)
            } catch {
                self.logFileError = error
            }
        }
        if let parameter = file.parameter(named: "log_level") {
            guard let level = LogLevel(configValue: parameter.value) else {
                throw ConfigValue.error(parameter, "unknown log level \"\(parameter.value)\"")
            }
            self.logLevel = level
        }
        self.pidFile = try reader.path("pid_file") ?? self.pidFile

        self.bindAddresses = file.parameters(named: "bind_to_address")
        if let parameter = file.parameter(named: "port") {
            self.port = try ConfigValue.positive(parameter, maximum: 65535)
        }
        self.connectionTimeoutSeconds = try reader.positive("connection_timeout") ?? self.connectionTimeoutSeconds
        self.maxConnections = try reader.positive("max_connections") ?? self.maxConnections
        self.maxPlaylistLength = try reader.positive("max_playlist_length") ?? self.maxPlaylistLength
        if let parameter = file.parameter(named: "max_command_list_size") {
            self.maxCommandListSize = try ConfigValue.kibibytes(parameter)
        }
        if let parameter = file.parameter(named: "max_output_buffer_size") {
            self.maxOutputBufferSize = try ConfigValue.kibibytes(parameter)
        }

        if let parameter = file.parameter(named: "metadata_to_use") {
            switch TagMask.parsing(metadataToUse: parameter.value) {
            case .success(let mask): self.metadataToUse = mask
            case .failure(let bad): throw ConfigValue.error(parameter, "error parsing metadata item \"\(bad.item)\"")
            }
        }
        self.saveAbsolutePathsInPlaylists =
            try reader.bool("save_absolute_paths_in_playlists") ?? self.saveAbsolutePathsInPlaylists
        self.autoUpdate = try reader.bool("auto_update") ?? self.autoUpdate
        if self.autoUpdate, let parameter = file.parameter(named: "auto_update_depth") {
            do {
                self.autoUpdateDepth = try ConfigValue.unsigned(parameter)
            } catch {
                self.autoUpdate = false
                self.reports.append(
                    ConfigReport(
                        moment: .watching, domain: "exception", severity: .error,
                        text: "Error on line \(parameter.line); \(error.message)"))
            }
        }
        self.followInsideSymlinks = try reader.bool("follow_inside_symlinks") ?? self.followInsideSymlinks
        self.followOutsideSymlinks = try reader.bool("follow_outside_symlinks") ?? self.followOutsideSymlinks

        if let parameter = file.parameter(named: "zeroconf_enabled") {
            // mpd reads it as zeroconf starts, and logs a bad value there and runs on without zeroconf.
            do {
                self.zeroconfEnabled = try ConfigValue.bool(parameter)
            } catch {
                self.zeroconfEnabled = false
                self.reports.append(
                    ConfigReport(
                        moment: .zeroconf, domain: "exception", severity: .error,
                        text: "Zeroconf initialization failed: Error on line \(parameter.line); \(error.message)"))
            }
        }
        self.zeroconfName = file.parameter(named: "zeroconf_name")?.value ?? self.zeroconfName

        for parameter in file.parameters(named: "password") {
            try ConfigValue.checkPassword(parameter)
            self.passwords.append(parameter.value)
        }
        for name in ["default_permissions", "local_permissions"] {
            guard let parameter = file.parameter(named: name) else { continue }
            try ConfigValue.checkPermissions(Substring(parameter.value), in: parameter)
        }
        self.defaultPermissions = file.parameter(named: "default_permissions")?.value
        self.localPermissions = file.parameter(named: "local_permissions")?.value
        for parameter in file.parameters(named: "host_permissions") {
            try ConfigValue.checkHostPermissions(parameter)
            self.hostPermissions.append(parameter)
        }

        self.restorePaused = try reader.bool("restore_paused") ?? self.restorePaused
        if let parameter = file.parameter(named: "state_file_interval") {
            self.stateFileInterval = try ConfigValue.unsigned(parameter)
        }

        if let parameter = file.parameter(named: "mixer_type") {
            guard let setting = AudioMixerSetting(configValue: parameter.value) else {
                throw ConfigValue.error(parameter, "Unrecognized mixer type")
            }
            self.mixerType = setting
        }
        if let parameter = file.parameter(named: "audio_output_format") {
            do throws(AudioFormatParseError) {
                self.audioOutputFormat = try AudioFormatMask.parse(parameter.value, mask: true)
            } catch {
                throw ConfigValue.error(parameter, error.message)
            }
        }
        if let parameter = file.parameter(named: "audio_buffer_size") {
            try self.readAudioBufferSize(parameter)
        }
        if let parameter = file.parameter(named: "replaygain") {
            guard ["off", "track", "album", "auto"].contains(parameter.value) else {
                throw ConfigValue.error(parameter, "Unrecognized replay gain mode")
            }
            self.replayGainMode = parameter.value
        }
        if let parameter = file.parameter(named: "replaygain_preamp") {
            self.replayGainPreamp = try ConfigValue.preamp(parameter)
        }
        if let parameter = file.parameter(named: "replaygain_missing_preamp") {
            self.replayGainMissingPreamp = try ConfigValue.preamp(parameter)
        }
        self.replayGainLimit = try reader.bool("replaygain_limit") ?? self.replayGainLimit
        self.volumeNormalization = try reader.bool("volume_normalization") ?? false
        self.resampler = try ResamplerSetting(
            block: file.blocks(named: "resampler").first, converter: file.parameter(named: "samplerate_converter"))
        self.inputCache = try file.blocks(named: "input_cache").first.map { (block) throws(ConfigError) in
            try InputCacheSetting(block: block)
        }
        self.audioOutputs = file.blocks(named: "audio_output")
        self.filters = file.blocks(named: "filter")
        self.decoders = try DecoderBlocks(file.blocks(named: "decoder"))
        self.decoders.home = home
        self.inputs = try InputBlocks(file.blocks(named: "input"))
        self.playlistPlugins = try PlaylistPluginBlocks(file.blocks(named: "playlist_plugin"), key: "name")
        self.neighbors = try file.blocks(named: "neighbors").map { (block) throws(ConfigError) in
            try NeighborSetting(block: block)
        }
        self.warnings = Self.warnings(for: file)
        self.blockCheck = BlockCheck(file.blocks)
        self.unread += file.blocks(named: "resampler").first.map(ResamplerSetting.unreadParameters(of:)) ?? []
        self.unread += file.blocks(named: "neighbors").flatMap { block in block.params.filter { $0.name != "plugin" } }
        self.filesystemCharset = file.parameter(named: "filesystem_charset")?.value
    }

    /// `audio_buffer_size` as `mpd` 0.23.12 reads it (`initialize_decoder_and_player`): a size as `ParseSize`
    /// reads it, in KiB without a suffix (`4M`, `512k`, `2048`); not 0; less than 128 KiB (32 chunks) is raised
    /// to that with a warning in its `config` domain; 32768 chunks of 4 KiB or more is too big. (`mpd` counts
    /// the chunks in an `unsigned`, so a size of 16 TiB and more can wrap past its check; Fermata refuses it.)
    private mutating func readAudioBufferSize(_ parameter: ConfigParameter) throws(ConfigError) {
        let chunk: UInt = 4096
        let minimum = 32 * chunk
        var size: UInt
        do {
            size = try InputCacheSetting.parseSize(parameter.value, defaultFactor: 1024)
        } catch {
            throw ConfigValue.error(parameter, error.message)
        }
        guard size > 0 else {
            throw ConfigValue.error(parameter, "buffer size \"\(parameter.value)\" is not a positive integer")
        }
        if size < minimum {
            self.reports.append(
                ConfigReport(
                    moment: .start, domain: "config", severity: .warning,
                    text: "buffer size \(size) is too small, using \(minimum) bytes instead"))
            size = minimum
        }
        guard size / chunk < 1 << 15 else {
            throw ConfigValue.error(parameter, "buffer size \"\(size)\" is too big")
        }
        self.audioBufferSize = Int(size)
    }

    /// Whether Fermata does what `parameter` asks: a supported option.
    static func isActedOn(_ parameter: ConfigParameter) -> Bool {
        Self.supportedOptions.contains(parameter.name)
    }

    /// `db_file` and the `database` block as `mpd` 0.23.12 reads them (`CreateConfiguredDatabase`,
    /// `DatabaseGlobalInit` and the plugins' constructors): not both; `plugin` defaults to `simple` and must be one
    /// `mpd` has (simple, proxy, upnp: `No such database plugin: x`); the plugin reads its keys in `mpd`'s order,
    /// and what it throws comes after `Failed to initialize database plugin 'x'; `. The simple plugin reads `path`,
    /// `compress` and `hide_playlist_targets` (both default yes) and `cache_directory` (none by default), then
    /// needs `path`; `db_file` is its `path`. Another plugin's values are checked as `mpd` checks them, then the
    /// block is warned about and ignored (see `warnings(for:)`).
    private mutating func readDatabaseBlock(_ file: ConfigFile, home: String) throws(ConfigError) {
        guard let block = file.blocks(named: "database").last else {
            if let parameter = file.parameter(named: "db_file") {
                self.dbFile = try Self.initializing("simple") { () throws(ConfigError) in
                    try ConfigValue.path(parameter, home: home)
                }
            }
            return
        }
        if let path = file.parameter(named: "db_file") {
            throw ConfigError(
                file: block.file, line: block.line,
                message: "Found both 'database' (line \(block.line)) and 'db_file' (line \(path.line)) setting")
        }
        var settings = DecoderPluginSettings(plugin: "database", block: block, home: home)
        let plugin = settings.string("plugin") ?? "simple"
        guard plugin == "simple" || Self.otherDatabasePluginKeys[plugin] != nil else {
            throw ConfigError(location: block.location, message: "No such database plugin: \(plugin)")
        }
        try Self.initializing(plugin) { () throws(ConfigError) in
            switch plugin {
            case "simple":
                let path = try settings.path("path")
                self.dbCompress = try settings.bool("compress") ?? true
                self.hidePlaylistTargets = try settings.bool("hide_playlist_targets") ?? true
                self.cacheDirectory = try settings.path("cache_directory")
                guard let path else { throw settings.error("No \"path\" parameter specified") }
                self.dbFile = path
            case "proxy":
                // Not run, but read as mpd's constructor reads it: its errors stop the start.
                _ = settings.string("host")
                _ = settings.string("password")
                _ = try settings.unsigned("port")
                _ = try settings.bool("keepalive")
            default:
                for key in Self.otherDatabasePluginKeys[plugin] ?? [] { _ = settings.string(key) }
            }
        }
        self.unread += settings.unread
    }

    /// `body`'s result, or its error after `mpd`'s `Failed to initialize database plugin 'x'; `.
    private static func initializing<Value>(
        _ plugin: String, _ body: () throws(ConfigError) -> Value
    ) throws(ConfigError) -> Value {
        do {
            return try body()
        } catch {
            var wrapped = error
            wrapped.message = "Failed to initialize database plugin '\(plugin)'; \(error.message)"
            throw wrapped
        }
    }

    /// The keys `mpd` 0.23.12's other database plugins read from the block.
    private static let otherDatabasePluginKeys = [
        "proxy": ["host", "password", "port", "keepalive"], "upnp": ["interface"],
    ]

    /// One line for each option or block in `file` that Fermata does not act on, parameters first, then blocks.
    ///
    /// - Parameter file: The parsed configuration.
    /// - Returns: Lines like `/etc/mpd.conf:7: option "user" is not supported by Fermata yet and is ignored`.
    public static func warnings(for file: ConfigFile) -> [String] {
        var lines: [String] = []
        for parameter in file.parameters where !Self.isActedOn(parameter) {
            let name = parameter.name
            if ConfigOption.named(name)?.isDeprecated == true {
                lines.append("\(parameter.location): config parameter \"\(name)\" is deprecated and ignored")
            } else {
                lines.append("\(parameter.location): option \"\(name)\" is not supported by Fermata yet and is ignored")
            }
        }
        for block in file.blocks where !Self.supportedBlocks.contains(block.name) {
            lines.append("\(block.location): block \"\(block.name)\" is not supported by Fermata yet and is ignored")
        }
        for block in file.blocks(named: "database") {
            guard let plugin = block["plugin"], plugin != "simple" else { continue }
            let location = block.location
            lines.append("\(location): database plugin \"\(plugin)\" is not supported by Fermata yet and is ignored")
        }
        for block in file.blocks(named: "neighbors") {
            guard let plugin = block["plugin"], !NeighborSetting.supportedPluginNames.contains(plugin) else { continue }
            let location = block.location
            lines.append("\(location): neighbor plugin \"\(plugin)\" is not supported by Fermata yet and is ignored")
        }
        return lines
    }
}

/// Reads the last line of a non-repeatable option with one of ``ConfigValue``'s parsers.
private struct Reader {
    let file: ConfigFile
    let home: String

    func path(_ name: String) throws(ConfigError) -> String? {
        guard let parameter = self.file.parameter(named: name) else { return nil }
        return try ConfigValue.path(parameter, home: self.home)
    }

    func positive(_ name: String) throws(ConfigError) -> Int? {
        guard let parameter = self.file.parameter(named: name) else { return nil }
        return try ConfigValue.positive(parameter)
    }

    func bool(_ name: String) throws(ConfigError) -> Bool? {
        guard let parameter = self.file.parameter(named: name) else { return nil }
        return try ConfigValue.bool(parameter)
    }
}
