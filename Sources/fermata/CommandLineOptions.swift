// SPDX-License-Identifier: GPL-3.0-or-later

/// The parsed command line: `fermata [options] [CONFIG]`.
struct CommandLineOptions {
    /// The configuration file, if one was named.
    var configPath: String?
    /// `--help`.
    var showHelp = false
    /// `--version`.
    var showVersion = false
    /// `--verbose`: log everything.
    var verbose = false
    /// `--stderr`: log to standard error whatever `log_file` says.
    var logToStandardError = false

    /// A usage error: the message, printed with the usage line; exit code 64.
    struct UsageError: Error {
        var message: String
    }

    /// Parses arguments (without the program name).
    ///
    /// `--no-daemon` is accepted for `mpd`-compatible invocations; Fermata always stays in the foreground.
    init(_ arguments: [String]) throws(UsageError) {
        var positional: [String] = []
        var onlyPositional = false
        for argument in arguments {
            if onlyPositional || !argument.hasPrefix("-") || argument == "-" {
                positional.append(argument)
                continue
            }
            switch argument {
            case "--": onlyPositional = true
            case "-h", "--help": self.showHelp = true
            case "-V", "--version": self.showVersion = true
            case "-v", "--verbose": self.verbose = true
            case "--stderr": self.logToStandardError = true
            case "--no-daemon": break
            default: throw UsageError(message: "unknown option: \(argument)")
            }
        }
        guard positional.count <= 1 else { throw UsageError(message: "too many arguments") }
        self.configPath = positional.first
    }

    static let usage = """
        Usage: fermata [OPTIONS] [CONFIG]

        Fermata, a music server speaking the Music Player Daemon protocol.
        It runs in the foreground, reading CONFIG (mpd.conf syntax). Without CONFIG it
        reads the first of ~/.config/fermata/fermata.conf and /etc/fermata.conf.

        Options:
          -h, --help       show this help and exit
          -V, --version    show the version and exit
          -v, --verbose    log at debug level
              --stderr     log to standard error, whatever log_file says
              --no-daemon  accepted for mpd compatibility (Fermata never forks)

        Signals: SIGTERM and SIGINT shut down cleanly (the state file is saved);
        SIGHUP reopens log_file. Under systemd socket activation (LISTEN_FDS) the
        sockets systemd passes are used instead of bind_to_address.
        Exit status: 0 after a clean shutdown, 1 on a configuration or start-up
        error (bad config, address in use), 64 on a usage error.
        """
}
