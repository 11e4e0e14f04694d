// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Playback
import TestTools
import Testing

@testable import Shout

/// The shout block's keys, read as `mpd` reads them (the streaming itself: conformance/test_shout.py).
@Suite struct ShoutOutputPluginTests {
    private func make(_ parameters: [String: String]) throws(OutputError) -> any AudioOutput {
        var configuration = OutputConfiguration(name: "Radio", type: "shout", parameters: BlockParameters(parameters))
        configuration.line = 7
        return try ShoutOutputPlugin().makeOutput(configuration)
    }

    private let valid = [
        "host": "127.0.0.1", "port": "8000", "mount": "/live", "password": "secret", "name": "Radio",
    ]

    @Test func aCompleteBlockMakesAShoutOutput() throws {
        #expect(try self.make(self.valid).plugin == "shout")
        #expect(try self.make(self.valid.merging(["encoding": "mp3", "bitrate": "128"]) { $1 }).plugin == "shout")
    }

    /// In mpd's order (host, mount, password, name, then the port's check), naming the block's line.
    @Test func requiredKeys() {
        var parameters = self.valid
        // Each one missing (the port's check comes after them), then the first of those missing.
        for key in ["host", "mount", "password", "name"] {
            let missing = OutputError("no \"\(key)\" defined for shout device defined at line 7")
            var without = self.valid.merging(["port": "0"]) { $1 }
            without[key] = nil
            #expect(throws: missing) { try self.make(without) }
        }
        #expect(throws: OutputError("no \"mount\" defined for shout device defined at line 7")) {
            try self.make(self.valid.filter { !["mount", "password", "name"].contains($0.key) })
        }
        parameters["port"] = nil
        #expect(throws: OutputError("shout port must be configured")) { try self.make(parameters) }
        // The format is the block's to check (AudioOutputBlock), after the plugin's keys, as mpd's.
        #expect(ShoutOutputPlugin().needsFullyDefinedFormat)
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

    /// As mpd's 1024-byte buffer: `artist - title`, at most 1023 bytes, cut inside a UTF-8 sequence if need be.
    @Test func theMetadataSongIsCutAt1023Bytes() {
        func bytes(_ song: [CChar]) -> [UInt8] { song.map { UInt8(bitPattern: $0) } }
        #expect(bytes(ShoutOutput.metadataSong(artist: "", title: "")) == Array(" - ".utf8) + [0])
        #expect(bytes(ShoutOutput.metadataSong(artist: "A", title: "T")) == Array("A - T".utf8) + [0])
        let title = "x" + String(repeating: "é", count: 600)
        let song = bytes(ShoutOutput.metadataSong(artist: "Tone Maker", title: title))
        #expect(song.count == 1024 && song.last == 0)
        #expect(Array(song.dropLast()) == Array(Array("Tone Maker - \(title)".utf8)[..<1023]))
        // "Tone Maker - x" is 14 bytes, then 504 "é" (1008 bytes) and the first byte of the next one.
        #expect(song[1022] == 0xC3)
        let exact = String(repeating: "a", count: 1017)
        #expect(bytes(ShoutOutput.metadataSong(artist: "", title: exact)).count == 1021)
        #expect(bytes(ShoutOutput.metadataSong(artist: "NUL\u{0}after", title: "T")) == Array("NUL".utf8) + [0])
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
    private let parameters = [
        "host": "127.0.0.1", "port": "8000", "mount": "/live", "password": "secret", "name": "Radio",
    ]

    @Test func loadedByTheFirstEnabledOutputAndKept() throws {
        let library = ShoutLibrary(soname: ShoutLibrary.headerSoname)
        let output = try ShoutOutputPlugin(library: library).makeOutput(
            OutputConfiguration(
                name: "Radio", type: "shout", parameters: BlockParameters(self.parameters)))
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
            OutputConfiguration(
                name: "Radio", type: "shout", parameters: BlockParameters(self.parameters)))
        for _ in 0..<3 {
            #expect(throws: OutputError("shout_new() failed")) { try output.enable() }
        }
        output.disable()
        #expect(library.users == 0)
        #expect(reports.all.count == 1)
        #expect(reports.all.first?.contains("/nonexistent/libshout.so.3") == true)
    }
}
