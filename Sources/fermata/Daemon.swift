// SPDX-License-Identifier: GPL-3.0-or-later

import ALSA
import CdioParanoia
import Configuration
import Curl
import EventLoop
import FFmpeg
import Formats
import Glibc
import ICU
import Input
import Library
import MPDProtocol
import Model
import NFS
import Network
import Playback
import Playlists
import Posix
import SMBClient
import Server
import StoredPlaylists
import Systemd
import Zeroconf

/// The daemon's life cycle: configuration, logging, listeners, signals, the event loop, shutdown.
enum Daemon {
    /// The version `--version` prints.
    static let version = "0.1.0"
    /// The MPD protocol version in the greeting.
    static let protocolVersion = Server.protocolVersion

    /// A start-up failure: printed as one line, exit status 1.
    struct StartupError: Error, CustomStringConvertible {
        var description: String
    }

    /// The input plugins of `mpd` 0.23.12's list (as Debian builds it; `file` and `archive` are not in it) that
    /// read nothing from their `input` block and that Fermata has no settings for.
    static let inputPluginsWithoutSettings = ["smbclient", "nfs", "mms"]

    /// Configuration files looked for when none is named.
    static func defaultConfigPaths(environment: [String: String]) -> [String] {
        var paths: [String] = []
        if let xdg = environment["XDG_CONFIG_HOME"], !xdg.isEmpty {
            paths.append(xdg + "/fermata/fermata.conf")
        } else if let home = environment["HOME"], !home.isEmpty {
            paths.append(home + "/.config/fermata/fermata.conf")
        }
        paths.append("/etc/fermata.conf")
        return paths
    }

    /// Runs the daemon until SIGTERM, SIGINT or `kill`; with `--kill`, stops the running instance instead.
    ///
    /// Must be called on the main thread before any other thread starts, so the signal mask is inherited. The
    /// order is `mpd`'s: the configuration and the `user` it names, the log, the listening sockets, then (as that
    /// user) the pid file, the player, the databases, the state file.
    static func run(_ commandLine: CommandLineOptions) throws(StartupError) {
        var environment = ProcessEnvironment.variables()
        var settings = try Self.settings(commandLine, environment: environment)
        if commandLine.systemd && settings.pidFile != nil {
            // As mpd: systemd tracks the process itself.
            try? FileDescriptor.standardError.writeAll("Ignoring the 'pid_file' setting in systemd mode\n".utf8)
            settings.pidFile = nil
        }
        try Self.installFilesystemCharset(settings.filesystemCharset)
        let privileges = try Self.privileges(settings)
        if let privileges {
            // As mpd: for libraries that look at HOME, and for the default database path below.
            setenv("HOME", privileges.account.home, 1)
            environment["HOME"] = privileges.account.home
        }
        if commandLine.kill { try Self.killRunningInstance(pidFile: settings.pidFile) }

        // The log file is opened before root is given up, as mpd does: it may live where only root writes.
        let sink: LogSink
        if let error = settings.logFileError, !commandLine.logToStandardError {
            throw StartupError(description: "\(error)")
        }
        if commandLine.logToStandardError || settings.logFile == nil {
            sink = LogSink()
        } else if let logFile = settings.logFile, logFile != "syslog" {
            do {
                sink = try LogSink(path: logFile)
            } catch {
                throw StartupError(description: "cannot open log_file \"\(logFile)\": \(error)")
            }
        } else {
            sink = LogSink.syslog()
        }
        let logger = Logger(label: "fermata", threshold: commandLine.verbose ? .debug : settings.logLevel) {
            sink.write($0, $1)
        }
        for warning in settings.warnings { logger.warning(warning) }
        Self.log(settings.reports(at: .start), logger: logger)

        // The lines of the blocks used that nothing read, which mpd warns about once started.
        var unread = settings.unread
        /// A plugin list read from its blocks, the lines nothing read kept; a bad block stops startup.
        func plugins<Plugins>(
            _ read: () throws(ConfigError) -> (Plugins, unread: [ConfigParameter])
        ) throws(StartupError) -> Plugins {
            do {
                let (plugins, lines) = try read()
                unread += lines
                return plugins
            } catch {
                throw StartupError(description: "\(error)")
            }
        }
        // The one place that knows which formats exist: the scanner, the commands and the player share it.
        let configuredFormats = try plugins { () throws(ConfigError) in
            let configured = try FormatRegistry.configured(settings.decoders)
            return (configured.registry, configured.unread)
        }
        // The one place that knows which playlist plugins are enabled: the scanner and the commands share it.
        let playlists = try plugins { () throws(ConfigError) in
            let configured = try PlaylistRegistry.configured(settings.playlistPlugins)
            for warning in configured.warnings { logger.warning(warning) }
            return (configured.registry, configured.unread)
        }
        // The one place that knows which input plugins exist: curl for http(s), unless disabled.
        let curl = try plugins { () throws(ConfigError) in
            let configured = try CurlSettings.configured(settings.inputs)
            return (configured?.settings, configured?.unread ?? [])
        }

        // Then mpd's ffmpeg input plugin for the schemes curl does not take (`hls+http://`, `rtp://`…), unless
        // disabled: the schemes libavformat reads, which a child process tells (loading FFmpeg here would keep
        // ~12 MiB of its libraries resident for good, though they are closed again).
        // mpd's ffmpeg decoder plugin also opens `rtsp://`, `rtsps://` and `rtp://` itself, before any input plugin
        // is asked (its `TryUriDecode`), unless it is disabled.
        let inputBlock = try plugins { () throws(ConfigError) in
            guard let block = try settings.inputs.settings(forPlugin: "ffmpeg") else { return (false, []) }
            return (true, block.unread)
        }
        // libcurl's protocols likewise (it is loaded on the first transfer: ~6 MiB with GnuTLS and the rest), and
        // whether the decoder plugins whose libraries are loaded on first use (`FormatRegistry.lazilyLoaded`) would
        // initialise: one that would not is left out, as mpd leaves out a plugin whose initialisation fails.
        let lazyDecoders = configuredFormats.plugins.contains { FormatRegistry.lazilyLoaded.contains($0.name) }
        let schemes =
            inputBlock || configuredFormats.decodesURLs || curl != nil || lazyDecoders
            ? Self.pluginSchemes(logger: logger) : PluginSchemes()
        for (name, reason) in schemes.unavailableDecoders {
            logger.labelled("decoder").error("Decoder plugin '\(name)' is unavailable: \(reason)")
        }
        let formats =
            schemes.unavailableDecoders.isEmpty
            ? configuredFormats
            : FormatRegistry(configuredFormats.plugins.filter { schemes.unavailableDecoders[$0.name] == nil })
        let ffmpegSchemes = inputBlock ? schemes.input : []
        let decoderSchemes = formats.decodesURLs ? schemes.decoder : []
        let curlSchemes = curl == nil ? [] : schemes.curl
        // mpd's cdio_paranoia input plugin (audio CDs, `cdda://`), unless disabled.
        let cdda = try plugins { () throws(ConfigError) in
            let configured = try CdioParanoiaSettings.configured(settings.inputs)
            return (configured?.settings, configured?.unread ?? [])
        }
        if cdda != nil { CdioLog.install(logger.labelled("cdio")) }
        // mpd's input plugins that read nothing from their block: the block of one that is not disabled is used;
        // one that is (`enabled "no"`) opens nothing.
        let enabledWithoutSettings = try plugins { () throws(ConfigError) in
            var lines: [ConfigParameter] = []
            var enabled: Set<String> = []
            for name in Self.inputPluginsWithoutSettings {
                guard let block = try settings.inputs.settings(forPlugin: name) else { continue }
                lines += block.unread
                enabled.insert(name)
            }
            return (enabled, lines)
        }
        let smbclient = enabledWithoutSettings.contains("smbclient")
        let nfs = enabledWithoutSettings.contains("nfs")
        // mpd's alsa input plugin (capture from a sound card, `alsa://`), unless disabled.
        let alsa = try plugins { () throws(ConfigError) in
            let configured = try ALSAInputSettings.configured(settings.inputs)
            return (configured?.settings, configured?.unread ?? [])
        }

        let openRemote: RemoteOpener = {
            url, cancellation throws(InputError) in
            // As mpd's input plugins, in their order: alsa takes alsa://, curl http(s) only, then ffmpeg the
            // schemes libavformat reads, then smbclient smb://, nfs nfs://, then cdio_paranoia cdda://. (The decoder
            // schemes have none.)
            if let alsa, ALSAInputStream.canOpen(url) {
                return try ALSAInputStream(url: url, settings: alsa, cancellation: cancellation)
            }
            // A libcurl that cannot be loaded (logged once) leaves the curl plugin out, as mpd's failing init does.
            if let curl, CurlInputStream.canOpen(url), CurlLibrary.shared.isAvailable {
                return try CurlInputStream(url: url, settings: curl, cancellation: cancellation)
            }
            if ffmpegSchemes.contains(where: { URIScheme.hasPrefixIgnoringCase(url.utf8, $0) }) {
                return try FFmpegURLInputStream(url: url, cancellation: cancellation)
            }
            if smbclient, SMBInputStream.canOpen(url) {
                return try SMBInputStream(url: url, cancellation: cancellation)
            }
            if nfs, NFSInputStream.canOpen(url) { return try NFSInputStream(url: url, cancellation: cancellation) }
            if let cdda, CdioParanoiaInputStream.canOpen(url) {
                return try CdioParanoiaInputStream(url: url, settings: cdda)
            }
            throw .plugin(message: "Unrecognized URI", uri: url)
        }

        var options = try Self.serverOptions(
            from: settings, formats: formats, playlists: playlists, openRemote: openRemote,
            environment: environment, logger: logger)
        // What urlhandlers lists: every plugin's schemes, once each (alsa's alsa://, smbclient's smb://, nfs's
        // nfs:// and cdio_paranoia's cdda:// among them).
        let alsaSchemes = alsa == nil ? [] : [ALSAInputURL.scheme]
        let cddaSchemes = cdda == nil ? [] : ["cdda://"]
        let shareSchemes = (smbclient ? ["smb://"] : []) + (nfs ? ["nfs://"] : [])
        options.remoteSchemes = Set(
            alsaSchemes + curlSchemes + ffmpegSchemes + decoderSchemes + shareSchemes + cddaSchemes
        ).sorted()
        options.remoteOpener = openRemote
        options.streamTagScanner = { input in
            do throws(FormatError) {
                return .tags(try formats.scanStreamTags(input: RewindInputStream(input)))
            } catch {
                if case .notRecognized = error { return .notRecognized }
                return .failed(message: error.mpdMessage)
            }
        }
        options.streamCommentReader = { input throws(StreamReadError) in
            try Self.readStream { () throws(FormatError) in try formats.readComments(input: RewindInputStream(input)) }
        }
        options.streamPictureReader = { input throws(StreamReadError) in
            try Self.readStream { () throws(FormatError) in try formats.readPicture(input: RewindInputStream(input)) }
        }

        options.fingerprinter = { [openRemote] source, cancellation in
            Self.fingerprint(source, formats: formats, openRemote: openRemote, cancellation: cancellation)
        }

        Self.raiseDescriptorLimit(logger: logger)
        SignalFD.ignoreBrokenPipe()
        let signals: FileDescriptor
        let loop: EventLoop
        do {
            signals = try SignalFD.signalfd([SIGTERM, SIGINT, SIGHUP])
            loop = try EventLoop()
        } catch {
            throw StartupError(description: "\(error)")
        }
        defer { signals.close() }

        // Bound while still root (a port below 1024, a socket in a root-owned directory), then root is given up
        // before any other thread starts and before any file is written.
        let sockets: [BoundSocket]
        do {
            let serverSocket = logger.labelled("server_socket")
            sockets = try Server.bind(options, inherited: Self.systemdListeners(environment: environment)) {
                serverSocket.error($0)
            }
        } catch {
            if let index = error.listenIndex, settings.bindAddresses.indices.contains(index) {
                throw Self.listenError(settings.bindAddresses[index], error.reason)
            }
            throw StartupError(description: "\(error)")
        }
        if let privileges {
            do {
                try privileges.apply()
            } catch {
                for socket in sockets { socket.close() }
                throw StartupError(description: error.message)
            }
            logger.info(
                "running as user", ["user": privileges.account.name, "uid": "\(getuid())", "gid": "\(getgid())"])
        }
        if settings.dbFile == nil, let database = options.library?.databaseFile {
            let directory = database[..<(database.lastIndex(of: "/") ?? database.endIndex)]
            try? DirectoryEntries.makeDirectories(atPath: String(directory))
            if let mounts = options.library?.cacheDirectory { try? DirectoryEntries.makeDirectories(atPath: mounts) }
        }

        if let pidFile = settings.pidFile {
            do {
                try writeFile(PidFile.contents(for: getpid()), atPath: pidFile)
            } catch {
                for socket in sockets { socket.close() }
                throw StartupError(description: "Failed to create pid file \"\(pidFile)\": \(error.errno)")
            }
        }
        defer { if let pidFile = settings.pidFile { unlinkPath(pidFile) } }

        let inputCache = settings.inputCache.map {
            InputCache(capacity: $0.size, logger: logger.labelled("cache"))
        }
        let (player, newPlayer, outputLines) = try Self.makePlayer(
            settings: settings, formats: formats, openRemote: openRemote, decoderSchemes: decoderSchemes,
            cache: inputCache, loop: loop,
            logger: logger.labelled("player"))
        unread += outputLines
        // The neighbor plugins answer `listneighbors` once opened, before any client is served.
        let neighbors = NeighborGlue()
        if settings.neighbors.contains(where: \.isSupported) { options.neighbors = { neighbors.list } }
        let server = Server(
            loop: loop, options: options, logger: logger.labelled("server"), player: player, newPlayer: newPlayer
        ) {
            loop.stop()
        }
        do {
            let bound = LoopBound(server, loop: loop)
            try neighbors.open(settings.neighbors, logger: logger) { bound.execute { $0.emit(.neighbor) } }
        } catch {
            for socket in sockets { socket.close() }
            throw error
        }
        defer { neighbors.close() }
        do {
            try server.start(listening: sockets)
        } catch {
            throw StartupError(description: "\(error)")
        }
        // As mpd once the state file is read: the lines of the blocks used that nothing read, in its order.
        // As mpd, after the state file: a bad auto_update_depth where it would start watching the music directory.
        if settings.musicDirectory != nil { Self.log(settings.reports(at: .watching), logger: logger) }
        let config = logger.labelled("config")
        for warning in settings.blockCheck.warnings(unread: unread) { config.warning(warning) }
        logger.notice(
            "ready",
            ["version": Self.version, "listening": server.boundAddresses.map(\.description).joined(separator: ",")])
        // As mpd: systemd (Type=notify) learns the server is ready; nothing happens without NOTIFY_SOCKET.
        ServiceManager.notifyReady()
        let zeroconf = Self.startZeroconf(settings: settings, listeners: server.boundAddresses, logger: logger)
        defer { zeroconf?.stop() }

        do {
            let registration = try loop.register(signals, events: .input) { _ in
                while let signal = SignalFD.read(signals) {
                    switch signal {
                    case SIGHUP:
                        // As mpd: reopen the log file, so logrotate can move it away, and flush the input cache.
                        inputCache?.flush()
                        do {
                            try sink.reopen()
                            logger.info("SIGHUP: log reopened")
                        } catch {
                            logger.error("cannot reopen log_file", ["error": "\(error)"])
                        }
                    default:
                        logger.notice("shutting down", ["signal": "\(signal)"])
                        loop.stop()
                    }
                }
            }
            try loop.run()
            loop.deregister(registration)
        } catch {
            throw StartupError(description: "\(error)")
        }
        zeroconf?.stop()
        server.shutdown()
        logger.notice("stopped")
    }

    /// The settings of the configuration file the command line names (or the first default one found), or
    /// `mpd`'s defaults with `--no-config`.
    static func settings(_ commandLine: CommandLineOptions, environment: [String: String]) throws(StartupError)
        -> Settings
    {
        if commandLine.noConfig { return Settings() }
        let configPath: String
        if let path = commandLine.configPath {
            configPath = path
        } else {
            let candidates = Self.defaultConfigPaths(environment: environment)
            guard let found = candidates.first(where: { (try? FileStatus(path: $0)) != nil }) else {
                throw StartupError(
                    description: "no configuration file found (looked for \(candidates.joined(separator: ", ")))")
            }
            configPath = found
        }
        do {
            return try Settings(file: try ConfigFile(contentsOf: configPath), environment: environment)
        } catch {
            throw StartupError(description: "\(error)")
        }
    }

    /// The switch to `user` (and `group`) the settings ask for, looked up now as `mpd` does before anything
    /// else; `nil` without `user` (`group` alone changes nothing, as in `mpd`).
    ///
    /// - Throws: `mpd`'s `no such user "name"` or `no such group "name"`.
    /// Makes `filesystem_charset` the process's conversion of file names (every path and directory entry from
    /// here on), before any other thread starts; none keeps names as the bytes they are.
    ///
    /// - Throws: `mpd`'s `Failed to initialize charset 'NAME': U_FILE_ACCESS_ERROR` when ICU does not know it.
    static func installFilesystemCharset(_ name: String?) throws(StartupError) {
        guard let name else { return }
        let charset: FileNameCharset
        do {
            charset = try FileNameCharset(name)
        } catch {
            throw StartupError(description: error.message)
        }
        FileSystemCharset.install(
            FileSystemCharset(.init(name: name, toUTF8: { charset.utf8($0) }, fromUTF8: { charset.bytes($0) })))
    }

    static func privileges(_ settings: Settings) throws(StartupError) -> PrivilegeDrop? {
        var account: UserAccount?
        if let user = settings.user {
            guard let found = UserDatabase.account(named: user) else {
                throw StartupError(description: "no such user \"\(user)\"")
            }
            account = found
        }
        var group: gid_t?
        if let name = settings.group {
            guard let found = UserDatabase.groupID(named: name) else {
                throw StartupError(description: "no such group \"\(name)\"")
            }
            group = found
        }
        return account.map { PrivilegeDrop(account: $0, group: group) }
    }

    /// `--kill`: sends SIGTERM to the process whose id `pid_file` holds and exits 0, as `mpd --kill` does (without
    /// waiting for it to stop).
    ///
    /// - Throws: `mpd`'s messages: no `pid_file` configured, a file that cannot be read or holds no process id,
    ///   a process that cannot be signalled.
    static func killRunningInstance(pidFile: String?) throws(StartupError) -> Never {
        guard let pidFile else { throw StartupError(description: "no pid_file specified in the config file") }
        let bytes: [UInt8]
        do {
            bytes = try readFile(atPath: pidFile)
        } catch {
            throw StartupError(description: "unable to read the pid from file \"\(pidFile)\": \(error.errno)")
        }
        guard let pid = PidFile.processID(contents: bytes) else {
            throw StartupError(
                description: "unable to read the pid from file \"\(pidFile)\": \(Errno(rawValue: EINVAL))")
        }
        guard Glibc.kill(pid, SIGTERM) == 0 else {
            throw StartupError(description: "unable to kill process \(pid): \(Errno.current)")
        }
        exit(0)
    }

    /// Logs `reports` (what mpd logs about config values it corrected or gave up on) in their domains.
    static func log(_ reports: [ConfigReport], logger: Logger) {
        for report in reports {
            let domain = logger.labelled(report.domain)
            switch report.severity {
            case .warning: domain.warning(report.text)
            case .error: domain.error(report.text)
            }
        }
    }

    /// Raises the soft limit on open descriptors to the hard limit, so `max_connections` above ~1000 works
    /// where the default soft limit is 1024 (each client is one descriptor).
    static func raiseDescriptorLimit(logger: Logger) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        let before = limit.rlim_cur
        limit.rlim_cur = limit.rlim_max
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 {
            logger.info("raised the open file limit", ["from": "\(before)", "to": "\(limit.rlim_max)"])
        }
    }

    /// The listening sockets systemd passed (socket activation): `LISTEN_FDS` descriptors from 3 when
    /// `LISTEN_PID` is this process. The variables are removed so child processes do not see them.
    static func systemdListeners(environment: [String: String]) -> [FileDescriptor] {
        defer {
            unsetenv("LISTEN_PID")
            unsetenv("LISTEN_FDS")
            unsetenv("LISTEN_FDNAMES")
        }
        guard let pid = environment["LISTEN_PID"].flatMap({ Int32($0) }), pid == getpid(),
            let count = environment["LISTEN_FDS"].flatMap({ Int32($0) }), count > 0
        else { return [] }
        return (0..<count).map { index in
            let fd = FileDescriptor(rawValue: 3 + index)
            try? fd.setCloseOnExec()
            return fd
        }
    }

    /// Parses a permission list, or fails start-up naming the setting.
    /// A `bind_to_address` line that cannot be listened on, as `mpd` says it (`Failed to listen on VALUE (line N);
    /// REASON`), the line named as for every other setting.
    static func listenError(_ parameter: ConfigParameter, _ reason: String) -> StartupError {
        StartupError(
            description:
                "\(ConfigError(location: parameter.location, message: "Failed to listen on \(parameter.value); \(reason)"))"
        )
    }

    static func permission(_ text: String, in setting: String) throws(StartupError) -> Permission {
        guard let permission = Permission(parsingList: text) else {
            throw StartupError(description: "unknown permission in \(setting) \"\(text)\"")
        }
        return permission
    }

    /// Where the database lives when `db_file` is not set: `$XDG_CACHE_HOME/fermata/db`, as `mpd` 0.23
    /// uses `$XDG_CACHE_HOME/mpd/db`. The daemon creates the directory, once it runs as the configured user.
    static func defaultDatabaseFile(environment: [String: String]) -> String? {
        let cache: String
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            cache = xdg
        } else if let home = environment["HOME"], !home.isEmpty {
            cache = home + "/.cache"
        } else {
            return nil
        }
        return cache + "/fermata/db"
    }

    /// Maps the configuration onto what the server needs; `formats` are the enabled decoder plugins,
    /// `playlists` the enabled playlist plugins.
    static func serverOptions(
        from settings: Settings, formats: FormatRegistry, playlists: PlaylistRegistry = .standard,
        openRemote: RemoteOpener? = nil, environment: [String: String], logger: Logger
    ) throws(StartupError) -> ServerOptions {
        var options = ServerOptions()
        options.playlistPlugins = playlists
        guard let port = UInt16(exactly: settings.port) else {
            throw StartupError(description: "port out of range: \(settings.port)")
        }
        options.port = port
        let home = environment["HOME"] ?? "/"
        for parameter in settings.bindAddresses {
            do {
                options.listenAddresses.append(
                    try ListenAddress(parsing: parameter.value, defaultPort: port, home: home))
            } catch {
                throw Self.listenError(parameter, "\(error)")
            }
        }
        options.connectionTimeoutSeconds = Double(settings.connectionTimeoutSeconds)
        options.maxConnections = settings.maxConnections
        options.maxCommandListSize = settings.maxCommandListSize
        options.maxOutputBufferSize = settings.maxOutputBufferSize
        options.metadataToUse = settings.metadataToUse
        options.maxPlaylistLength = settings.maxPlaylistLength
        options.replayGainMode = ReplayGainMode(rawValue: settings.replayGainMode) ?? .off
        options.musicDirectory = settings.musicDirectory
        options.stickerFile = settings.stickerFile
        options.stateFile = settings.stateFile.map { path in
            StateFileOptions(
                path: path, intervalSeconds: Double(settings.stateFileInterval), restorePaused: settings.restorePaused)
        }
        options.playlists = PlaylistDirectory(
            path: settings.playlistDirectory, musicDirectory: settings.musicDirectory,
            absolutePaths: settings.saveAbsolutePathsInPlaylists, maximumLength: settings.maxPlaylistLength)
        if let musicDirectory = settings.musicDirectory {
            let registry = formats
            let updater = Updater(
                root: musicDirectory,
                reader: FormatReader(
                    registry: registry, metadata: settings.metadataToUse, playlists: playlists,
                    openRemote: openRemote, scanWorkerLogger: logger.labelled("update")),
                symlinks: .init(
                    followInside: settings.followInsideSymlinks, followOutside: settings.followOutsideSymlinks),
                logger: logger.labelled("update"), metadata: settings.metadataToUse)
            options.pictureReader = { path in try registry.readPicture(path: path) }
            options.commentReader = { path in try registry.readComments(path: path) }
            options.decoders = registry.plugins.map { ($0.name, $0.suffixes, $0.mimeTypes) }
            options.library = LibraryOptions(
                updater: updater, databaseFile: settings.dbFile ?? Self.defaultDatabaseFile(environment: environment),
                autoUpdate: settings.autoUpdate, autoUpdateDepth: settings.autoUpdateDepth)
            options.library?.compressDatabaseFile = settings.dbCompress
            options.library?.hidePlaylistTargets = settings.hidePlaylistTargets
            // Without `db_file` or a `database` block, as mpd: `mounts` beside the default database file.
            let defaultFile = settings.dbFile == nil ? options.library?.databaseFile : nil
            options.library?.cacheDirectory =
                defaultFile.map { String($0[..<($0.lastIndex(of: "/") ?? $0.endIndex)]) + "/mounts" }
                ?? settings.cacheDirectory
        }
        // The storages `mount` and `listfiles URI` make (off the loop), with or without a music directory: SMB
        // shares, UDisks2 file systems, NFS exports and WebDAV directories (mpd's smbclient, udisks, nfs and curl
        // storage plugins; the last reads songs through the input plugins, as the player opens URLs).
        options.storageOpener = { uri in
            if SMBInputStream.canOpen(uri) { return try SMBStorage(uri: uri) }
            if NFSInputStream.canOpen(uri) { return try NFSStorage(uri: uri) }
            if uri.hasPrefix("udisks://") { return try UdisksStorage(uri: uri, logger: logger.labelled("udisks")) }
            if let openRemote, CurlInputStream.canOpen(uri) { return WebDAVStorage(uri: uri, open: openRemote) }
            return nil
        }

        for entry in settings.passwords {
            guard let at = entry.lastIndex(of: "@") else {
                throw StartupError(description: "password \"\(entry)\" has no '@' and permissions")
            }
            guard let permission = Permission(parsingList: String(entry[entry.index(after: at)...])) else {
                throw StartupError(description: "unknown permission in password \"\(entry)\"")
            }
            options.passwords[String(entry[..<at])] = permission
        }
        // mpd's order: any password clears the default; default_permissions sets it; local_permissions
        // defaults to it; only then does any host_permissions clear the default again (so local clients
        // keep the configured default).
        if !settings.passwords.isEmpty { options.defaultPermissions = [] }
        if let text = settings.defaultPermissions {
            options.defaultPermissions = try Self.permission(text, in: "default_permissions")
        }
        if let text = settings.localPermissions {
            options.localPermissions = try Self.permission(text, in: "local_permissions")
        } else {
            options.localPermissions = options.defaultPermissions
        }
        for parameter in settings.hostPermissions {
            let entry = parameter.value
            options.defaultPermissions = []
            let host = entry.prefix { $0 != " " }
            let permission = try Self.permission(String(entry.dropFirst(host.count + 1)), in: "host_permissions")
            let addresses: [SocketAddress]
            do {
                addresses = try ListenAddress.resolve(hostAndPort: String(host), defaultPort: 0)
            } catch {
                // As mpd: `Error on line N; Failed to resolve 'HOST':'0': …`.
                throw StartupError(description: "\(ConfigError(location: parameter.location, message: "\(error)"))")
            }
            for address in addresses {
                if let numeric = address.numericHost, options.hostPermissions[numeric] == nil {
                    options.hostPermissions[numeric] = permission
                }
            }
        }
        return options
    }
}

extension Daemon {
    /// What `read` (a scan of a remote stream by the format plugins) gives, its error as the server reports it:
    /// no plugin took the stream, or the plugin's or the input's words.
    static func readStream<Value>(_ read: () throws(FormatError) -> Value) throws(StreamReadError) -> Value {
        do {
            return try read()
        } catch {
            if case .notRecognized = error { throw .notRecognized }
            throw .failed(message: error.mpdMessage)
        }
    }

    /// The URL schemes of the plugins whose libraries are loaded on first use, as a child process learns them.
    struct PluginSchemes {
        /// The ffmpeg input plugin's.
        var input: [String] = []
        /// The ffmpeg decoder plugin's.
        var decoder: [String] = []
        /// The curl input plugin's (`urlhandlers`).
        var curl: [String] = []
        /// The decoder plugins of `FormatRegistry.lazilyLoaded` that would not initialise, by name, and why.
        var unavailableDecoders: [String: String] = [:]
    }

    /// The URL schemes of the ffmpeg input and decoder plugins and of the curl input plugin, and the lazily loaded
    /// decoder plugins that would not initialise, as this program run with `--plugin-schemes` prints them; none when
    /// that fails (logged: the plugins then list none, as `mpd`'s are without FFmpeg). Start-up.
    static func pluginSchemes(logger: Logger) -> PluginSchemes {
        do {
            let output = try ChildProcess.output(of: "/proc/self/exe", arguments: ["fermata", "--plugin-schemes"])
            var schemes = PluginSchemes()
            for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
                let fields = line.split(separator: " ", maxSplits: 1).map(String.init)
                guard fields.count == 2 else { continue }
                switch fields[0] {
                case "input": schemes.input.append(fields[1])
                case "decoder": schemes.decoder.append(fields[1])
                case "curl": schemes.curl.append(fields[1])
                case "unavailable":
                    let words = fields[1].split(separator: " ", maxSplits: 1).map(String.init)
                    guard let name = words.first, FormatRegistry.lazilyLoaded.contains(name) else { continue }
                    schemes.unavailableDecoders[name] = words.count == 2 ? words[1] : "unknown error"
                default: continue
                }
            }
            return schemes
        } catch {
            logger.warning("plugin schemes unavailable", ["error": "\(error)"])
            return PluginSchemes()
        }
    }
}
