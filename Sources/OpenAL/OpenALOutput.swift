// SPDX-License-Identifier: GPL-3.0-or-later

import COpenAL
import DynamicLibrary
import Model
import Playback
import Synchronization

/// libopenal, loaded when an openal output is first enabled and kept loaded.
///
/// The `fermata` binary does not link libopenal (nor the libraries its backends load): only openal outputs use it.
/// When it cannot be loaded (not installed, a missing function), enabling any openal output fails, and the reason
/// is reported once, on stderr.
public final class OpenALLibrary: Sendable {
    /// The process's library: Debian's soname, `libopenal.so.1`.
    public static let shared = OpenALLibrary(soname: OpenALLibrary.headerSoname)

    /// The soname Debian's development package links.
    public static let headerSoname = FERMATA_OPENAL_SONAME

    private let library: DynamicLibraries<fermata_openal_functions>

    /// The library loaded from `soname` (any name or path `dlopen` takes) on first use.
    ///
    /// - Parameter reportFailure: Told once why the library cannot be loaded (stderr by default).
    public init(soname: String, reportFailure: (@Sendable (String) -> Void)? = nil) {
        self.library = DynamicLibraries(
            names: [soname], what: soname, prefix: "openal: output unavailable: ",
            fill: { table, handles in fermata_openal_resolve(table, handles[0]) }, reportFailure: reportFailure)
    }

    /// Whether the library is loaded now.
    public var isLoaded: Bool { self.library.isLoaded }
    /// How many enabled outputs use it now.
    public var users: Int { self.library.users }

    fileprivate func acquire() throws(DynamicLibraryError) -> fermata_openal_functions {
        try self.library.acquire()
    }

    fileprivate func release() { self.library.release() }
}

/// `type "openal"`: plays through an OpenAL device (`device`, or OpenAL's default), as `mpd`'s openal output: one
/// source fed from a ring of 16 buffers, each one piece of at most 4 KiB (`mpd`'s chunk), in 16-bit mono or stereo
/// (every other sample format converted to 16 bits, and any other channel count to mono, as `mpd`). A full ring
/// waits for the device to finish a buffer; `cancel` stops the source and drops the queue; a pause closes the
/// device (as `mpd`'s, which has no pause).
///
/// Beyond `mpd`, which closes the device with up to 16 buffers still queued (the end of the last song of the queue
/// is lost), `drain` waits until the source has played everything.
///
/// Used on its output thread, except `interrupt()`. `@unchecked Sendable`: the OpenAL device, context, source and
/// buffers are confined to the output thread (the context is made current on it); `interrupted` and the wake-up
/// are thread-safe. Unsafe: the OpenAL pointers never leave this class. An enabled output holds one use of its
/// `OpenALLibrary`.
final class OpenALOutput: AudioOutput, @unchecked Sendable {
    let plugin = "openal"

    /// Buffers in the source's queue (`mpd`'s number).
    static let bufferCount = 16
    /// The largest piece one buffer holds (`mpd`'s chunk size).
    static let pieceBytes = 4096

    private let deviceName: String?
    private let library: OpenALLibrary
    private let clock: any PlaybackClock
    private var api: fermata_openal_functions?
    private var device: OpaquePointer?
    private var context: OpaquePointer?
    private var source: ALuint = 0
    private var buffers = [ALuint](repeating: 0, count: OpenALOutput.bufferCount)
    /// How many of `buffers` were queued since the stream opened or was cancelled (all 16 once the ring is full).
    private var filled = 0
    private var format: ALenum = 0
    private var rate: ALsizei = 0
    private var frameSize = 2
    private var pieceFrames = 0
    private let interrupted = Atomic<Bool>(false)
    private let wakeup = PlayerWakeup()

    init(deviceName: String?, library: OpenALLibrary, clock: any PlaybackClock = SystemClock()) {
        self.deviceName = deviceName
        self.library = library
        self.clock = clock
    }

    deinit { self.disable() }

    /// Loads libopenal, if this is the first output enabled.
    ///
    /// - Throws: `OutputError` when it cannot be loaded (the reason reported once by the library).
    func enable() throws(OutputError) {
        guard self.api == nil else { return }
        do {
            self.api = try self.library.acquire()
        } catch {
            throw OutputError("libopenal could not be loaded")
        }
    }

    func disable() {
        guard self.api != nil else { return }
        self.close()
        self.api = nil
        self.library.release()
    }

    /// OpenAL's format for `format`, and the format the output then takes (`mpd`'s choice).
    static func alFormat(for format: AudioFormat) -> (ALenum, AudioFormat) {
        var opened = format
        opened.sampleFormat = .s16
        if opened.channels != 1 && opened.channels != 2 { opened.channels = 1 }
        return (opened.channels == 2 ? AL_FORMAT_STEREO16 : AL_FORMAT_MONO16, opened)
    }

    func open(_ format: AudioFormat) throws(OutputError) -> AudioFormat {
        guard let api = self.api else { throw OutputError("openal output not enabled") }
        self.close()
        let (alFormat, opened) = Self.alFormat(for: format)
        let name = self.deviceName ?? api.alcGetString(nil, ALC_DEFAULT_DEVICE_SPECIFIER).map { String(cString: $0) }
        guard let device = api.alcOpenDevice(name) else {
            throw OutputError("Error opening OpenAL device \"\(name ?? "(null)")\"")
        }
        guard let context = api.alcCreateContext(device, nil) else {
            _ = api.alcCloseDevice(device)
            throw OutputError("Error creating context for \"\(name ?? "(null)")\"")
        }
        _ = api.alcMakeContextCurrent(context)
        _ = api.alGetError()
        self.buffers.withUnsafeMutableBufferPointer { api.alGenBuffers(ALsizei(Self.bufferCount), $0.baseAddress) }
        guard api.alGetError() == AL_NO_ERROR else {
            self.destroy(api, device, context, source: false, buffers: false)
            throw OutputError("Failed to generate buffers")
        }
        api.alGenSources(1, &self.source)
        guard api.alGetError() == AL_NO_ERROR else {
            self.destroy(api, device, context, source: false, buffers: true)
            throw OutputError("Failed to generate source")
        }
        self.device = device
        self.context = context
        self.format = alFormat
        self.rate = ALsizei(opened.sampleRate)
        self.frameSize = opened.frameSize
        self.pieceFrames = Self.pieceBytes / opened.frameSize
        self.filled = 0
        return opened
    }

    private func destroy(
        _ api: fermata_openal_functions, _ device: OpaquePointer, _ context: OpaquePointer, source: Bool,
        buffers: Bool
    ) {
        _ = api.alcMakeContextCurrent(context)
        if source { api.alDeleteSources(1, &self.source) }
        if buffers {
            self.buffers.withUnsafeBufferPointer { api.alDeleteBuffers(ALsizei(Self.bufferCount), $0.baseAddress) }
        }
        _ = api.alcMakeContextCurrent(nil)
        api.alcDestroyContext(context)
        _ = api.alcCloseDevice(device)
    }

    func close() {
        guard let api = self.api, let device = self.device, let context = self.context else { return }
        self.destroy(api, device, context, source: true, buffers: true)
        self.device = nil
        self.context = nil
        self.filled = 0
    }

    private func sourceValue(_ api: fermata_openal_functions, _ parameter: ALenum) -> ALint {
        var value: ALint = 0
        api.alGetSourcei(self.source, parameter, &value)
        return value
    }

    private func makeCurrent(_ api: fermata_openal_functions, _ context: OpaquePointer) {
        if api.alcGetCurrentContext() != context { _ = api.alcMakeContextCurrent(context) }
    }

    /// Sleeps a little on the clock (a buffer lasts milliseconds), unless interrupted.
    private func nap() {
        let deadline = self.clock.now() + 2_000_000
        self.clock.sleep(until: deadline, on: self.wakeup) { self.interrupted.load(ordering: .acquiring) }
    }

    func play(_ data: UnsafeRawBufferPointer) throws(OutputError) -> Int {
        guard let api = self.api, let context = self.context else { throw OutputError("openal output not open") }
        self.makeCurrent(api, context)
        let count = min(data.count, Self.pieceBytes / self.frameSize * self.frameSize)
        var buffer: ALuint
        if self.filled < Self.bufferCount {
            buffer = self.buffers[self.filled]
            self.filled += 1
        } else {
            // Wait for the device to finish a buffer (a few milliseconds at most).
            while self.sourceValue(api, AL_BUFFERS_PROCESSED) <= 0 { self.nap() }
            self.interrupted.store(false, ordering: .releasing)
            buffer = 0
            api.alSourceUnqueueBuffers(self.source, 1, &buffer)
        }
        api.alBufferData(buffer, self.format, data.baseAddress, ALsizei(count), self.rate)
        api.alSourceQueueBuffers(self.source, 1, &buffer)
        if self.sourceValue(api, AL_SOURCE_STATE) != AL_PLAYING { api.alSourcePlay(self.source) }
        return count
    }

    /// The buffers queued and not yet played, a piece each.
    var delayFrames: Int {
        guard let api = self.api, self.context != nil else { return 0 }
        let waiting = self.sourceValue(api, AL_BUFFERS_QUEUED) - self.sourceValue(api, AL_BUFFERS_PROCESSED)
        return max(0, Int(waiting)) * self.pieceFrames
    }

    /// Waits until the source has played every queued buffer, or until interrupted.
    func drain() throws(OutputError) -> Bool {
        guard let api = self.api, let context = self.context else { return true }
        self.makeCurrent(api, context)
        while self.sourceValue(api, AL_SOURCE_STATE) == AL_PLAYING {
            if self.interrupted.exchange(false, ordering: .acquiringAndReleasing) { return false }
            self.nap()
        }
        return true
    }

    func cancel() {
        guard let api = self.api, let context = self.context else { return }
        _ = api.alcMakeContextCurrent(context)
        api.alSourceStop(self.source)
        // Unqueues every buffer.
        api.alSourcei(self.source, AL_BUFFER, 0)
        self.filled = 0
    }

    func interrupt() {
        self.interrupted.store(true, ordering: .releasing)
        self.wakeup.signal()
    }
}

/// The `openal` output plugin, with `mpd`'s key: `device` (an OpenAL device name; OpenAL's default device when
/// absent). No hardware mixer.
public struct OpenALOutputPlugin: OutputPlugin {
    public let name = "openal"
    private let library: OpenALLibrary

    /// Creates the plugin; its outputs load `library` when they are first enabled.
    public init(library: OpenALLibrary = .shared) { self.library = library }

    public func makeOutput(_ configuration: OutputConfiguration) throws(OutputError) -> any AudioOutput {
        OpenALOutput(deviceName: configuration.parameters["device"], library: self.library)
    }

    public func makeHardwareMixer(
        _ configuration: OutputConfiguration, onChange: @escaping @Sendable () -> Void
    ) throws(OutputError) -> (any Mixer)? { nil }
}
