// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Playback

/// `type "pulse"`: plays to a PulseAudio server (or pipewire-pulse) through libpulse's threaded main loop, as
/// `mpd`'s pulse output: one client connection while enabled (`Music Player Daemon`), one playback stream per
/// song format (named after the output, WAVE-EX's channel map, the server's default buffering), pause by corking,
/// stop and seek by flushing, the end of the queue by draining.
///
/// Used on its output thread, except `interrupt()` (any thread). `@unchecked Sendable`: the connection's state is
/// under libpulse's main loop lock (see ``PulseConnection``).
final class PulseOutput: AudioOutput, @unchecked Sendable {
    let plugin = "pulse"

    let connection: PulseConnection

    init(connection: PulseConnection) { self.connection = connection }

    func enable() throws(OutputError) { try self.connection.enable() }

    func disable() { self.connection.disable() }

    /// Float, 32-bit and 24-bit songs play as they are; others as 16-bit. The rate is capped at 384 kHz.
    func open(_ format: AudioFormat) throws(OutputError) -> AudioFormat {
        let (spec, output) = PulseSampleSpec.forInput(format)
        try self.connection.open(spec, frameSize: output.frameSize)
        return output
    }

    func close() { self.connection.close() }

    func play(_ data: UnsafeRawBufferPointer) throws(OutputError) -> Int { try self.connection.play(data) }

    func drain() throws(OutputError) -> Bool { try self.connection.drain() }

    func cancel() { self.connection.cancel() }

    var hasPauseMode: Bool { true }
    func pause() -> Bool { self.connection.pause() }

    func interrupt() { self.connection.interrupt() }
}

/// `mixer_type "hardware"` on a pulse output (the default): the volume of the output's sink input, as `mpd`'s
/// pulse mixer. Reading returns the volume last read from the server (kept current by a subscription to the
/// server's sink input events, which also tell `onChange` of another program's change); setting sends the new
/// volume without waiting for the answer. Neither waits on the server. Any thread.
final class PulseMixer: Mixer {
    private let connection: PulseConnection

    init(connection: PulseConnection, scale: PulseVolumeScale, onChange: @escaping @Sendable () -> Void) {
        self.connection = connection
        connection.attachMixer(scale: scale, onChange: onChange)
    }

    func open() throws(OutputError) {}
    func close() {}
    func volume() throws(OutputError) -> Int { self.connection.mixerVolume() }
    func setVolume(_ volume: Int) throws(OutputError) { try self.connection.setMixerVolume(volume) }
    /// As `mpd`'s pulse mixer, which is not global: only once the output has played.
    var acceptsVolume: Bool { self.connection.hasOpened }
    /// As `mpd`'s: open only while its output is.
    var isGlobal: Bool { false }
}
