// SPDX-License-Identifier: GPL-3.0-or-later

import CPulse
import DynamicLibrary
import Glibc
import Model
import Playback
import Synchronization

/// libpulse, loaded when a pulse output is first enabled and kept loaded.
///
/// The `fermata` binary does not link libpulse (with its libraries: libsndfile, libdbus, libX11's xcb…): a server
/// without a pulse output never maps it. When it cannot be loaded, enabling a pulse output fails as
/// `pa_threaded_mainloop_new()` failing would, and the reason is reported once, on stderr.
public final class PulseLibrary: Sendable {
    /// The process's library: Debian's soname, `libpulse.so.0`.
    public static let shared = PulseLibrary(soname: PulseLibrary.headerSoname)

    /// The soname Debian's development package links.
    public static let headerSoname = FERMATA_PULSE_SONAME

    private let library: DynamicLibraries<fermata_pulse_functions>

    /// The library loaded from `soname` (any name or path `dlopen` takes) on first use.
    ///
    /// - Parameter reportFailure: Told once why the library cannot be loaded (stderr by default).
    public init(soname: String, reportFailure: (@Sendable (String) -> Void)? = nil) {
        self.library = DynamicLibraries(
            names: [soname], what: soname, prefix: "pulse: output unavailable: ",
            fill: { table, handles in fermata_pulse_resolve(table, handles[0]) }, reportFailure: reportFailure)
    }

    /// Whether the library is loaded now.
    public var isLoaded: Bool { self.library.isLoaded }
    /// How many enabled outputs use it now.
    public var users: Int { self.library.users }

    fileprivate func acquire() throws(DynamicLibraryError) -> fermata_pulse_functions { try self.library.acquire() }

    fileprivate func release() { self.library.release() }
}

/// The client name `mpd` gives its PulseAudio connections (the sink input's `application.name`).
let pulseClientName = "Music Player Daemon"

/// What a `pulse` block sets.
struct PulseSettings: Sendable {
    /// The stream's name (`media.name`): the output's `name`.
    var streamName: String
    /// `server` (libpulse's default server when `nil`).
    var server: String?
    /// `sink` (the server's default sink when `nil`).
    var sink: String?
    /// `media_role` (`music` when `nil`, as `mpd` sets it for every connection).
    var mediaRole: String?
}

/// One pulse output's libpulse state: the threaded main loop, the context, the stream, and what the mixer
/// reads. Everything but `gate` is touched only with the main loop's lock held (libpulse's callbacks run on the
/// main loop's thread with it held); `gate` keeps the loop alive while a mixer or `interrupt()` uses it.
///
/// `@unchecked Sendable`: see above. Unsafe: libpulse's pointers never leave this file.
final class PulseConnection: @unchecked Sendable {
    /// The functions and the main loop while the output is enabled.
    ///
    /// `@unchecked Sendable`: a table of C function pointers and libpulse's main loop, which is made for use from
    /// any thread under its own lock.
    private struct Loop: @unchecked Sendable {
        var api: fermata_pulse_functions
        var mainloop: OpaquePointer
    }

    let settings: PulseSettings
    private let library: PulseLibrary
    private let gate = Mutex<Loop?>(nil)

    // Under the main loop's lock:
    private var loop: Loop?
    private var context: OpaquePointer?
    private var stream: OpaquePointer?
    private var writable = 0
    private var frameSize = 1
    /// Whether the output is open (the mixer answers only then, as `mpd`'s non-global mixers are open only
    /// while their output is).
    private var open = false
    /// The mixer's state: whether it read the sink input's volume, the volume, who hears of changes.
    private var mixer: (scale: PulseVolumeScale, onChange: @Sendable () -> Void)?
    private var online = false
    private var volume = pa_cvolume()

    /// Whether a stream was ever opened (`mpd` enables its pulse outputs, which makes their mixer usable, when
    /// they first play; from then on disabling and enabling the output while stopped leaves the mixer usable).
    private let opened = Atomic<Bool>(false)
    var hasOpened: Bool { self.opened.load(ordering: .relaxed) }

    /// Set by `interrupt()`, consumed by the blocking call it ends.
    let interrupted = Atomic<Bool>(false)
    private let wakeup = PlayerWakeup()

    init(settings: PulseSettings, library: PulseLibrary) {
        self.settings = settings
        self.library = library
    }

    deinit { self.disable() }

    // MARK: - Enable, disable

    /// Loads libpulse (first output), starts the main loop and connects the context (asynchronously: a server
    /// that refuses the socket fails here, one that answers later fails at `open`). Output thread.
    func enable() throws(OutputError) {
        self.disable()
        let api: fermata_pulse_functions
        do {
            api = try self.library.acquire()
        } catch {
            throw OutputError("pa_threaded_mainloop_new() has failed")
        }
        guard let mainloop = api.pa_threaded_mainloop_new() else {
            self.library.release()
            throw OutputError("pa_threaded_mainloop_new() has failed")
        }
        api.pa_threaded_mainloop_lock(mainloop)
        if api.pa_threaded_mainloop_start(mainloop) < 0 {
            api.pa_threaded_mainloop_unlock(mainloop)
            api.pa_threaded_mainloop_free(mainloop)
            self.library.release()
            throw OutputError("pa_threaded_mainloop_start() has failed")
        }
        let loop = Loop(api: api, mainloop: mainloop)
        self.loop = loop
        do throws(OutputError) {
            try self.setUpContext(loop)
        } catch {
            api.pa_threaded_mainloop_unlock(mainloop)
            api.pa_threaded_mainloop_stop(mainloop)
            api.pa_threaded_mainloop_free(mainloop)
            self.loop = nil
            self.library.release()
            throw error
        }
        api.pa_threaded_mainloop_unlock(mainloop)
        self.gate.withLock { $0 = loop }
    }

    /// Stops the main loop, frees the context and releases libpulse. Output thread.
    func disable() {
        guard let loop = self.loop else { return }
        // Waits for a mixer call under way; later ones find no loop.
        self.gate.withLock { $0 = nil }
        loop.api.pa_threaded_mainloop_stop(loop.mainloop)
        if self.stream != nil { self.deleteStream(loop) }
        if self.context != nil { self.deleteContext(loop) }
        loop.api.pa_threaded_mainloop_free(loop.mainloop)
        self.loop = nil
        self.online = false
        self.library.release()
    }

    /// Makes the context (`Music Player Daemon`, the media role) and starts connecting. Lock held.
    private func setUpContext(_ loop: Loop) throws(OutputError) {
        let api = loop.api
        let properties = api.pa_proplist_new()
        // As mpd's connections: its role (the block's, else `music`) and icon.
        _ = api.pa_proplist_sets(properties, PA_PROP_MEDIA_ROLE, self.settings.mediaRole ?? "music")
        _ = api.pa_proplist_sets(properties, PA_PROP_APPLICATION_ICON_NAME, "mpd")
        let context = api.pa_context_new_with_proplist(
            api.pa_threaded_mainloop_get_api(loop.mainloop), pulseClientName, properties)
        api.pa_proplist_free(properties)
        guard let context else { throw OutputError("pa_context_new() has failed") }
        self.context = context
        let me = Unmanaged.passUnretained(self).toOpaque()
        api.pa_context_set_state_callback(context, contextStateCallback, me)
        api.pa_context_set_subscribe_callback(context, subscribeCallback, me)
        if api.pa_context_connect(context, self.settings.server, PA_CONTEXT_NOFLAGS, nil) < 0 {
            let error = self.error(loop, "pa_context_connect() has failed")
            self.deleteContext(loop)
            throw error
        }
    }

    private func deleteContext(_ loop: Loop) {
        guard let context = self.context else { return }
        loop.api.pa_context_set_state_callback(context, nil, nil)
        loop.api.pa_context_set_subscribe_callback(context, nil, nil)
        loop.api.pa_context_disconnect(context)
        loop.api.pa_context_unref(context)
        self.context = nil
    }

    private func deleteStream(_ loop: Loop) {
        guard let stream = self.stream else { return }
        loop.api.pa_stream_set_suspended_callback(stream, nil, nil)
        loop.api.pa_stream_set_state_callback(stream, nil, nil)
        loop.api.pa_stream_set_write_callback(stream, nil, nil)
        _ = loop.api.pa_stream_disconnect(stream)
        loop.api.pa_stream_unref(stream)
        self.stream = nil
    }

    /// `PREFIX: libpulse's text for the context's last error` (allocates: failures only).
    private func error(_ loop: Loop, _ prefix: String) -> OutputError {
        let code = self.context.map { loop.api.pa_context_errno($0) } ?? 0
        let text = loop.api.pa_strerror(code).map { String(cString: $0) } ?? ""
        return OutputError("\(prefix): \(text)")
    }

    /// Runs `body` with the main loop locked. Output thread (the loop exists while enabled).
    private func locked<T>(_ body: (Loop) throws(OutputError) -> T) throws(OutputError) -> T {
        guard let loop = self.loop else { throw OutputError("disconnected") }
        loop.api.pa_threaded_mainloop_lock(loop.mainloop)
        defer { loop.api.pa_threaded_mainloop_unlock(loop.mainloop) }
        return try body(loop)
    }

    // MARK: - Stream

    /// Waits for the context (reconnecting if it was lost), then creates the stream in `spec` with WAVE-EX's
    /// channel map and connects it to the sink (asynchronously: a missing sink fails at the first write).
    func open(_ spec: PulseSampleSpec, frameSize: Int) throws(OutputError) {
        try self.locked { loop throws(OutputError) in
            let api = loop.api
            if let context = self.context {
                let state = api.pa_context_get_state(context)
                if state == PA_CONTEXT_UNCONNECTED || state == PA_CONTEXT_TERMINATED || state == PA_CONTEXT_FAILED {
                    self.deleteContext(loop)
                }
            }
            try self.waitForConnection(loop)
            guard let context = self.context else { throw OutputError("disconnected") }
            var sampleSpec = pa_sample_spec()
            sampleSpec.format =
                switch spec.format {
                case .s16: PA_SAMPLE_S16LE
                case .s24In32: PA_SAMPLE_S24_32LE
                case .s32: PA_SAMPLE_S32LE
                case .float32: PA_SAMPLE_FLOAT32LE
                }
            sampleSpec.rate = UInt32(spec.rate)
            sampleSpec.channels = UInt8(clamping: spec.channels)
            var map = pa_channel_map()
            _ = api.pa_channel_map_init_extend(&map, UInt32(sampleSpec.channels), PA_CHANNEL_MAP_WAVEEX)
            guard let stream = api.pa_stream_new(context, self.settings.streamName, &sampleSpec, &map) else {
                throw self.error(loop, "pa_stream_new() has failed")
            }
            self.stream = stream
            let me = Unmanaged.passUnretained(self).toOpaque()
            api.pa_stream_set_suspended_callback(stream, streamSuspendedCallback, me)
            api.pa_stream_set_state_callback(stream, streamStateCallback, me)
            api.pa_stream_set_write_callback(stream, streamWriteCallback, me)
            if api.pa_stream_connect_playback(stream, self.settings.sink, nil, PA_STREAM_NOFLAGS, nil, nil) < 0 {
                self.deleteStream(loop)
                throw self.error(loop, "pa_stream_connect_playback() has failed")
            }
            self.writable = 0
            self.frameSize = max(1, frameSize)
            self.open = true
            self.opened.store(true, ordering: .relaxed)
            self.interrupted.store(false, ordering: .relaxed)
        }
    }

    /// Frees the stream; a context that is not ready is freed too (the next `open` reconnects).
    func close() {
        try? self.locked { loop in
            self.deleteStream(loop)
            self.open = false
            if let context = self.context, loop.api.pa_context_get_state(context) != PA_CONTEXT_READY {
                self.deleteContext(loop)
            }
        }
    }

    /// Waits until the context is ready, making one first if it was lost. Lock held.
    /// Waits until the context is connected (``PulseOutputPlugin/probeDefaultDevice()``). Enabled; start-up.
    ///
    /// - Throws: when the connection fails (`failed to connect: REASON`).
    func waitUntilConnected() throws(OutputError) {
        try self.locked { loop throws(OutputError) in try self.waitForConnection(loop) }
    }

    private func waitForConnection(_ loop: Loop) throws(OutputError) {
        if self.context == nil { try self.setUpContext(loop) }
        while let context = self.context {
            let state = loop.api.pa_context_get_state(context)
            if state == PA_CONTEXT_READY { return }
            if state == PA_CONTEXT_UNCONNECTED || state == PA_CONTEXT_TERMINATED || state == PA_CONTEXT_FAILED {
                let error = self.error(loop, "failed to connect")
                self.deleteContext(loop)
                throw error
            }
            loop.api.pa_threaded_mainloop_wait(loop.mainloop)
        }
        throw OutputError("disconnected")
    }

    /// Waits until the stream is connected. Lock held.
    ///
    /// - Returns: `false` when interrupted first.
    private func waitForStream(_ loop: Loop, _ stream: OpaquePointer) throws(OutputError) -> Bool {
        while true {
            let state = loop.api.pa_stream_get_state(stream)
            if state == PA_STREAM_READY { return true }
            if state != PA_STREAM_CREATING { throw self.error(loop, "failed to connect the stream") }
            if self.interrupted.exchange(false, ordering: .relaxed) { return false }
            loop.api.pa_threaded_mainloop_wait(loop.mainloop)
        }
    }

    /// Waits for an operation to end and frees it. Lock held.
    ///
    /// - Returns: whether it completed (rather than was cancelled).
    @discardableResult
    private func finish(_ loop: Loop, _ operation: OpaquePointer, interruptible: Bool = false) -> Bool? {
        defer { loop.api.pa_operation_unref(operation) }
        while loop.api.pa_operation_get_state(operation) == PA_OPERATION_RUNNING {
            if interruptible, self.interrupted.exchange(false, ordering: .relaxed) { return nil }
            loop.api.pa_threaded_mainloop_wait(loop.mainloop)
        }
        return loop.api.pa_operation_get_state(operation) == PA_OPERATION_DONE
    }

    /// Corks or uncorks the stream and waits for the server. Lock held.
    private func cork(_ loop: Loop, _ stream: OpaquePointer, _ corked: Bool) throws(OutputError) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        guard let operation = loop.api.pa_stream_cork(stream, corked ? 1 : 0, streamSuccessCallback, me),
            self.finish(loop, operation) == true
        else { throw self.error(loop, "pa_stream_cork() has failed") }
    }

    /// Writes as much of `data` as the server takes now (a whole number of frames), waiting for room; into
    /// libpulse's own buffer (`pa_stream_begin_write`), so nothing is allocated here. Output thread.
    ///
    /// - Returns: bytes consumed; 0 when ``interrupt()`` ended the wait.
    func play(_ data: UnsafeRawBufferPointer) throws(OutputError) -> Int {
        try self.locked { loop throws(OutputError) -> Int in
            let api = loop.api
            guard let stream = self.stream else { throw OutputError("disconnected") }
            guard try self.waitForStream(loop, stream) else { return 0 }
            if api.pa_stream_is_corked(stream) != 0 { try self.cork(loop, stream, false) }
            while self.writable < self.frameSize {
                if api.pa_stream_is_suspended(stream) != 0 { throw OutputError("suspended") }
                if self.interrupted.exchange(false, ordering: .relaxed) { return 0 }
                api.pa_threaded_mainloop_wait(loop.mainloop)
                if api.pa_stream_get_state(stream) != PA_STREAM_READY { throw OutputError("disconnected") }
            }
            var size = min(data.count, self.writable)
            var buffer: UnsafeMutableRawPointer?
            guard api.pa_stream_begin_write(stream, &buffer, &size) >= 0, let buffer else {
                throw self.error(loop, "pa_stream_write() failed")
            }
            size = min(size, data.count, self.writable)
            size -= size % self.frameSize
            guard size > 0 else { throw OutputError("pa_stream_write() failed: buffer too small") }
            buffer.copyMemory(from: data.baseAddress!, byteCount: size)
            self.writable -= size
            guard api.pa_stream_write(stream, buffer, size, nil, 0, PA_SEEK_RELATIVE) >= 0 else {
                throw self.error(loop, "pa_stream_write() failed")
            }
            return size
        }
    }

    /// Waits until the server played everything written (`pa_stream_drain`), unless the stream is not
    /// playing. Output thread.
    ///
    /// - Returns: `false` when ``interrupt()`` ended the wait.
    func drain() throws(OutputError) -> Bool {
        try self.locked { loop throws(OutputError) -> Bool in
            let api = loop.api
            guard let stream = self.stream, api.pa_stream_get_state(stream) == PA_STREAM_READY,
                api.pa_stream_is_suspended(stream) == 0, api.pa_stream_is_corked(stream) == 0
            else { return true }
            let me = Unmanaged.passUnretained(self).toOpaque()
            guard let operation = api.pa_stream_drain(stream, streamSuccessCallback, me) else {
                throw self.error(loop, "pa_stream_drain() failed")
            }
            return self.finish(loop, operation, interruptible: true) != nil
        }
    }

    /// Drops what the server has not played yet (`pa_stream_flush`). Output thread.
    func cancel() {
        self.interrupted.store(false, ordering: .relaxed)
        try? self.locked { loop in
            guard let stream = self.stream, loop.api.pa_stream_get_state(stream) == PA_STREAM_READY else { return }
            let me = Unmanaged.passUnretained(self).toOpaque()
            guard let operation = loop.api.pa_stream_flush(stream, streamSuccessCallback, me) else { return }
            self.finish(loop, operation)
        }
    }

    /// Corks the stream (once connected), then waits up to a second or until ``interrupt()``. Output thread.
    ///
    /// - Returns: `false` when the stream cannot be corked (it failed to connect).
    func pause() -> Bool {
        if self.interrupted.exchange(false, ordering: .relaxed) { return true }
        do throws(OutputError) {
            let connected = try self.locked { loop throws(OutputError) -> Bool in
                guard let stream = self.stream else { return false }
                guard try self.waitForStream(loop, stream) else { return true }
                if loop.api.pa_stream_is_corked(stream) == 0 { try self.cork(loop, stream, true) }
                return true
            }
            if !connected { return false }
        } catch {
            return false
        }
        self.wakeup.wait(
            unless: { self.interrupted.load(ordering: .relaxed) }, timeoutNanoseconds: 1_000_000_000)
        self.interrupted.store(false, ordering: .relaxed)
        return true
    }

    /// Ends a wait in `play`, `drain` or `pause` soon. Any thread.
    func interrupt() {
        self.interrupted.store(true, ordering: .relaxed)
        self.wakeup.signal()
        self.gate.withLock { loop in
            guard let loop else { return }
            loop.api.pa_threaded_mainloop_lock(loop.mainloop)
            loop.api.pa_threaded_mainloop_signal(loop.mainloop, 0)
            loop.api.pa_threaded_mainloop_unlock(loop.mainloop)
        }
    }

    // MARK: - Mixer

    /// Attaches the output's mixer: `scale` maps its volume, `onChange` hears of every volume read from the
    /// server (another program's change included). Event loop thread, before the output starts.
    func attachMixer(scale: PulseVolumeScale, onChange: @escaping @Sendable () -> Void) {
        self.gate.withLock { loop in
            if let loop { loop.api.pa_threaded_mainloop_lock(loop.mainloop) }
            self.mixer = (scale, onChange)
            if let loop { loop.api.pa_threaded_mainloop_unlock(loop.mainloop) }
        }
    }

    /// The mixer's volume: -1 unless the output is open and the sink input's volume was read. Any thread;
    /// waits for no server (the volume is the one last read).
    func mixerVolume() -> Int {
        self.gate.withLock { loop -> Int in
            guard let loop, let mixer = self.mixer else { return -1 }
            loop.api.pa_threaded_mainloop_lock(loop.mainloop)
            defer { loop.api.pa_threaded_mainloop_unlock(loop.mainloop) }
            guard self.open, self.online else { return -1 }
            return mixer.scale.percent(ofAverage: loop.api.pa_cvolume_avg(&self.volume))
        }
    }

    /// Sets the sink input's volume on every channel, without waiting for the server. Nothing while the output
    /// is closed (as `mpd`'s closed mixer). Any thread.
    ///
    /// - Throws: `disconnected` before the stream's volume is known or while it is not connected.
    func setMixerVolume(_ percent: Int) throws(OutputError) {
        try self.gate.withLock { loop throws(OutputError) in
            guard let loop, let mixer = self.mixer else { return }
            let api = loop.api
            api.pa_threaded_mainloop_lock(loop.mainloop)
            defer { api.pa_threaded_mainloop_unlock(loop.mainloop) }
            guard self.open else { return }
            guard self.online else { throw OutputError("disconnected") }
            guard let context = self.context, let stream = self.stream,
                api.pa_stream_get_state(stream) == PA_STREAM_READY
            else { throw OutputError("disconnected") }
            var volume = pa_cvolume()
            _ = api.pa_cvolume_set(&volume, UInt32(self.volume.channels), mixer.scale.volume(forPercent: percent))
            guard
                let operation = api.pa_context_set_sink_input_volume(
                    context, api.pa_stream_get_index(stream), &volume, nil, nil)
            else { throw OutputError("failed to set PulseAudio volume") }
            api.pa_operation_unref(operation)
            self.volume = volume
        }
    }

    // MARK: - Callbacks (main loop thread, lock held)

    fileprivate func contextStateChanged(_ context: OpaquePointer) {
        guard let loop = self.loop else { return }
        let state = loop.api.pa_context_get_state(context)
        if state == PA_CONTEXT_READY {
            if self.mixer != nil,
                let operation = loop.api.pa_context_subscribe(context, PA_SUBSCRIPTION_MASK_SINK_INPUT, nil, nil)
            {
                loop.api.pa_operation_unref(operation)
            }
        } else if state == PA_CONTEXT_TERMINATED || state == PA_CONTEXT_FAILED {
            self.goOffline()
        }
        loop.api.pa_threaded_mainloop_signal(loop.mainloop, 0)
    }

    fileprivate func serverChanged(_ event: pa_subscription_event_type_t, index: UInt32) {
        guard self.mixer != nil, let loop = self.loop, let stream = self.stream,
            loop.api.pa_stream_get_state(stream) == PA_STREAM_READY, index == loop.api.pa_stream_get_index(stream)
        else { return }
        let facility = event.rawValue & PA_SUBSCRIPTION_EVENT_FACILITY_MASK.rawValue
        let type = event.rawValue & PA_SUBSCRIPTION_EVENT_TYPE_MASK.rawValue
        guard facility == PA_SUBSCRIPTION_EVENT_SINK_INPUT.rawValue,
            type == PA_SUBSCRIPTION_EVENT_NEW.rawValue || type == PA_SUBSCRIPTION_EVENT_CHANGE.rawValue
        else { return }
        self.requestVolume(loop, stream)
    }

    /// Asks the server for the sink input's volume (the answer comes to `volumeArrived`).
    private func requestVolume(_ loop: Loop, _ stream: OpaquePointer) {
        guard let context = self.context else { return }
        let me = Unmanaged.passUnretained(self).toOpaque()
        guard
            let operation = loop.api.pa_context_get_sink_input_info(
                context, loop.api.pa_stream_get_index(stream), sinkInputInfoCallback, me)
        else {
            self.goOffline()
            return
        }
        loop.api.pa_operation_unref(operation)
    }

    fileprivate func volumeArrived(_ info: UnsafePointer<pa_sink_input_info>?, end: Int32) {
        guard end == 0, let mixer = self.mixer else { return }
        guard let info else {
            self.goOffline()
            return
        }
        self.online = true
        self.volume = info.pointee.volume
        mixer.onChange()
    }

    private func goOffline() {
        guard self.online else { return }
        self.online = false
        self.mixer?.onChange()
    }

    fileprivate func streamStateChanged(_ stream: OpaquePointer) {
        guard let loop = self.loop else { return }
        let state = loop.api.pa_stream_get_state(stream)
        if state == PA_STREAM_READY {
            if self.mixer != nil { self.requestVolume(loop, stream) }
        } else if state == PA_STREAM_FAILED || state == PA_STREAM_TERMINATED {
            self.goOffline()
        }
        loop.api.pa_threaded_mainloop_signal(loop.mainloop, 0)
    }

    fileprivate func writableChanged(_ bytes: Int) {
        self.writable = bytes
        self.signal()
    }

    fileprivate func signal() {
        guard let loop = self.loop else { return }
        loop.api.pa_threaded_mainloop_signal(loop.mainloop, 0)
    }
}

private func connection(_ userdata: UnsafeMutableRawPointer?) -> PulseConnection? {
    // Unmanaged: the connection outlives its context's and stream's callbacks (it removes them before freeing).
    userdata.map { Unmanaged<PulseConnection>.fromOpaque($0).takeUnretainedValue() }
}

private func contextStateCallback(_ context: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?) {
    guard let context else { return }
    connection(userdata)?.contextStateChanged(context)
}

private func subscribeCallback(
    _ context: OpaquePointer?, _ event: pa_subscription_event_type_t, _ index: UInt32,
    _ userdata: UnsafeMutableRawPointer?
) {
    connection(userdata)?.serverChanged(event, index: index)
}

private func streamStateCallback(_ stream: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?) {
    guard let stream else { return }
    connection(userdata)?.streamStateChanged(stream)
}

private func streamSuspendedCallback(_ stream: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?) {
    connection(userdata)?.signal()
}

private func streamWriteCallback(_ stream: OpaquePointer?, _ bytes: Int, _ userdata: UnsafeMutableRawPointer?) {
    connection(userdata)?.writableChanged(bytes)
}

private func streamSuccessCallback(_ stream: OpaquePointer?, _ success: Int32, _ userdata: UnsafeMutableRawPointer?) {
    connection(userdata)?.signal()
}

private func sinkInputInfoCallback(
    _ context: OpaquePointer?, _ info: UnsafePointer<pa_sink_input_info>?, _ end: Int32,
    _ userdata: UnsafeMutableRawPointer?
) {
    connection(userdata)?.volumeArrived(info, end: end)
}
