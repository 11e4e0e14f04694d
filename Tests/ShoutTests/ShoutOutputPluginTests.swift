// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Playback
import Shout
import TestTools
import Testing

/// The shout block's keys, read as `mpd` reads them (the streaming itself: conformance/test_shout.py).
@Suite struct ShoutOutputPluginTests {
    private func make(_ parameters: [String: String]) throws(OutputError) -> any AudioOutput {
        try ShoutOutputPlugin().makeOutput(
            OutputConfiguration(name: "Radio", type: "shout", parameters: BlockParameters(parameters)))
    }

    private let valid = ["host": "127.0.0.1", "port": "8000", "mount": "/live", "password": "secret"]

    @Test func aCompleteBlockMakesAShoutOutput() throws {
        #expect(try self.make(self.valid).plugin == "shout")
        #expect(try self.make(self.valid.merging(["encoding": "mp3", "bitrate": "128"]) { $1 }).plugin == "shout")
    }

    @Test func requiredKeys() {
        for key in ["host", "mount", "password"] {
            var parameters = self.valid
            parameters[key] = nil
            #expect(throws: OutputError("no \"\(key)\" defined for shout device")) { try self.make(parameters) }
        }
        var parameters = self.valid
        parameters["port"] = nil
        #expect(throws: OutputError("shout port must be configured")) { try self.make(parameters) }
    }

    @Test func protocolAndTLSAsMPDReadsThem() {
        #expect(throws: OutputError("you cannot stream \"audio/ogg\" to shoutcast, use mp3")) {
            try self.make(self.valid.merging(["protocol": "shoutcast"]) { $1 })
        }
        #expect(throws: OutputError("shout protocol \"rtp\" is not \"shoutcast\" or \"icecast1\"or \"icecast2\"")) {
            try self.make(self.valid.merging(["protocol": "rtp"]) { $1 })
        }
        #expect(throws: OutputError("invalid shout TLS option \"maybe\"")) {
            try self.make(self.valid.merging(["tls": "maybe"]) { $1 })
        }
    }

    @Test func theLegacyEncodingNamesAreAccepted() {
        // `encoding "mp3"` is lame, which wants a bitrate or a quality.
        #expect(throws: OutputError("neither bitrate nor quality defined")) {
            try self.make(self.valid.merging(["encoding": "mp3"]) { $1 })
        }
    }
}

/// libshout loaded when an output is enabled.
@Suite struct ShoutLibraryTests {
    private let parameters = ["host": "127.0.0.1", "port": "8000", "mount": "/live", "password": "secret"]

    @Test func loadedByTheFirstEnabledOutputAndKept() throws {
        let library = ShoutLibrary(soname: ShoutLibrary.headerSoname)
        let output = try ShoutOutputPlugin(library: library).makeOutput(
            OutputConfiguration(name: "Radio", type: "shout", parameters: BlockParameters(self.parameters)))
        #expect(!library.isLoaded)
        try output.enable()
        #expect(library.isLoaded)
        #expect(library.users == 1)
        output.disable()
        #expect(library.users == 0)
        try output.enable()
        output.disable()
        #expect(library.loadCount == 1)
    }

    /// A library that cannot be loaded fails every enable as `shout_new` failing would, reported once.
    @Test func missingLibraryFailsEveryEnableReportedOnce() throws {
        let reports = Reports()
        let library = ShoutLibrary(soname: "/nonexistent/libshout.so.3", reportFailure: reports.reporter)
        let output = try ShoutOutputPlugin(library: library).makeOutput(
            OutputConfiguration(name: "Radio", type: "shout", parameters: BlockParameters(self.parameters)))
        for _ in 0..<3 {
            #expect(throws: OutputError("shout_new() failed")) { try output.enable() }
        }
        output.disable()
        #expect(library.users == 0)
        #expect(reports.all.count == 1)
        #expect(reports.all.first?.contains("/nonexistent/libshout.so.3") == true)
    }
}
