// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Playback
import TestTools
import Testing

@testable import Jack

/// The jack output's settings, formats and port connections, as `mpd`'s jack output reads and makes them, and its
/// library.
@Suite struct JackTests {
    private func settings(_ parameters: [String: String]) throws(OutputError) -> JackSettings {
        try JackSettings(OutputConfiguration(name: "J", type: "jack", parameters: BlockParameters(parameters)))
    }

    @Test func defaults() throws {
        let settings = try self.settings([:])
        #expect(settings.clientName == nil)
        #expect(settings.effectiveClientName == "Music Player Daemon")
        #expect(settings.serverName == nil)
        #expect(!settings.autostart)
        #expect(settings.sourcePorts == ["left", "right"])
        #expect(settings.destinationPorts.isEmpty)
        #expect(settings.autoDestinationPorts)
        #expect(settings.ringbufferSize == 32768)
        #expect(settings.warnings.isEmpty)
    }

    @Test func everyKey() throws {
        let settings = try self.settings([
            "client_name": "mine", "server_name": "studio", "autostart": "yes", "source_ports": "a,b,c",
            "destination_ports": "x:1,x:2,x:3", "auto_destination_ports": "no", "ringbuffer_size": "65536",
        ])
        #expect(settings.clientName == "mine" && settings.effectiveClientName == "mine")
        #expect(settings.serverName == "studio")
        #expect(settings.autostart)
        #expect(settings.sourcePorts == ["a", "b", "c"])
        #expect(settings.destinationPorts == ["x:1", "x:2", "x:3"])
        #expect(!settings.autoDestinationPorts)
        #expect(settings.ringbufferSize == 65536)
        #expect(settings.warnings.isEmpty)
    }

    /// `ports` is the old name of `destination_ports` (a warning); a count that differs from the source ports' is
    /// warned of too.
    @Test func deprecatedPortsAndMismatchWarn() throws {
        let old = try self.settings(["ports": "system:playback_1"])
        #expect(old.destinationPorts == ["system:playback_1"])
        #expect(
            old.warnings == [
                "deprecated option 'ports'",
                "number of source ports (2) mismatches the number of destination ports (1)",
            ])
        let both = try self.settings(["ports": "a", "destination_ports": "b,c"])
        #expect(both.destinationPorts == ["b", "c"])
        #expect(both.warnings.isEmpty)
    }

    /// Every comma separates, as mpd's splitting: empty names stay (an empty text is one empty name); 16 at most.
    @Test func portLists() throws {
        #expect(try JackSettings.portList("") == [""])
        #expect(try JackSettings.portList("a,,b,") == ["a", "", "b", ""])
        #expect(try JackSettings.portList(" a ") == [" a "])
        let sixteen = (1...16).map { "p\($0)" }
        #expect(try JackSettings.portList(sixteen.joined(separator: ",")) == sixteen)
        #expect(throws: OutputError("too many port names")) {
            try JackSettings.portList((1...17).map { "p\($0)" }.joined(separator: ","))
        }
        #expect(throws: OutputError("too many port names")) {
            try self.settings(["destination_ports": ",,,,,,,,,,,,,,,,"])
        }
    }

    @Test func badValuesAsMPD() {
        #expect(
            throws: OutputError(
                "Error in setting \"autostart\" on line 0; Not a valid boolean (\"yes\" or \"no\"): \"maybe\"")
        ) {
            try self.settings(["autostart": "maybe"])
        }
        #expect(throws: OutputError("Error in setting \"ringbuffer_size\" on line 0; Value must be positive")) {
            try self.settings(["ringbuffer_size": "0"])
        }
        #expect(throws: OutputError("Error in setting \"ringbuffer_size\" on line 0; Failed to parse number")) {
            try self.settings(["ringbuffer_size": "big"])
        }
    }

    /// Float at the server's rate; one channel with one source port, two when the song has more channels than
    /// there are source ports, else the song's.
    @Test func formats() throws {
        let stereo = try self.settings([:])
        #expect(
            stereo.outputFormat(for: AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2), serverRate: 48000)
                == AudioFormat(sampleRate: 48000, sampleFormat: .float, channels: 2))
        #expect(
            stereo.outputFormat(for: AudioFormat(sampleRate: 96000, sampleFormat: .s24, channels: 1), serverRate: 44100)
                == AudioFormat(sampleRate: 44100, sampleFormat: .float, channels: 1))
        #expect(
            stereo.outputFormat(for: AudioFormat(sampleRate: 48000, sampleFormat: .s16, channels: 6), serverRate: 48000)
                .channels == 2)
        let one = try self.settings(["source_ports": "mono"])
        #expect(
            one.outputFormat(for: AudioFormat(sampleRate: 48000, sampleFormat: .s16, channels: 2), serverRate: 48000)
                .channels == 1)
        let four = try self.settings(["source_ports": "a,b,c,d"])
        #expect(
            four.outputFormat(for: AudioFormat(sampleRate: 48000, sampleFormat: .s16, channels: 3), serverRate: 48000)
                .channels == 3)
        #expect(
            four.outputFormat(for: AudioFormat(sampleRate: 48000, sampleFormat: .s16, channels: 6), serverRate: 48000)
                .channels == 2)
    }

    private func pairs(_ channels: Int, _ destinations: [String]) -> [String] {
        JackSettings.connections(channels: channels, destinations: destinations).map {
            "\($0.source)>\($0.destination)"
        }
    }

    /// As many connections as channels, in order; mono to the first two destinations; several channels to one
    /// destination connect only the first channel (as mpd's); none without destinations.
    @Test func connections() {
        #expect(self.pairs(2, ["p1", "p2"]) == ["0>p1", "1>p2"])
        #expect(self.pairs(2, ["p1", "p2", "p3", "p4"]) == ["0>p1", "1>p2"])
        #expect(self.pairs(3, ["p1", "p2"]) == ["0>p1", "1>p2"])
        #expect(self.pairs(1, ["p1", "p2", "p3"]) == ["0>p1", "0>p2"])
        #expect(self.pairs(1, ["p1"]) == ["0>p1"])
        #expect(self.pairs(2, ["p1"]) == ["0>p1"])
        #expect(self.pairs(2, []).isEmpty)
    }

    /// A library that cannot be loaded fails every enable, reported once; a parameter error fails the output's
    /// making.
    @Test func missingLibraryFailsEveryEnableReportedOnce() throws {
        let reports = Reports()
        let library = JackLibrary(soname: "/nonexistent/libjack.so.0", reportFailure: reports.reporter)
        let plugin = JackOutputPlugin(library: library)
        let output = try plugin.makeOutput(OutputConfiguration(name: "A", type: "jack", parameters: [:]))
        #expect(output.plugin == "jack")
        #expect(try plugin.makeHardwareMixer(OutputConfiguration(name: "A", type: "jack"), onChange: {}) == nil)
        for _ in 0..<2 {
            #expect(throws: OutputError("libjack could not be loaded")) { try output.enable() }
        }
        output.disable()
        #expect(library.users == 0)
        #expect(reports.all.count == 1)
    }

    /// Not loaded until an output is enabled; with no server to connect to (and none started), enabling fails in
    /// mpd's words and releases the library.
    @Test func noServerFailsTheEnable() throws {
        let library = JackLibrary(soname: JackLibrary.headerSoname)
        let output = try JackOutputPlugin(library: library).makeOutput(
            OutputConfiguration(name: "A", type: "jack", parameters: ["server_name": "fermata-unit-no-such-server"]))
        #expect(!library.isLoaded)
        #expect(throws: OutputError("Failed to connect to JACK server, status=17")) { try output.enable() }
        #expect(library.isLoaded)
        #expect(library.users == 0)
        output.disable()
    }
}
