// SPDX-License-Identifier: GPL-3.0-or-later

import CJack
import DynamicLibrary
import Model
import Playback
import Synchronization

/// libjack, loaded when a jack output is first enabled and kept loaded.
///
/// The `fermata` binary does not link libjack: a server without a jack output never maps it. When it cannot be
/// loaded, enabling a jack output fails, and the reason is reported once, on stderr. libjack's own error messages go
/// to the log given to the plugin (`jack_output: …`, as `mpd` logs them).
public final class JackLibrary: Sendable {
    /// The process's library: Debian's soname, `libjack.so.0` (JACK1's or JACK2's).
    public static let shared = JackLibrary(soname: JackLibrary.headerSoname)

    /// The soname Debian's development package links.
    public static let headerSoname = FERMATA_JACK_SONAME

    private let library: DynamicLibraries<fermata_jack_functions>

    /// The library loaded from `soname` (any name or path `dlopen` takes) on first use.
    ///
    /// - Parameter reportFailure: Told once why the library cannot be loaded (stderr by default).
    public init(soname: String, reportFailure: (@Sendable (String) -> Void)? = nil) {
        self.library = DynamicLibraries(
            names: [soname], what: soname, prefix: "jack: output unavailable: ",
            fill: { table, handles in fermata_jack_resolve(table, handles[0]) },
            configure: { api in api.jack_set_error_function(jackErrorCallback) }, reportFailure: reportFailure)
    }

    /// Whether the library is loaded now.
    public var isLoaded: Bool { self.library.isLoaded }
    /// How many enabled outputs use it now.
    public var users: Int { self.library.users }

    fileprivate func acquire() throws(DynamicLibraryError) -> fermata_jack_functions { try self.library.acquire() }

    fileprivate func release() { self.library.release() }
}

/// Where libjack's error messages go (the last jack plugin's logger; libjack has one error function per process).
private let jackErrorLogger = Mutex<Logger>(.discarding)

/// libjack's error function: its messages (a server that cannot be reached, a port that does not exist) to the log.
/// Any of libjack's threads; never per period.
private func jackErrorCallback(_ message: UnsafePointer<CChar>?) {
    guard let message else { return }
    let text = String(cString: message)
    jackErrorLogger.withLock { $0 }.error(text)
}

/// `type "jack"`: plays to a JACK server through one client, as `mpd`'s jack output: the client (its name, the
/// server, no server started unless `autostart`) connects and registers its source ports when the output is
/// enabled; each stream activates it in 32-bit float at the server's rate, one channel per source port used, and
/// connects its ports (to `destination_ports`, else to the physical playback ports); closing deactivates it. Each
/// channel goes through a ring buffer of `ringbuffer_size` bytes that JACK's process callback reads (silence after an
/// underrun, while paused and on unused source ports). A server that goes away fails the next write (`JACK
/// connection shutdown: REASON`); the next stream connects again.
///
/// Beyond `mpd`, which deactivates the client with its ring buffers still full (the end of the last song of the
/// queue is lost), `drain` waits until the process callback has taken everything.
///
/// Used on its output thread, except `interrupt()` (any thread). `@unchecked Sendable`: the client and the shared
/// block are confined to the output thread, except what JACK's threads read of the shared block (see
/// `fermata_jack_shared`: atomics and lock-free ring buffers). Unsafe: libjack's pointers never leave this class.
final class JackOutput: AudioOutput, @unchecked Sendable {
    let plugin = "jack"

    let settings: JackSettings
    private let library: JackLibrary
    private let clock: any PlaybackClock
    private var api: fermata_jack_functions?
    private var client: OpaquePointer?
    /// What the process and shutdown callbacks share with this thread; allocated for the output's lifetime (the
    /// callbacks hold it while a client exists).
    private let shared: UnsafeMutablePointer<fermata_jack_shared>
    private var rate = 0
    private let interrupted = Atomic<Bool>(false)
    private let wakeup = PlayerWakeup()

    init(settings: JackSettings, library: JackLibrary, clock: any PlaybackClock = SystemClock()) {
        self.settings = settings
        self.library = library
        self.clock = clock
        self.shared = .allocate(capacity: 1)
        self.shared.initialize(to: fermata_jack_shared())
    }

    deinit {
        self.disable()
        self.shared.deallocate()
    }

    // MARK: - Enable, disable

    /// Loads libjack (first output) and connects the client.
    ///
    /// - Throws: `Failed to connect to JACK server, status=N`, `Cannot register output port "NAME"`.
    func enable() throws(OutputError) {
        self.disable()
        let api: fermata_jack_functions
        do {
            api = try self.library.acquire()
        } catch {
            throw OutputError("libjack could not be loaded")
        }
        self.api = api
        self.shared.pointee.port_get_buffer = api.jack_port_get_buffer
        self.shared.pointee.read_space = api.jack_ringbuffer_read_space
        self.shared.pointee.read = api.jack_ringbuffer_read
        self.shared.pointee.read_advance = api.jack_ringbuffer_read_advance
        self.shared.pointee.get_write_vector = api.jack_ringbuffer_get_write_vector
        self.shared.pointee.write_advance = api.jack_ringbuffer_write_advance
        self.shared.pointee.source_ports = UInt32(self.settings.sourcePorts.count)
        self.shared.pointee.channels = 0
        do throws(OutputError) {
            try self.connect(api)
        } catch {
            self.api = nil
            self.library.release()
            throw error
        }
    }

    /// Closes the client, frees the ring buffers and releases libjack.
    func disable() {
        guard let api = self.api else { return }
        if self.client != nil { self.disconnect(api) }
        for index in 0..<JackSettings.maximumPorts {
            if let ring = self.ring(index) {
                api.jack_ringbuffer_free(ring)
                self.setRing(index, nil)
            }
        }
        self.shared.pointee.channels = 0
        self.api = nil
        self.library.release()
    }

    /// Opens the client (its callbacks on the shared block) and registers the source ports.
    private func connect(_ api: fermata_jack_functions) throws(OutputError) {
        fermata_jack_clear_shut_down(self.shared)
        var options = JackNullOption.rawValue
        if self.settings.clientName != nil { options |= JackUseExactName.rawValue }
        if self.settings.serverName != nil { options |= JackServerName.rawValue }
        if !self.settings.autostart { options |= JackNoStartServer.rawValue }
        var status = jack_status_t(rawValue: 0)
        let opened = withUnsafePointer(to: api) { table in
            fermata_jack_client_open(
                table, self.settings.effectiveClientName, jack_options_t(rawValue: options), &status,
                self.settings.serverName)
        }
        guard let client = opened else {
            throw OutputError("Failed to connect to JACK server, status=\(Int32(bitPattern: status.rawValue))")
        }
        self.client = client
        _ = api.jack_set_process_callback(client, fermata_jack_process, self.shared)
        api.jack_on_info_shutdown(client, fermata_jack_shutdown, self.shared)
        let flags = UInt(JackPortIsOutput.rawValue | JackPortIsTerminal.rawValue)
        for (index, name) in self.settings.sourcePorts.enumerated() {
            guard let port = api.jack_port_register(client, name, JACK_DEFAULT_AUDIO_TYPE, flags, 0) else {
                self.disconnect(api)
                throw OutputError("Cannot register output port \"\(name)\"")
            }
            fermata_jack_set_port(self.shared, UInt32(index), port)
        }
    }

    private func disconnect(_ api: fermata_jack_functions) {
        guard let client = self.client else { return }
        _ = api.jack_deactivate(client)
        _ = api.jack_client_close(client)
        self.client = nil
        for index in 0..<JackSettings.maximumPorts { fermata_jack_set_port(self.shared, UInt32(index), nil) }
    }

    private var wasShutDown: Bool { fermata_jack_is_shut_down(self.shared) != 0 }

    private func ring(_ index: Int) -> UnsafeMutablePointer<jack_ringbuffer_t>? {
        fermata_jack_ring(self.shared, UInt32(index))
    }

    private func setRing(_ index: Int, _ ring: UnsafeMutablePointer<jack_ringbuffer_t>?) {
        fermata_jack_set_ring(self.shared, UInt32(index), ring)
    }

    // MARK: - Stream

    /// Connects again if the server went away, then activates the client in float at the server's rate and
    /// connects its ports.
    ///
    /// - Throws: `cannot activate client`, `no ports found`, `Not a valid JACK port: NAME`, or a connection's error.
    func open(_ format: AudioFormat) throws(OutputError) -> AudioFormat {
        guard let api = self.api else { throw OutputError("jack output not enabled") }
        fermata_jack_set_paused(self.shared, 0)
        if self.client != nil, self.wasShutDown { self.disconnect(api) }
        if self.client == nil { try self.connect(api) }
        guard let client = self.client else { throw OutputError("jack output not connected") }
        self.rate = Int(api.jack_get_sample_rate(client))
        let output = self.settings.outputFormat(for: format, serverRate: self.rate)
        self.interrupted.store(false, ordering: .relaxed)
        try self.start(api, client, channels: output.channels)
        return output
    }

    /// Makes (first stream) and empties the ring buffers, activates the client and connects its ports. The client is
    /// inactive here, so no process callback reads the shared block.
    private func start(_ api: fermata_jack_functions, _ client: OpaquePointer, channels: Int) throws(OutputError) {
        for index in 0..<self.settings.sourcePorts.count {
            if self.ring(index) == nil {
                guard let ring = api.jack_ringbuffer_create(Int(self.settings.ringbufferSize)) else {
                    throw OutputError("cannot allocate the ring buffer")
                }
                self.setRing(index, ring)
            }
            api.jack_ringbuffer_reset(self.ring(index))
        }
        self.shared.pointee.channels = UInt32(channels)
        if api.jack_activate(client) != 0 {
            self.stop(api)
            throw OutputError("cannot activate client")
        }
        var destinations = self.settings.destinationPorts
        if destinations.isEmpty {
            guard self.settings.autoDestinationPorts else { return }
            guard
                let found = api.jack_get_ports(
                    client, nil, nil, UInt(JackPortIsPhysical.rawValue | JackPortIsInput.rawValue))
            else {
                self.stop(api)
                throw OutputError("no ports found")
            }
            var index = 0
            while index < JackSettings.maximumPorts, let name = found[index] {
                destinations.append(String(cString: name))
                index += 1
            }
            api.jack_free(UnsafeMutableRawPointer(mutating: found))
        }
        for (source, destination) in JackSettings.connections(channels: channels, destinations: destinations) {
            let port = fermata_jack_port(self.shared, UInt32(source))
            if api.jack_connect(client, api.jack_port_name(port), destination) != 0 {
                self.stop(api)
                throw OutputError("Not a valid JACK port: \(destination)")
            }
        }
    }

    /// Deactivates the client, or closes it if the server went away.
    private func stop(_ api: fermata_jack_functions) {
        guard let client = self.client else { return }
        if self.wasShutDown {
            self.disconnect(api)
        } else {
            _ = api.jack_deactivate(client)
        }
    }

    func close() {
        guard let api = self.api else { return }
        self.stop(api)
    }

    /// The error a server that went away leaves.
    private func shutdownError() -> OutputError {
        let reason = withUnsafeBytes(of: self.shared.pointee.reason) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        return OutputError("JACK connection shutdown: \(reason)")
    }

    /// Sleeps a millisecond on the clock (a JACK period lasts a few), unless interrupted.
    private func nap() {
        let deadline = self.clock.now() + 1_000_000
        self.clock.sleep(until: deadline, on: self.wakeup) { self.interrupted.load(ordering: .acquiring) }
    }

    /// Deinterleaves as many frames of `data` as the ring buffers have room for, waiting for room.
    ///
    /// - Returns: bytes consumed; 0 when ``interrupt()`` ended the wait.
    /// - Throws: `JACK connection shutdown: REASON` once the server went away.
    func play(_ data: UnsafeRawBufferPointer) throws(OutputError) -> Int {
        fermata_jack_set_paused(self.shared, 0)
        let channels = Int(self.shared.pointee.channels)
        guard self.client != nil, channels > 0, let base = data.baseAddress else {
            throw OutputError("jack output not open")
        }
        let frameSize = channels * MemoryLayout<Float>.size
        let frames = data.count / frameSize
        while true {
            if self.wasShutDown { throw self.shutdownError() }
            if self.interrupted.exchange(false, ordering: .acquiringAndReleasing) { return 0 }
            let written = fermata_jack_write(self.shared, base.assumingMemoryBound(to: Float.self), frames)
            if written > 0 { return written * frameSize }
            self.nap()
        }
    }

    /// Waits until the process callback has taken everything the ring buffers hold (or the server went away), at
    /// most as long as that takes to play and a second more.
    ///
    /// - Returns: `false` when ``interrupt()`` ended the wait.
    func drain() throws(OutputError) -> Bool {
        guard self.client != nil, self.shared.pointee.channels > 0, self.rate > 0 else { return true }
        let waiting = fermata_jack_readable_frames(self.shared)
        let deadline = self.clock.now() + UInt64(waiting) * 1_000_000_000 / UInt64(self.rate) + 1_000_000_000
        while fermata_jack_readable_frames(self.shared) > 0, !self.wasShutDown, self.clock.now() < deadline {
            if self.interrupted.exchange(false, ordering: .acquiringAndReleasing) { return false }
            self.nap()
        }
        return true
    }

    /// As `mpd`'s: what the ring buffers hold still plays (a new stream empties them).
    func cancel() { self.interrupted.store(false, ordering: .relaxed) }

    var hasPauseMode: Bool { true }
    /// The process callback plays silence (dropping what the ring buffers hold); waits up to a second or until
    /// ``interrupt()``.
    ///
    /// - Returns: `false` once the server went away (the stream is then closed and opened again on resume).
    func pause() -> Bool {
        self.interrupted.store(false, ordering: .relaxed)
        if self.wasShutDown { return false }
        fermata_jack_set_paused(self.shared, 1)
        self.wakeup.wait(unless: { self.interrupted.load(ordering: .relaxed) }, timeoutNanoseconds: 1_000_000_000)
        self.interrupted.store(false, ordering: .relaxed)
        return true
    }

    func interrupt() {
        self.interrupted.store(true, ordering: .releasing)
        self.wakeup.signal()
    }
}

/// The `jack` output plugin, with `mpd`'s keys (see ``JackSettings``). No hardware mixer.
public struct JackOutputPlugin: OutputPlugin {
    public let name = "jack"

    /// As `mpd`'s: jack's default-device test passes whether a JACK server runs or not.
    public func testDefaultDevice() -> DefaultDeviceTest? { .opens }
    private let library: JackLibrary
    private let logger: Logger

    /// Creates the plugin; its outputs load `library` when they are first enabled. libjack's messages and the
    /// configuration's warnings go to `logger`.
    public init(library: JackLibrary = .shared, logger: Logger = .discarding) {
        self.library = library
        self.logger = logger.labelled("jack_output")
        jackErrorLogger.withLock { $0 = self.logger }
    }

    public func makeOutput(_ configuration: OutputConfiguration) throws(OutputError) -> any AudioOutput {
        let settings = try JackSettings(configuration)
        for warning in settings.warnings { self.logger.warning("\(warning) in \"\(configuration.name)\"") }
        return JackOutput(settings: settings, library: self.library)
    }

    public func makeHardwareMixer(
        _ configuration: OutputConfiguration, onChange: @escaping @Sendable () -> Void
    ) throws(OutputError) -> (any Mixer)? { nil }
}
