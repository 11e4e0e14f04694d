// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Playback
import Synchronization

/// The `pulse` output plugin: makes ``PulseOutput``s and, for `mixer_type "hardware"` (the default), their
/// ``PulseMixer``s. Reads `server`, `sink`, `media_role` and (for the mixer) `scale_volume`, as `mpd`'s.
///
/// libpulse is loaded only when a pulse output is first enabled (``PulseLibrary``). Any thread.
public final class PulseOutputPlugin: OutputPlugin {
    /// `pulse`.
    public let name = "pulse"

    private let library: PulseLibrary
    /// The connections made, by output name, until their mixer takes them (the mixer shares the output's).
    private let made = Mutex<[String: PulseConnection]>([:])

    /// The plugin, loading `library` when an output is first enabled.
    public init(library: PulseLibrary = .shared) { self.library = library }

    /// Whether libpulse connects to its default server now (no `server` set: `$PULSE_SERVER`, the user's socket,
    /// the system's): how `mpd` tests pulse's default device when it detects an output (no `audio_output` block),
    /// after sndio and ALSA. Loads libpulse for the probe. Start-up only; blocks until the server answers or fails.
    public func probeDefaultDevice() -> Bool {
        let connection = PulseConnection(
            settings: PulseSettings(streamName: pulseClientName, server: nil, sink: nil, mediaRole: nil),
            library: self.library)
        do throws(OutputError) {
            try connection.enable()
            defer { connection.disable() }
            try connection.waitUntilConnected()
            return true
        } catch {
            return false
        }
    }

    /// ``probeDefaultDevice()``; `mpd` logs nothing when it fails.
    public func testDefaultDevice() -> DefaultDeviceTest? { self.probeDefaultDevice() ? .opens : .fails(errors: []) }

    public func makeOutput(_ configuration: OutputConfiguration) throws(OutputError) -> any AudioOutput {
        let settings = PulseSettings(
            streamName: configuration.name, server: configuration.parameters["server"],
            sink: configuration.parameters["sink"], mediaRole: configuration.parameters["media_role"])
        let connection = PulseConnection(settings: settings, library: self.library)
        self.made.withLock { $0[configuration.name] = connection }
        return PulseOutput(connection: connection)
    }

    /// The output's sink input volume, scaled by `scale_volume`.
    ///
    /// - Throws: `"TEXT" is not a number in the range 0.5 to 5.0`.
    public func makeHardwareMixer(
        _ configuration: OutputConfiguration, onChange: @escaping @Sendable () -> Void
    ) throws(OutputError) -> (any Mixer)? {
        let scale = try PulseVolumeScale(parsing: configuration.parameters["scale_volume"])
        guard let connection = self.made.withLock({ $0.removeValue(forKey: configuration.name) }) else {
            return nil
        }
        return PulseMixer(connection: connection, scale: scale, onChange: onChange)
    }
}
