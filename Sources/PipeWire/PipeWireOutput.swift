// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Playback
import Recorder
import Synchronization

/// `type "pipewire"`: plays to a PipeWire daemon through libpipewire's thread loop, as `mpd`'s pipewire output: a
/// thread loop while enabled, one stream per song format (node `mpd.NAME`, connected inactive and made active once
/// half a second is buffered), fed from a ring buffer by libpipewire's realtime thread; pause makes the stream
/// inactive, stop and seek drop the buffers, the end of the queue drains.
///
/// Used on its output thread, except `interrupt()` (any thread). `@unchecked Sendable`: see
/// ``PipeWireConnection``.
final class PipeWireOutput: AudioOutput, @unchecked Sendable {
    let plugin = "pipewire"

    let connection: PipeWireConnection

    init(connection: PipeWireConnection) { self.connection = connection }

    func enable() throws(OutputError) { try self.connection.enable() }

    func disable() { self.connection.disable() }

    /// 8-, 16-, 24-in-32-, 32-bit and float songs play as they are; DSD as 16-bit.
    func open(_ format: AudioFormat) throws(OutputError) -> AudioFormat {
        let (stream, output) = PipeWireStreamFormat.forInput(format)
        try self.connection.open(
            stream, frameSize: output.frameSize, ringBytes: PipeWireStreamFormat.ringBytes(output))
        return output
    }

    func close() { self.connection.close() }

    func play(_ data: UnsafeRawBufferPointer) throws(OutputError) -> Int { try self.connection.play(data) }

    func drain() throws(OutputError) -> Bool { try self.connection.drain() }

    func cancel() { self.connection.cancel() }

    var hasPauseMode: Bool { true }
    func pause() -> Bool { self.connection.pause() }

    func interrupt() { self.connection.interrupt() }

    /// `media.name` is `mpd`'s tag template `%artist% - %title%`.
    func sendTag(_ tags: [TagItem]) {
        self.connection.sendTag(
            name: TagTemplate.format("%artist% - %title%", tags: tags, now: 0) ?? "",
            artist: tags.first { $0.type == .artist }?.value, title: tags.first { $0.type == .title }?.value)
    }
}

/// `mixer_type "hardware"` on a pipewire output (the default): the stream's channel volumes, as `mpd`'s pipewire
/// mixer. A global mixer: it answers (100 at first) and takes a volume while the output is enabled, before any
/// stream, which then starts at that volume. Reading returns the volume last set or reported by the stream (another
/// program's change is told to `onChange`); setting does not wait for the daemon. Any thread.
final class PipeWireMixer: Mixer {
    private let connection: PipeWireConnection

    init(connection: PipeWireConnection, onChange: @escaping @Sendable () -> Void) {
        self.connection = connection
        connection.attachMixer(onChange: onChange)
    }

    func open() throws(OutputError) {}
    func close() {}
    func volume() throws(OutputError) -> Int { self.connection.mixerVolume() }
    func setVolume(_ volume: Int) throws(OutputError) { try self.connection.setMixerVolume(volume) }
}

/// The `pipewire` output plugin: makes ``PipeWireOutput``s and, for `mixer_type "hardware"` (the default), their
/// ``PipeWireMixer``s. Reads `remote`, `target` and `dsd`, as `mpd`'s.
///
/// libpipewire is loaded only when a pipewire output is first enabled (``PipeWireLibrary``). Any thread.
public final class PipeWireOutputPlugin: OutputPlugin {
    /// `pipewire`.
    public let name = "pipewire"

    private let library: PipeWireLibrary
    private let logger: Logger?
    /// The connections made, by output name, until their mixer takes them (the mixer shares the output's).
    private let made = Mutex<[String: PipeWireConnection]>([:])

    /// The plugin, loading `library` when an output is first enabled; `logger` hears of underruns.
    public init(library: PipeWireLibrary = .shared, logger: Logger? = nil) {
        self.library = library
        self.logger = logger
    }

    /// - Throws: `target must not be empty`, or a bad `dsd`'s message.
    public func makeOutput(_ configuration: OutputConfiguration) throws(OutputError) -> any AudioOutput {
        let settings = try PipeWireSettings(configuration)
        let connection = PipeWireConnection(settings: settings, library: self.library, logger: self.logger)
        self.made.withLock { $0[configuration.name] = connection }
        return PipeWireOutput(connection: connection)
    }

    public func makeHardwareMixer(
        _ configuration: OutputConfiguration, onChange: @escaping @Sendable () -> Void
    ) throws(OutputError) -> (any Mixer)? {
        guard let connection = self.made.withLock({ $0.removeValue(forKey: configuration.name) }) else {
            return nil
        }
        return PipeWireMixer(connection: connection, onChange: onChange)
    }
}
