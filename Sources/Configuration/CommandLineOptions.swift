// SPDX-License-Identifier: GPL-3.0-or-later

/// The parsed command line of the server: `fermata [options] [CONFIG]`, with `mpd` 0.23's options and meanings.
public struct CommandLineOptions: Sendable, Equatable {
    /// The configuration file, if one was named.
    public var configPath: String?
    /// `--help` (`-h`, `-?`).
    public var showHelp = false
    /// `--version` (`-V`).
    public var showVersion = false
    /// `--plugin-schemes`: print the URL schemes the ffmpeg input plugin takes (`input SCHEME`), those the
    /// ffmpeg decoder plugin opens itself (`decoder SCHEME`) and those libcurl supports that the curl input
    /// plugin lists (`curl SCHEME`), one per line, then the lazily loaded decoder plugins whose library cannot be
    /// loaded or set up (`unavailable PLUGIN REASON`: fluidsynth, mikmod, openmpt, modplug, gme) (what the daemon
    /// asks a child of its own at start-up, so that loading FFmpeg, libcurl and those plugins' libraries costs the
    /// daemon no memory).
    public var showPluginSchemes = false
    /// `--scan-worker`: read scan requests on standard input and answer them on standard output until it ends
    /// (what a database update runs to read the files of plugins whose libraries stay out of the daemon, such as
    /// FFmpeg's).
    public var scanWorker = false
    /// `--verbose` (`-v`): log everything.
    public var verbose = false
    /// `--stderr` (or its old name `--stdout`): log to standard error whatever `log_file` says.
    public var logToStandardError = false
    /// `--kill`: stop the instance whose process id is in `pid_file`, then exit.
    public var kill = false
    /// `--no-config`: read no configuration file; `mpd`'s defaults throughout.
    public var noConfig = false
    /// `--systemd`: run as a systemd service: `pid_file` is ignored (systemd tracks the process) and systemd is
    /// told when the server is ready.
    public var systemd = false
    /// `--no-daemon` (or `--systemd`): stay attached to the terminal. Fermata never detaches, so this changes
    /// nothing; it is kept for init scripts and habits.
    public var noDaemon = false

    /// A usage error: the message, printed with the usage line; exit code 64.
    public struct UsageError: Error, Equatable {
        /// What was wrong, e.g. `unknown option: --bogus`.
        public var message: String
    }

    /// Parses arguments (without the program name).
    ///
    /// As `mpd`: long options are matched whole, short ones one at a time (`-v`, not `-vV`), `--help` and
    /// `--version` win over everything else, and a second configuration file is an error. Unlike `mpd`, `--`
    /// ends the options and `-` is a file name.
    public init(_ arguments: [String]) throws(UsageError) {
        var positional: [String] = []
        var onlyPositional = false
        for argument in arguments {
            if onlyPositional || !argument.hasPrefix("-") || argument == "-" {
                positional.append(argument)
                continue
            }
            switch argument {
            case "--": onlyPositional = true
            case "-h", "-?", "--help": self.showHelp = true
            case "-V", "--version": self.showVersion = true
            case "--plugin-schemes": self.showPluginSchemes = true
            case "--scan-worker": self.scanWorker = true
            case "-v", "--verbose": self.verbose = true
            case "--stderr", "--stdout": self.logToStandardError = true
            case "--kill": self.kill = true
            case "--no-config": self.noConfig = true
            case "--no-daemon": self.noDaemon = true
            case "--systemd":
                self.systemd = true
                self.noDaemon = true
            default: throw UsageError(message: "unknown option: \(argument)")
            }
        }
        if self.showHelp || self.showVersion || self.showPluginSchemes || self.scanWorker { return }
        // As mpd: with --no-config the arguments after the options are not looked at.
        guard self.noConfig || positional.count <= 1 else { throw UsageError(message: "too many arguments") }
        self.configPath = self.noConfig ? nil : positional.first
    }

    /// What `--help` prints.
    public static let usage = """
        Usage: fermata [OPTIONS] [CONFIG]

        Fermata, a music server speaking the Music Player Daemon protocol.
        It reads CONFIG (mpd.conf syntax). Without CONFIG it reads the first of
        ~/.config/fermata/fermata.conf and /etc/fermata.conf. It always runs in the
        foreground: it never detaches from the terminal, with or without --no-daemon.

        Options:
          -h, --help       show this help and exit
          -V, --version    show the version and exit
          -v, --verbose    log at debug level
              --stderr     log to standard error, whatever log_file says (--stdout is
                           the same, as in mpd)
              --no-config  read no configuration file: mpd's defaults
              --kill       stop the running instance whose process id is in pid_file
                           (SIGTERM), then exit
              --systemd    systemd service mode: pid_file is ignored, systemd is told
                           when the server is ready (sd_notify READY=1)
              --no-daemon  accepted for mpd compatibility (Fermata never forks)
              --plugin-schemes
                           print the URL schemes the ffmpeg input and decoder
                           plugins and the curl input plugin take, and the
                           fluidsynth, mikmod, openmpt, modplug and gme decoder
                           plugins whose library cannot be loaded, and exit (the
                           server runs this at start-up to learn them)
              --scan-worker
                           internal: answer scan requests on standard input
                           (a database update runs this to read the files
                           FFmpeg reads, so that FFmpeg stays out of the server)

        With "user" in CONFIG and started as root, Fermata binds its sockets and
        opens log_file, then runs as that user, with its groups ("group" replaces
        them with one), before it writes the pid file or opens anything else.

        Signals: SIGTERM and SIGINT shut down cleanly (the state file is saved);
        SIGHUP reopens log_file. Under systemd socket activation (LISTEN_FDS) the
        sockets systemd passes are used instead of bind_to_address.
        Exit status: 0 after a clean shutdown and after --kill sent its signal, 1 on
        a configuration or start-up error (bad config, address in use, no such
        user, no process to kill), 64 on a usage error.
        """
}
