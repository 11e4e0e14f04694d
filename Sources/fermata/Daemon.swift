// SPDX-License-Identifier: GPL-3.0-or-later

import Configuration
import Formats
import Foundation
import Library
import MPDProtocol
import Model
import Network
import Posix
import Server

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

    /// Runs the daemon until SIGTERM, SIGINT or `kill`.
    ///
    /// Must be called on the main thread before any other thread starts, so the signal mask is inherited.
    static func run(_ commandLine: CommandLineOptions) throws(StartupError) {
        let environment = ProcessInfo.processInfo.environment
        let configPath: String
        if let path = commandLine.configPath {
            configPath = path
        } else {
            let candidates = Self.defaultConfigPaths(environment: environment)
            guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
                throw StartupError(
                    description: "no configuration file found (looked for \(candidates.joined(separator: ", ")))")
            }
            configPath = found
        }

        let settings: Settings
        do {
            settings = try Settings(file: try ConfigFile(contentsOf: configPath), environment: environment)
        } catch {
            throw StartupError(description: "\(error)")
        }

        let sink: LogSink
        if let logFile = settings.logFile, logFile != "syslog", !commandLine.logToStandardError {
            do {
                sink = try LogSink(path: logFile)
            } catch {
                throw StartupError(description: "cannot open log_file \"\(logFile)\": \(error.localizedDescription)")
            }
        } else {
            sink = LogSink()
        }
        let logger = Logger(label: "fermata", threshold: commandLine.verbose ? .debug : settings.logLevel) {
            sink.write($0, $1)
        }
        if settings.logFile == "syslog" && !commandLine.logToStandardError {
            logger.warning("log_file \"syslog\" is not supported yet; logging to standard error")
        }
        for warning in settings.warnings { logger.warning(warning) }

        let options = try Self.serverOptions(from: settings, environment: environment, logger: logger)

        if let pidFile = settings.pidFile {
            do {
                try "\(getpid())\n".write(toFile: pidFile, atomically: true, encoding: .utf8)
            } catch {
                throw StartupError(description: "cannot write pid_file \"\(pidFile)\": \(error.localizedDescription)")
            }
        }
        defer { if let pidFile = settings.pidFile { unlinkPath(pidFile) } }

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

        let player = Self.makePlayer(settings: settings, loop: loop, logger: logger.labelled("player"))
        let server = Server(loop: loop, options: options, logger: logger.labelled("server"), player: player) {
            loop.stop()
        }
        do {
            try server.start()
        } catch {
            throw StartupError(description: "\(error)")
        }
        logger.notice(
            "ready", ["version": Self.version, "listening": server.boundAddresses.map(\.description).joined(separator: ",")])

        do {
            let registration = try loop.register(signals, events: .input) { _ in
                while let signal = SignalFD.read(signals) {
                    switch signal {
                    case SIGHUP:
                        logger.info("SIGHUP received")
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
        server.shutdown()
        logger.notice("stopped")
    }

    /// Where the database lives when `db_file` is not set: `$XDG_CACHE_HOME/fermata/db`, as `mpd` 0.23
    /// uses `$XDG_CACHE_HOME/mpd/db`. The directory is created when missing.
    static func defaultDatabaseFile(environment: [String: String]) -> String? {
        let cache: String
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            cache = xdg
        } else if let home = environment["HOME"], !home.isEmpty {
            cache = home + "/.cache"
        } else {
            return nil
        }
        let directory = cache + "/fermata"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory + "/db"
    }

    /// Maps the configuration onto what the server needs.
    static func serverOptions(
        from settings: Settings, environment: [String: String], logger: Logger
    ) throws(StartupError) -> ServerOptions {
        var options = ServerOptions()
        guard let port = UInt16(exactly: settings.port) else {
            throw StartupError(description: "port out of range: \(settings.port)")
        }
        options.port = port
        let home = environment["HOME"] ?? "/"
        for text in settings.bindAddresses {
            do {
                options.listenAddresses.append(try ListenAddress(parsing: text, defaultPort: port, home: home))
            } catch {
                throw StartupError(description: "\(error)")
            }
        }
        options.connectionTimeoutSeconds = Double(settings.connectionTimeoutSeconds)
        options.maxConnections = settings.maxConnections
        options.maxCommandListSize = settings.maxCommandListSize
        options.maxOutputBufferSize = settings.maxOutputBufferSize
        options.metadataToUse = settings.metadataToUse
        options.maxPlaylistLength = settings.maxPlaylistLength
        options.musicDirectory = settings.musicDirectory
        if let musicDirectory = settings.musicDirectory {
            // The one place that knows which formats exist: the scanner, readpicture and readcomments share it.
            let registry = FormatRegistry.standard
            let updater = Updater(
                root: musicDirectory, reader: FormatReader(registry: registry),
                symlinks: .init(
                    followInside: settings.followInsideSymlinks, followOutside: settings.followOutsideSymlinks),
                logger: logger.labelled("update"), metadata: settings.metadataToUse)
            options.pictureReader = { path in try registry.plugin(forPath: path)?.readPicture(path: path) }
            options.commentReader = { path in try registry.plugin(forPath: path)?.readComments(path: path) ?? [] }
            options.library = LibraryOptions(
                updater: updater, databaseFile: settings.dbFile ?? Self.defaultDatabaseFile(environment: environment),
                autoUpdate: settings.autoUpdate, autoUpdateDepth: settings.autoUpdateDepth)
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
        if let text = settings.defaultPermissions {
            guard let permission = Permission(parsingList: text) else {
                throw StartupError(description: "unknown permission in default_permissions \"\(text)\"")
            }
            options.defaultPermissions = permission
        } else if !settings.passwords.isEmpty || !settings.hostPermissions.isEmpty {
            // As in mpd: once any password exists, clients without one get nothing unless configured.
            options.defaultPermissions = []
        }
        if let text = settings.localPermissions {
            guard let permission = Permission(parsingList: text) else {
                throw StartupError(description: "unknown permission in local_permissions \"\(text)\"")
            }
            options.localPermissions = permission
        } else {
            options.localPermissions = options.defaultPermissions
        }
        return options
    }
}
