// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Playback

/// What a `jack` block sets, read as `mpd`'s jack output reads it. Pure; any thread.
public struct JackSettings: Sendable, Equatable {
    /// The most source (or destination) ports a block names.
    public static let maximumPorts = 16
    /// The client name when the block sets none.
    public static let defaultClientName = "Music Player Daemon"

    /// `client_name`: the JACK client's name, which must then be free (`JackUseExactName`); `nil` for
    /// `Music Player Daemon`, which the server may suffix.
    public var clientName: String?
    /// `server_name`: which JACK server (`JackServerName`); `nil` for libjack's default.
    public var serverName: String?
    /// `autostart`: libjack may start a server (default no: `JackNoStartServer`).
    public var autostart: Bool
    /// `source_ports`: the output ports the client registers (default `left,right`); their count caps the channels.
    public var sourcePorts: [String]
    /// `destination_ports` (or the older `ports`): the ports to connect to; empty for the physical playback ports.
    public var destinationPorts: [String]
    /// `auto_destination_ports`: with no destination ports, connect to the physical playback ports (default yes).
    public var autoDestinationPorts: Bool
    /// `ringbuffer_size`: bytes of each channel's ring buffer (default 32768).
    public var ringbufferSize: UInt32
    /// What `mpd` warns of (the deprecated `ports`, a port count mismatch), for the log.
    public var warnings: [String]

    /// The name the client asks for.
    public var effectiveClientName: String { self.clientName ?? Self.defaultClientName }

    /// Reads the block's keys.
    ///
    /// - Throws: `mpd`'s message for a bad value: `too many port names`, a bad boolean or number.
    public init(_ configuration: OutputConfiguration) throws(OutputError) {
        let parameters = configuration.parameters
        self.clientName = parameters["client_name"]
        self.serverName = parameters["server_name"]
        self.autostart = try configuration.bool("autostart", default: false)
        self.sourcePorts = try Self.portList(parameters["source_ports"] ?? "left,right")
        var warnings: [String] = []
        var destinations = parameters["destination_ports"]
        if destinations == nil, let old = parameters["ports"] {
            destinations = old
            warnings.append("deprecated option 'ports'")
        }
        self.destinationPorts = try destinations.map { (text) throws(OutputError) in try Self.portList(text) } ?? []
        self.autoDestinationPorts = try configuration.bool("auto_destination_ports", default: true)
        if !self.destinationPorts.isEmpty, self.destinationPorts.count != self.sourcePorts.count {
            warnings.append(
                "number of source ports (\(self.sourcePorts.count)) mismatches the number of destination ports "
                    + "(\(self.destinationPorts.count))")
        }
        self.ringbufferSize = try configuration.positive("ringbuffer_size", default: 32768)
        self.warnings = warnings
    }

    /// A comma-separated list of port names, as `mpd` splits it: every comma separates (an empty text is one empty
    /// name), at most 16 names.
    ///
    /// - Throws: `too many port names`.
    public static func portList(_ text: String) throws(OutputError) -> [String] {
        let names = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard names.count <= Self.maximumPorts else { throw OutputError("too many port names") }
        return names
    }

    /// The format a stream in `input` is played in: 32-bit float at the server's rate; one channel with one source
    /// port, two when the song has more channels than there are source ports, else the song's.
    public func outputFormat(for input: AudioFormat, serverRate: Int) -> AudioFormat {
        var output = input
        output.sampleRate = serverRate
        output.sampleFormat = .float
        if self.sourcePorts.count == 1 {
            output.channels = 1
        } else if input.channels > self.sourcePorts.count {
            output.channels = 2
        }
        return output
    }

    /// The connections a stream of `channels` channels makes (source port index, destination port name), as
    /// `mpd`'s: to `destinations` (the configured ports, or the physical playback ports) in order, as many as there
    /// are channels; a mono stream with two destinations or more goes to the first two; a stream of several
    /// channels with one destination connects only its first channel (`mpd` means to mix them there but connects
    /// one port).
    public static func connections(channels: Int, destinations: [String]) -> [(source: Int, destination: String)] {
        guard let first = destinations.first else { return [] }
        if channels >= 2, destinations.count == 1 { return [(0, first)] }
        if channels == 1, destinations.count >= 2 { return [(0, first), (0, destinations[1])] }
        return destinations.prefix(channels).enumerated().map { ($0.offset, $0.element) }
    }
}
