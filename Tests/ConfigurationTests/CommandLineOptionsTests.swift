// SPDX-License-Identifier: GPL-3.0-or-later

import Testing

@testable import Configuration

struct CommandLineOptionsTests {
    private func parse(_ arguments: String...) throws -> CommandLineOptions {
        try CommandLineOptions(arguments)
    }

    @Test func mpdsOptionsSetTheirFlags() throws {
        #expect(try self.parse("--kill", "/etc/mpd.conf").kill)
        #expect(try self.parse("--kill", "/etc/mpd.conf").configPath == "/etc/mpd.conf")
        #expect(try self.parse("--no-daemon").noDaemon)
        #expect(try self.parse("--stderr").logToStandardError)
        #expect(try self.parse("--stdout").logToStandardError)
        #expect(try self.parse("-v").verbose && self.parse("--verbose").verbose)
        #expect(try self.parse("-V").showVersion && self.parse("--version").showVersion)
        #expect(try self.parse("-h").showHelp && self.parse("-?").showHelp && self.parse("--help").showHelp)
        let systemd = try self.parse("--systemd")
        #expect(systemd.systemd && systemd.noDaemon)
        #expect(try self.parse() == CommandLineOptions([]))
        #expect(try !self.parse().noDaemon && !self.parse().kill)
    }

    @Test func internalModesIgnoreTheRest() throws {
        #expect(try self.parse("--scan-worker").scanWorker)
        #expect(try self.parse("--scan-worker", "a", "b").configPath == nil)
        #expect(try self.parse("--plugin-schemes", "a", "b").showPluginSchemes)
        #expect(try !self.parse().scanWorker)
        #expect(CommandLineOptions.usage.contains("--scan-worker"))
    }

    @Test func noConfigIgnoresTheFiles() throws {
        let options = try self.parse("--no-config", "/etc/mpd.conf", "another")
        #expect(options.noConfig && options.configPath == nil)
    }

    @Test func usageErrors() {
        #expect(throws: CommandLineOptions.UsageError(message: "unknown option: --bogus")) { try self.parse("--bogus") }
        // Short options come one at a time, as in mpd.
        #expect(throws: CommandLineOptions.UsageError(message: "unknown option: -vV")) { try self.parse("-vV") }
        #expect(throws: CommandLineOptions.UsageError(message: "too many arguments")) { try self.parse("a", "b") }
    }

    @Test func helpAndVersionWinOverTheRest() throws {
        #expect(try self.parse("a", "b", "--help").showHelp)
        #expect(try self.parse("--version", "a", "b").showVersion)
    }

    @Test func doubleDashEndsTheOptions() throws {
        #expect(try self.parse("--", "--kill").configPath == "--kill")
        #expect(try !self.parse("--", "--kill").kill)
    }

    @Test func helpNamesEveryOption() {
        for option in [
            "--help", "--version", "--verbose", "--stderr", "--no-config", "--kill", "--systemd", "--no-daemon",
        ] {
            #expect(CommandLineOptions.usage.contains(option), "\(option)")
        }
    }
}
