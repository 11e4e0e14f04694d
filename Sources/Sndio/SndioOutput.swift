// SPDX-License-Identifier: GPL-3.0-or-later

import CSndio
import DynamicLibrary
import Model
import Playback
import Synchronization

/// libsndio, loaded when a sndio output is first enabled and kept loaded while one is.
///
/// The `fermata` binary does not link libsndio: only sndio outputs use it. When it cannot be loaded (not installed,
/// a missing function), enabling any sndio output fails, and the reason is reported once, on stderr.
public final class SndioLibrary: Sendable {
    /// The process's library: Debian's soname, `libsndio.so.7`.
    public static let shared = SndioLibrary(soname: SndioLibrary.headerSoname)

    /// The soname Debian's development package links.
    public static let headerSoname = FERMATA_SNDIO_SONAME

    private let library: DynamicLibraries<fermata_sndio_functions>

    /// The library loaded from `soname` (any name or path `dlopen` takes) on first use.
    ///
    /// - Parameter reportFailure: Told once why the library cannot be loaded (stderr by default).
    public init(soname: String, reportFailure: (@Sendable (String) -> Void)? = nil) {
        self.library = DynamicLibraries(
            names: [soname], what: soname, prefix: "sndio: output unavailable: ",
            fill: { table, handles in fermata_sndio_resolve(table, handles[0]) }, reportFailure: reportFailure)
    }

    /// Whether the library is loaded now.
    public var isLoaded: Bool { self.library.isLoaded }
    /// How many enabled outputs use it now.
    public var users: Int { self.library.users }

    fileprivate func acquire() throws(DynamicLibraryError) -> fermata_sndio_functions { try self.library.acquire() }

    fileprivate func release() { self.library.release() }
}

/// libsndio's volume callback: the device's volume, reported while the output thread is in a libsndio call.
private func sndioVolumeCallback(_ context: UnsafeMutableRawPointer?, _ raw: UInt32) {
    guard let context else { return }
    Unmanaged<SndioOutput>.fromOpaque(context).takeUnretainedValue().volume.reported(Int(raw))
}

/// libsndio's move callback: `delta` more frames played, reported while the output thread is in a libsndio call.
private func sndioMoveCallback(_ context: UnsafeMutableRawPointer?, _ delta: Int32) {
    guard let context else { return }
    Unmanaged<SndioOutput>.fromOpaque(context).takeUnretainedValue().moved(Int(delta))
}

/// `type "sndio"`: plays through libsndio (a sndiod server's sub-device, or a raw device), as `mpd`'s sndio output:
/// one blocking play handle per song format, opened on `device` with the format ``SndioRequest`` asks for and
/// refused unless the device settles on it; the output's volume (``SndioVolume``) sent to each new stream. Writes
/// block until the device takes the samples, which paces the output; there is no pause (a pause closes the device,
/// as `mpd`'s). Beyond `mpd`, `drain` waits until the device played everything (`sio_stop`), `cancel` drops what it
/// holds (`sio_flush`), and the delay counts the frames written but not yet reported played.
///
/// Used on its output thread; libsndio calls its callbacks on that thread, inside the output's own calls.
/// `@unchecked Sendable`: the handle and the counters are confined to the output thread; the volume is shared through
/// atomics. Unsafe: the libsndio pointers never leave this class. An enabled output holds one use of its
/// `SndioLibrary`.
final class SndioOutput: AudioOutput, @unchecked Sendable {
    let plugin = "sndio"

    private let settings: SndioSettings
    private let library: SndioLibrary
    let volume: SndioVolume
    private var api: fermata_sndio_functions?
    private var handle: OpaquePointer?
    private var frameSize = 1
    /// Bytes written since the stream started (or was flushed), and frames the device reported played.
    private var writtenBytes = 0
    private var playedFrames = 0

    init(settings: SndioSettings, library: SndioLibrary, volume: SndioVolume) {
        self.settings = settings
        self.library = library
        self.volume = volume
    }

    deinit { self.disable() }

    /// Loads libsndio, if this is the first output enabled.
    ///
    /// - Throws: `OutputError` when it cannot be loaded (the reason reported once by the library).
    func enable() throws(OutputError) {
        guard self.api == nil else { return }
        do {
            self.api = try self.library.acquire()
        } catch {
            throw OutputError("libsndio could not be loaded")
        }
    }

    func disable() {
        guard self.api != nil else { return }
        self.close()
        self.api = nil
        self.library.release()
    }

    /// Opens the device, negotiates the format and starts the stream, with `mpd`'s messages for each failure.
    func open(_ format: AudioFormat) throws(OutputError) -> AudioFormat {
        guard let api = self.api else { throw OutputError("sndio output not enabled") }
        self.close()
        self.volume.trying()
        // mpd's message names the default device whatever `device` says.
        guard let handle = api.sio_open(self.settings.device, UInt32(SIO_PLAY), 0) else {
            throw OutputError("Failed to open default sndio device")
        }
        let request = SndioRequest(format, bufferTime: self.settings.bufferTime)
        var parameters = sio_par()
        api.sio_initpar(&parameters)
        parameters.bits = request.bits
        parameters.rate = request.rate
        parameters.pchan = request.channels
        parameters.sig = 1
        parameters.le = fermata_sndio_le_native
        parameters.appbufsz = request.bufferFrames
        guard api.sio_setpar(handle, &parameters) != 0, api.sio_getpar(handle, &parameters) != 0 else {
            api.sio_close(handle)
            throw OutputError("Failed to set/get audio params")
        }
        guard
            request.accepts(
                bits: parameters.bits, rate: parameters.rate, channels: parameters.pchan, signed: parameters.sig,
                littleEndian: parameters.le, native: fermata_sndio_le_native)
        else {
            api.sio_close(handle)
            throw OutputError("Requested audio params cannot be satisfied")
        }
        // A new stream knows nothing of the volume: send it, then follow the device's reports (none from a raw
        // device, which has no knob).
        if let raw = self.volume.initial { _ = api.sio_setvol(handle, UInt32(raw)) }
        let context = Unmanaged.passUnretained(self).toOpaque()
        let hasKnob = api.sio_onvol(handle, sndioVolumeCallback, context) != 0
        api.sio_onmove(handle, sndioMoveCallback, context)
        guard api.sio_start(handle) != 0 else {
            api.sio_close(handle)
            throw OutputError("Failed to start audio device")
        }
        self.handle = handle
        self.frameSize = request.format.frameSize
        self.writtenBytes = 0
        self.playedFrames = 0
        self.volume.opened(hasKnob: hasKnob)
        return request.format
    }

    func close() {
        guard let api = self.api, let handle = self.handle else { return }
        self.volume.closed()
        if let raw = self.volume.takeRequest() { self.deliver(raw, api, handle) }
        api.sio_close(handle)
        self.handle = nil
    }

    /// Sends a volume set since the last write before the stream closes, so sndiod keeps it for the program's next
    /// stream: libsndio sends a level only with a write, so one silent frame carries it. `mpd`'s level always
    /// reaches sndiod, with the write in progress, which a pause or stop there waits for; lost, sndiod would tell
    /// the next stream its old level, sometimes after that stream sent its own, and the output would show the old
    /// one (the new stream's `sio_setvol` alone does not win that race). All-zero bytes are silence: the stream is
    /// always signed (`SndioRequest.accepts`). Output thread, at a close.
    private func deliver(_ raw: Int, _ api: fermata_sndio_functions, _ handle: OpaquePointer) {
        _ = api.sio_setvol(handle, UInt32(raw))
        let frame = max(1, self.frameSize)
        withUnsafeTemporaryAllocation(byteCount: frame, alignment: 8) { silence in
            silence.initializeMemory(as: UInt8.self, repeating: 0)
            if let base = silence.baseAddress { _ = api.sio_write(handle, base, frame) }
        }
    }

    /// Sends a volume set since the last write, then writes everything (libsndio's blocking write returns short
    /// only at the end of the stream: `sndio write failed`).
    func play(_ data: UnsafeRawBufferPointer) throws(OutputError) -> Int {
        guard let api = self.api, let handle = self.handle, let base = data.baseAddress else {
            throw OutputError("sndio output not open")
        }
        if let raw = self.volume.takeRequest() { _ = api.sio_setvol(handle, UInt32(raw)) }
        var count = api.sio_write(handle, base, data.count)
        while count == 0 {
            guard api.sio_eof(handle) == 0 else { throw OutputError("sndio write failed") }
            count = api.sio_write(handle, base, data.count)
        }
        self.writtenBytes += count
        return count
    }

    fileprivate func moved(_ delta: Int) { self.playedFrames += delta }

    var delayFrames: Int { self.handle == nil ? 0 : max(0, self.writtenBytes / self.frameSize - self.playedFrames) }

    /// Waits until the device played everything written (`sio_stop` drains), then starts the stream again.
    func drain() throws(OutputError) -> Bool {
        guard let api = self.api, let handle = self.handle else { return true }
        _ = api.sio_stop(handle)
        self.writtenBytes = 0
        self.playedFrames = 0
        guard api.sio_start(handle) != 0 else { throw OutputError("Failed to start audio device") }
        return true
    }

    /// Drops what the device holds (`sio_flush`) and starts the stream again.
    func cancel() {
        guard let api = self.api, let handle = self.handle else { return }
        _ = api.sio_flush(handle)
        self.writtenBytes = 0
        self.playedFrames = 0
        _ = api.sio_start(handle)
    }
}

/// `mixer_type "hardware"` on a sndio output (the default): the stream's volume on the device, as `mpd`'s sndio mixer
/// (see ``SndioVolume``). Event loop thread.
final class SndioMixer: Mixer {
    private let state: SndioVolume

    init(volume: SndioVolume, onChange: @escaping @Sendable () -> Void) {
        self.state = volume
        volume.attach(onChange: onChange)
    }

    func open() throws(OutputError) {}
    func close() {}
    func volume() throws(OutputError) -> Int { try self.state.percent() }
    func setVolume(_ volume: Int) throws(OutputError) { self.state.set(percent: volume) }
    var acceptsVolume: Bool { self.state.wasTried }
    /// As `mpd`'s: open only while its output is.
    var isGlobal: Bool { false }
}

/// The `sndio` output plugin, with `mpd`'s keys (``SndioSettings``): makes ``SndioOutput``s and, for `mixer_type
/// "hardware"` (the default), their ``SndioMixer``s.
///
/// libsndio is loaded only when a sndio output is first enabled (``SndioLibrary``). Any thread.
public final class SndioOutputPlugin: OutputPlugin {
    /// `sndio`.
    public let name = "sndio"

    private let library: SndioLibrary
    /// The volumes made, by output name, until their mixer takes them (the mixer shares the output's).
    private let made = Mutex<[String: SndioVolume]>([:])

    /// The plugin; its outputs load `library` when they are first enabled.
    public init(library: SndioLibrary = .shared) { self.library = library }

    /// Whether libsndio's default device (`default`: $AUDIODEVICE, else sndiod's `snd/default`, else the raw
    /// `rsnd/0`) opens for playing now: `mpd` detects a sndio output that way, before any other plugin, when no
    /// output is configured. Loads libsndio for the probe only. Any thread; blocks for the open.
    public func probeDefaultDevice() -> Bool {
        guard let api = try? self.library.acquire() else { return false }
        defer { self.library.release() }
        guard let handle = api.sio_open(fermata_sndio_devany, UInt32(SIO_PLAY), 0) else { return false }
        api.sio_close(handle)
        return true
    }

    /// ``probeDefaultDevice()``, with `mpd`'s error line.
    public func testDefaultDevice() -> DefaultDeviceTest? {
        self.probeDefaultDevice() ? .opens : .fails(errors: ["Error opening default sndio device"])
    }

    /// - Throws: a bad `buffer_time`'s message.
    public func makeOutput(_ configuration: OutputConfiguration) throws(OutputError) -> any AudioOutput {
        let settings = try SndioSettings(configuration)
        let volume = SndioVolume()
        self.made.withLock { $0[configuration.name] = volume }
        return SndioOutput(settings: settings, library: self.library, volume: volume)
    }

    public func makeHardwareMixer(
        _ configuration: OutputConfiguration, onChange: @escaping @Sendable () -> Void
    ) throws(OutputError) -> (any Mixer)? {
        guard let volume = self.made.withLock({ $0.removeValue(forKey: configuration.name) }) else { return nil }
        return SndioMixer(volume: volume, onChange: onChange)
    }
}
