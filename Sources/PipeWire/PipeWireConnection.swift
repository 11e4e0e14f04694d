// SPDX-License-Identifier: GPL-3.0-or-later

internal import CPipeWire
import DynamicLibrary
import Glibc
import Model
import Playback
import Synchronization

/// libpipewire, loaded when a pipewire output is first enabled and kept loaded (`pw_init` once per load).
///
/// The `fermata` binary does not link libpipewire: a server without a pipewire output never maps it. When it
/// cannot be loaded, enabling a pipewire output fails, and the reason is reported once, on stderr.
public final class PipeWireLibrary: Sendable {
    /// The process's library: Debian's soname, `libpipewire-0.3.so.0`.
    public static let shared = PipeWireLibrary(soname: PipeWireLibrary.headerSoname)

    /// The soname Debian's development package links.
    public static let headerSoname = FERMATA_PIPEWIRE_SONAME

    private let library: DynamicLibraries<fermata_pipewire_functions>

    /// The library loaded from `soname` (any name or path `dlopen` takes) on first use.
    ///
    /// - Parameter reportFailure: Told once why the library cannot be loaded (stderr by default).
    public init(soname: String, reportFailure: (@Sendable (String) -> Void)? = nil) {
        self.library = DynamicLibraries(
            names: [soname], what: soname, prefix: "pipewire: output unavailable: ",
            fill: { table, handles in fermata_pipewire_resolve(table, handles[0]) },
            configure: { api in api.pw_init(nil, nil) }, reportFailure: reportFailure)
    }

    /// Whether the library is loaded now.
    public var isLoaded: Bool { self.library.isLoaded }
    /// How many enabled outputs use it now.
    public var users: Int { self.library.users }

    fileprivate func acquire() throws(DynamicLibraryError) -> fermata_pipewire_functions {
        try self.library.acquire()
    }

    fileprivate func release() { self.library.release() }
}

/// One pipewire output's libpipewire state: the thread loop while enabled, the stream and its ring buffer while
/// open, and the volume its mixer reads and sets.
///
/// Threads: the output thread drives it; the thread loop's thread runs the stream's events with the loop's lock
/// held (the fields marked "loop lock" are touched only with it held); libpipewire's realtime thread runs
/// `process`, which touches only the ring, the stream and atomics (no lock, no allocation, no log). `gate` keeps
/// the loop alive while the mixer or `interrupt()` uses it.
///
/// `@unchecked Sendable`: see above. Unsafe: libpipewire's pointers never leave this file.
final class PipeWireConnection: @unchecked Sendable {
    /// The functions and the thread loop while the output is enabled.
    ///
    /// `@unchecked Sendable`: a table of C function pointers and libpipewire's thread loop, which is made for use
    /// from any thread under its own lock.
    private struct Loop: @unchecked Sendable {
        var api: fermata_pipewire_functions
        var threadLoop: OpaquePointer
    }

    let settings: PipeWireSettings
    private let library: PipeWireLibrary
    private let logger: Logger?
    private let gate = Mutex<Loop?>(nil)

    /// Output thread (set by `enable`, cleared by `disable`; read by the other threads while a stream exists).
    private var loop: Loop?
    /// Loop lock (set by `open` before the stream connects, cleared by `close` after it is destroyed; read by
    /// `process`).
    private var stream: OpaquePointer?
    private var ring: PipeWireRing?
    private var channels: UInt32 = 0
    /// Loop lock: why the stream failed (its state's error text).
    private var errorMessage: String?
    /// Loop lock: whether the volume set before the stream negotiated is still to be applied.
    private var restoreVolume = false
    /// Output thread: whether the stream was made active (it starts inactive until the ring buffer is full).
    private var active = false
    /// The EnumFormat pod's storage, allocated once.
    private let podBuffer = UnsafeMutableRawPointer.allocate(byteCount: 1024, alignment: 8)

    private let disconnected = Atomic<Bool>(false)
    private let drained = Atomic<Bool>(true)
    private let drainRequested = Atomic<Bool>(false)
    /// Periods `process` filled with silence because the ring buffer was empty (logged at `close`).
    private let underruns = Atomic<Int>(0)
    /// Set by `interrupt()`, consumed by the blocking call it ends.
    let interrupted = Atomic<Bool>(false)
    private let wakeup = PlayerWakeup()

    /// The stream's volume (0…1, `-1` before any is known), as `mpd`'s output keeps it: set by the mixer, read from
    /// the stream's controls; applied to each new stream once it negotiated.
    private let volume = Mutex<Float>(-1)
    /// The mixer's 0…100 reading (100 until the mixer or the stream says otherwise).
    private let mixerPercent = Atomic<Int>(100)
    private let onMixerChange = Mutex<(@Sendable () -> Void)?>(nil)

    init(settings: PipeWireSettings, library: PipeWireLibrary, logger: Logger?) {
        self.settings = settings
        self.library = library
        self.logger = logger
    }

    deinit {
        self.close()
        self.disable()
        self.podBuffer.deallocate()
    }

    // MARK: - Enable, disable

    /// Loads libpipewire (first output) and starts a thread loop named after the output. Output thread.
    func enable() throws(OutputError) {
        self.disable()
        let api: fermata_pipewire_functions
        do {
            api = try self.library.acquire()
        } catch {
            throw OutputError("libpipewire could not be loaded")
        }
        guard let threadLoop = api.pw_thread_loop_new(self.settings.name, nil) else {
            let reason = String(cString: strerror(errno))
            self.library.release()
            throw OutputError("pw_thread_loop_new() failed: \(reason)")
        }
        _ = api.pw_thread_loop_start(threadLoop)
        let loop = Loop(api: api, threadLoop: threadLoop)
        self.loop = loop
        self.gate.withLock { $0 = loop }
    }

    /// Stops the thread loop and releases libpipewire. Output thread.
    func disable() {
        guard let loop = self.loop else { return }
        // Waits for a mixer call under way; later ones find no loop.
        self.gate.withLock { $0 = nil }
        if self.stream != nil { self.close() }
        loop.api.pw_thread_loop_destroy(loop.threadLoop)
        self.loop = nil
        self.library.release()
    }

    /// Runs `body` with the thread loop locked.
    private func locked<T>(_ loop: Loop, _ body: () throws(OutputError) -> T) throws(OutputError) -> T {
        loop.api.pw_thread_loop_lock(loop.threadLoop)
        defer { loop.api.pw_thread_loop_unlock(loop.threadLoop) }
        return try body()
    }

    // MARK: - Stream

    /// Creates the stream (node `mpd.NAME`, `Music Player Daemon`'s music playback, the graph asked for the
    /// song's rate) and connects it inactive, offering `format`; a ring buffer of `ringBytes` feeds it. Output
    /// thread.
    func open(_ format: PipeWireStreamFormat, frameSize: Int, ringBytes: Int) throws(OutputError) {
        guard let loop = self.loop else { throw OutputError("Disconnected from PipeWire") }
        let api = loop.api
        self.disconnected.store(false, ordering: .relaxed)
        self.drained.store(true, ordering: .relaxed)
        self.drainRequested.store(false, ordering: .relaxed)
        self.interrupted.store(false, ordering: .relaxed)
        self.underruns.store(0, ordering: .relaxed)
        self.active = false
        var table = api
        guard let properties = fermata_pipewire_properties_new(&table) else {
            throw OutputError("pw_properties_new() failed")
        }
        var pairs: [(String, String)] = [
            (PW_KEY_MEDIA_TYPE, "Audio"), (PW_KEY_MEDIA_CATEGORY, "Playback"), (PW_KEY_MEDIA_ROLE, "Music"),
            (PW_KEY_APP_NAME, "Music Player Daemon"), (PW_KEY_APP_ICON_NAME, "mpd"),
            (PW_KEY_NODE_NAME, "mpd.\(self.settings.name)"),
        ]
        if let remote = self.settings.remoteProperty { pairs.append((PW_KEY_REMOTE_NAME, remote)) }
        if let target = self.settings.targetName { pairs.append((PW_KEY_TARGET_OBJECT, target)) }
        pairs.append((PW_KEY_NODE_RATE, "1/\(format.rate)"))
        for (key, value) in pairs { _ = api.pw_properties_set(properties, key, value) }

        try self.locked(loop) { () throws(OutputError) in
            self.errorMessage = nil
            self.restoreVolume = true
            let me = Unmanaged.passUnretained(self).toOpaque()
            // pw_stream_new_simple takes the properties, even when it fails.
            guard
                let stream = api.pw_stream_new_simple(
                    api.pw_thread_loop_get_loop(loop.threadLoop), "mpd", properties, streamEvents, me)
            else {
                throw OutputError("pw_stream_new_simple() failed: \(String(cString: strerror(errno)))")
            }
            self.stream = stream
            self.ring = PipeWireRing(capacity: ringBytes, frameSize: frameSize)
            self.channels = UInt32(format.channels)
            let positions = format.positions.map { $0.map(spaPosition) }
            let pod = withOptionalPointer(positions) { pointer in
                fermata_pipewire_raw_format(
                    self.podBuffer, 1024, spaFormat(format.sample).rawValue, UInt32(format.rate),
                    UInt32(format.channels), pointer)
            }
            var parameters: [UnsafePointer<spa_pod>?] = [pod]
            let flags = pw_stream_flags(
                PW_STREAM_FLAG_AUTOCONNECT.rawValue | PW_STREAM_FLAG_INACTIVE.rawValue
                    | PW_STREAM_FLAG_MAP_BUFFERS.rawValue | PW_STREAM_FLAG_RT_PROCESS.rawValue)
            let error = api.pw_stream_connect(
                stream, SPA_DIRECTION_OUTPUT, self.settings.targetID, flags, &parameters, 1)
            if error < 0 {
                self.destroyStream(api)
                throw OutputError("Failed to connect stream: \(String(cString: strerror(-error)))")
            }
        }
    }

    /// Destroys the stream (no `process` runs after). Loop lock.
    private func destroyStream(_ api: fermata_pipewire_functions) {
        guard let stream = self.stream else { return }
        api.pw_stream_destroy(stream)
        self.stream = nil
        self.ring = nil
    }

    /// Destroys the stream and its ring buffer. Output thread.
    func close() {
        guard let loop = self.loop, self.stream != nil else { return }
        try? self.locked(loop) { self.destroyStream(loop.api) }
        let underruns = self.underruns.exchange(0, ordering: .relaxed)
        if underruns > 0 {
            self.logger?.warning(
                "Decoder is too slow; played silence to avoid xrun",
                ["output": self.settings.name, "periods": "\(underruns)"])
        }
    }

    /// `Disconnected from PipeWire`, or the stream's own error. Loop lock.
    private func failure() -> OutputError { OutputError(self.errorMessage ?? "Disconnected from PipeWire") }

    /// Makes the stream active or inactive. Output thread.
    private func setActive(_ loop: Loop, _ active: Bool) {
        guard self.active != active, let stream = self.stream else { return }
        self.active = active
        _ = loop.api.pw_stream_set_active(stream, active)
    }

    /// Copies as much of `data` as the ring buffer has room for, waiting for room; once it is full the stream is
    /// made active (so the graph starts with half a second buffered). Takes no lock but that once. Output thread.
    ///
    /// - Returns: bytes consumed; 0 when ``interrupt()`` ended the wait.
    func play(_ data: UnsafeRawBufferPointer) throws(OutputError) -> Int {
        guard let loop = self.loop, let ring = self.ring else { throw OutputError("Disconnected from PipeWire") }
        while true {
            if self.disconnected.load(ordering: .acquiring) { throw try self.locked(loop) { self.failure() } }
            let taken = ring.push(data)
            if taken > 0 {
                self.drained.store(false, ordering: .relaxed)
                return taken
            }
            if !self.active { try self.locked(loop) { self.setActive(loop, true) } }
            if self.interrupted.exchange(false, ordering: .relaxed) { return 0 }
            self.wakeup.wait(
                unless: {
                    ring.readable < ring.capacity || self.interrupted.load(ordering: .relaxed)
                        || self.disconnected.load(ordering: .relaxed)
                }, timeoutNanoseconds: 500_000_000)
        }
    }

    /// Waits until the graph played everything written: the stream is made active if it was not, and `process`
    /// drains it once the ring buffer is empty. Output thread.
    ///
    /// - Returns: `false` when ``interrupt()`` ended the wait.
    func drain() throws(OutputError) -> Bool {
        guard let loop = self.loop else { return true }
        return try self.locked(loop) { () throws(OutputError) -> Bool in
            if self.drained.load(ordering: .relaxed) { return true }
            self.setActive(loop, true)
            self.drainRequested.store(true, ordering: .releasing)
            defer { self.drainRequested.store(false, ordering: .relaxed) }
            while !self.drained.load(ordering: .acquiring) {
                if self.interrupted.exchange(false, ordering: .relaxed) { return false }
                if self.disconnected.load(ordering: .acquiring) { throw self.failure() }
                loop.api.pw_thread_loop_wait(loop.threadLoop)
            }
            return true
        }
    }

    /// Drops what the ring buffer and libpipewire hold, and makes the stream inactive until the ring buffer is
    /// full again. Output thread.
    func cancel() {
        self.interrupted.store(false, ordering: .relaxed)
        guard let loop = self.loop else { return }
        try? self.locked(loop) {
            guard !self.drained.load(ordering: .relaxed), let stream = self.stream else { return }
            self.ring?.discard()
            _ = loop.api.pw_stream_flush(stream, false)
            self.drained.store(true, ordering: .relaxed)
            self.setActive(loop, false)
        }
    }

    /// Makes the stream inactive, then waits up to a second or until ``interrupt()``. Output thread.
    func pause() -> Bool {
        if self.interrupted.exchange(false, ordering: .relaxed) { return true }
        if let loop = self.loop { try? self.locked(loop) { self.setActive(loop, false) } }
        self.wakeup.wait(unless: { self.interrupted.load(ordering: .relaxed) }, timeoutNanoseconds: 1_000_000_000)
        self.interrupted.store(false, ordering: .relaxed)
        return true
    }

    /// Ends a wait in `play`, `drain` or `pause` soon. Any thread.
    func interrupt() {
        self.interrupted.store(true, ordering: .relaxed)
        self.wakeup.signal()
        self.gate.withLock { loop in
            guard let loop else { return }
            loop.api.pw_thread_loop_lock(loop.threadLoop)
            loop.api.pw_thread_loop_signal(loop.threadLoop, false)
            loop.api.pw_thread_loop_unlock(loop.threadLoop)
        }
    }

    /// Names the stream after the song (`media.name` `ARTIST - TITLE`, `media.artist`, `media.title`), as `mpd`.
    /// Output thread, once per song.
    func sendTag(name: String, artist: String?, title: String?) {
        guard let loop = self.loop else { return }
        var pairs: [(String, String)] = [(PW_KEY_MEDIA_NAME, name)]
        if let artist { pairs.append((PW_KEY_MEDIA_ARTIST, artist)) }
        if let title { pairs.append((PW_KEY_MEDIA_TITLE, title)) }
        let copies = pairs.map { (strdup($0.0), strdup($0.1)) }
        defer {
            for (key, value) in copies {
                free(key)
                free(value)
            }
        }
        var items = copies.map { spa_dict_item(key: $0.0, value: $0.1) }
        try? self.locked(loop) {
            guard let stream = self.stream, !self.disconnected.load(ordering: .relaxed) else { return }
            items.withUnsafeMutableBufferPointer { buffer in
                var dictionary = spa_dict(flags: 0, n_items: UInt32(buffer.count), items: buffer.baseAddress)
                if loop.api.pw_stream_update_properties(stream, &dictionary) < 0 {
                    self.logger?.warning("Error updating properties", ["output": self.settings.name])
                }
            }
        }
    }

    // MARK: - Mixer

    /// Attaches the output's mixer: `onChange` hears of every volume the stream reports (another program's change
    /// included). Event loop thread, before the output starts.
    func attachMixer(onChange: @escaping @Sendable () -> Void) { self.onMixerChange.withLock { $0 = onChange } }

    /// The mixer's volume: the last set or read (100 at first). Any thread; waits for nothing.
    func mixerVolume() -> Int { self.mixerPercent.load(ordering: .relaxed) }

    /// Sets the stream's volume on every channel (kept for the next stream while none has negotiated), without
    /// waiting for the daemon. Any thread.
    ///
    /// - Throws: `pw_stream_set_control() failed`.
    func setMixerVolume(_ percent: Int) throws(OutputError) {
        let fraction = Float(percent) * 0.01
        try self.gate.withLock { loop throws(OutputError) in
            guard let loop else {
                self.volume.withLock { $0 = fraction }
                return
            }
            try self.locked(loop) { () throws(OutputError) in
                if let stream = self.stream, !self.restoreVolume {
                    var table = loop.api
                    let value = PipeWireVolume.channelVolume(forPercent: percent)
                    guard fermata_pipewire_set_channel_volumes(&table, stream, self.channels, value) == 0 else {
                        throw OutputError("pw_stream_set_control() failed")
                    }
                }
                self.volume.withLock { $0 = fraction }
            }
        }
        self.mixerPercent.store(percent, ordering: .relaxed)
    }

    // MARK: - Stream events (thread loop, lock held; `process` on the realtime thread)

    fileprivate func stateChanged(_ state: pw_stream_state, error: UnsafePointer<CChar>?) {
        let now = state == PW_STREAM_STATE_ERROR || state == PW_STREAM_STATE_UNCONNECTED
        let was = self.disconnected.exchange(now, ordering: .acquiringAndReleasing)
        guard now, !was else { return }
        if let error { self.errorMessage = String(cString: error) }
        if let loop = self.loop { loop.api.pw_thread_loop_signal(loop.threadLoop, false) }
        self.wakeup.signal()
    }

    fileprivate func formatChanged() {
        guard self.restoreVolume, let loop = self.loop, let stream = self.stream else { return }
        self.restoreVolume = false
        let volume = self.volume.withLock { $0 }
        guard volume >= 0 else { return }
        var table = loop.api
        if fermata_pipewire_set_channel_volumes(&table, stream, self.channels, volume * volume * volume) != 0 {
            self.logger?.error(
                "Failed to restore volume: pw_stream_set_control() failed", ["output": self.settings.name])
        }
    }

    fileprivate func channelVolumesChanged(_ values: UnsafeBufferPointer<Float>) {
        guard let fraction = PipeWireVolume.fraction(ofChannelVolumes: values) else { return }
        self.volume.withLock { $0 = fraction }
        self.mixerPercent.store(PipeWireVolume.percent(ofFraction: fraction), ordering: .relaxed)
        self.onMixerChange.withLock { $0 }?()
        if let loop = self.loop { loop.api.pw_thread_loop_signal(loop.threadLoop, false) }
    }

    fileprivate func streamDrained() {
        self.drained.store(true, ordering: .releasing)
        if let loop = self.loop { loop.api.pw_thread_loop_signal(loop.threadLoop, false) }
    }

    /// Fills the graph's buffer from the ring buffer (silence when it is empty, unless draining: then asks
    /// libpipewire to drain). Realtime thread: no lock, no allocation, no log.
    fileprivate func process() {
        guard let loop = self.loop, let stream = self.stream, let ring = self.ring,
            let buffer = loop.api.pw_stream_dequeue_buffer(stream)
        else { return }
        guard let spaBuffer = buffer.pointee.buffer, let data = spaBuffer.pointee.datas,
            let destination = data.pointee.data, let chunk = data.pointee.chunk
        else { return }
        let limit = Int(data.pointee.maxsize) / ring.frameSize * ring.frameSize
        var size = ring.pop(into: destination, limit: limit)
        if size == 0 {
            if self.drainRequested.load(ordering: .acquiring) {
                _ = loop.api.pw_stream_flush(stream, true)
                return
            }
            destination.initializeMemory(as: UInt8.self, repeating: 0, count: limit)
            size = limit
            self.underruns.add(1, ordering: .relaxed)
        }
        chunk.pointee.offset = 0
        chunk.pointee.stride = Int32(ring.frameSize)
        chunk.pointee.size = UInt32(size)
        _ = loop.api.pw_stream_queue_buffer(stream, buffer)
        self.wakeup.signal()
    }
}

/// SPA's sample format for `sample`.
private func spaFormat(_ sample: PipeWireStreamFormat.Sample) -> spa_audio_format {
    switch sample {
    case .s8: SPA_AUDIO_FORMAT_S8
    case .s16: SPA_AUDIO_FORMAT_S16
    case .s24In32: SPA_AUDIO_FORMAT_S24_32
    case .s32: SPA_AUDIO_FORMAT_S32
    case .float32: SPA_AUDIO_FORMAT_F32
    }
}

/// SPA's channel position for `position`.
private func spaPosition(_ position: PipeWireStreamFormat.Position) -> UInt32 {
    let channel: spa_audio_channel =
        switch position {
        case .mono: SPA_AUDIO_CHANNEL_MONO
        case .frontLeft: SPA_AUDIO_CHANNEL_FL
        case .frontRight: SPA_AUDIO_CHANNEL_FR
        case .frontCenter: SPA_AUDIO_CHANNEL_FC
        case .lowFrequency: SPA_AUDIO_CHANNEL_LFE
        case .rearLeft: SPA_AUDIO_CHANNEL_RL
        case .rearRight: SPA_AUDIO_CHANNEL_RR
        case .rearCenter: SPA_AUDIO_CHANNEL_RC
        case .sideLeft: SPA_AUDIO_CHANNEL_SL
        case .sideRight: SPA_AUDIO_CHANNEL_SR
        }
    return channel.rawValue
}

/// `body` with a pointer to `values`' elements, or `nil`.
private func withOptionalPointer<R>(_ values: [UInt32]?, _ body: (UnsafePointer<UInt32>?) -> R) -> R {
    guard let values else { return body(nil) }
    return values.withUnsafeBufferPointer { body($0.baseAddress) }
}

private func connection(_ data: UnsafeMutableRawPointer?) -> PipeWireConnection? {
    // Unmanaged: the connection outlives its streams (it destroys them before it goes).
    data.map { Unmanaged<PipeWireConnection>.fromOpaque($0).takeUnretainedValue() }
}

/// The stream's events, shared by every stream (libpipewire keeps the pointer).
nonisolated(unsafe) private let streamEvents: UnsafeMutablePointer<pw_stream_events> = {
    let events = UnsafeMutablePointer<pw_stream_events>.allocate(capacity: 1)
    var value = pw_stream_events()
    value.version = UInt32(PW_VERSION_STREAM_EVENTS)
    value.state_changed = { data, _, state, error in connection(data)?.stateChanged(state, error: error) }
    value.process = { data in connection(data)?.process() }
    value.drained = { data in connection(data)?.streamDrained() }
    value.control_info = { data, id, control in
        guard id == SPA_PROP_channelVolumes.rawValue, let control, control.pointee.n_values >= 1,
            let values = control.pointee.values
        else { return }
        connection(data)?.channelVolumesChanged(
            UnsafeBufferPointer(start: values, count: Int(control.pointee.n_values)))
    }
    value.param_changed = { data, id, parameter in
        guard id == SPA_PARAM_Format.rawValue, parameter != nil else { return }
        connection(data)?.formatChanged()
    }
    events.initialize(to: value)
    return events
}()
