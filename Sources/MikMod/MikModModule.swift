// SPDX-License-Identifier: GPL-3.0-or-later

import CMikMod
import DynamicLibrary
import Glibc
import Synchronization

/// Why libmikmod could not be set up.
public enum MikModError: Error, Hashable, Sendable, CustomStringConvertible {
    /// libmikmod mixes at 1 to 65535 Hz (its rate is 16-bit).
    case unsupportedSampleRate(Int)
    /// `MikMod_Init` or `MikMod_Reset` failed, with libmikmod's message.
    case setUpFailed(function: String, message: String)

    /// What failed, in words.
    public var description: String {
        switch self {
        case .unsupportedSampleRate(let rate): "libmikmod cannot mix at \(rate) Hz"
        case .setUpFailed(let function, let message): "\(function): \(message)"
        }
    }
}

/// libmikmod, loaded on first use and kept loaded, and its process-wide state, set up as `mpd`'s mikmod plugin
/// sets it up: a driver of libmikmod's own software mixer (`VC_*`) that writes nowhere (the decoder pulls the
/// mixed bytes with `VC_WriteBytes`), every loader, panning separation 64, no reverb, 16-bit stereo
/// interpolated software mixing.
///
/// The `fermata` binary does not link libmikmod: its 55 libraries (SDL2, PulseAudio, sndio…) cost every server
/// ~0.4 MiB of resident memory at start-up, used only by the modules the other tracker plugins refuse. The first
/// `setUp(sampleRate:)` opens it (`dlopen`, Debian's soname), resolves every function and setting the wrapper
/// uses into a table and initialises the mixer (`MikMod_Init`, which `mpd` runs at its plugin's
/// initialisation). It is never closed: libmikmod keeps the registered driver and loaders for the process.
/// When it cannot be loaded or initialised, the reason is reported once, on stderr, and every later
/// `setUp(sampleRate:)` fails the same way (the mikmod plugin then declines every file, as `mpd` disables a
/// decoder plugin whose initialisation fails).
///
/// libmikmod has one mixer and one playing module per process: a `MikModModule` that starts playing stops the
/// one that played before. Loading, starting and releasing modules and changing the rate are serialised here;
/// rendering is not (it runs on the one decoding thread).
public enum MikModLibrary {
    // @unchecked: the table holds C function pointers and pointers to libmikmod's settings, which the importer
    // does not mark Sendable; the settings are only written under the mutex.
    private enum State: @unchecked Sendable {
        case notLoaded
        /// Set up, mixing at `rate`.
        case ready(fermata_mikmod_functions, rate: UInt16)
        /// For good.
        case failed(MikModError)
    }

    private static let state = Mutex<State>(.notLoaded)

    /// The library's file (dlopen's), `libmikmod.so.3`.
    static let soname = FERMATA_MIKMOD_SONAME

    /// Whether a rate is one libmikmod can mix at (1 to 65535 Hz). Any thread; loads nothing.
    public static func canMix(sampleRate: Int) -> Bool {
        guard let rate = UInt16(exactly: sampleRate) else { return false }
        return rate > 0
    }

    /// Loads and sets libmikmod up on first use, mixing at `sampleRate`; a later call with another rate changes
    /// the rate (`MikMod_Reset`) for every module rendered afterwards.
    ///
    /// Any thread; the first call loads the library (milliseconds).
    /// - Throws: `MikModError` when the rate is not one libmikmod can mix at (1 to 65535 Hz) or when libmikmod
    ///   cannot be loaded or initialised (then for good).
    public static func setUp(sampleRate: Int) throws(MikModError) {
        _ = try Self.functions(sampleRate: sampleRate)
    }

    /// The library's table, set up at `sampleRate` (see `setUp(sampleRate:)`).
    static func functions(sampleRate: Int) throws(MikModError) -> fermata_mikmod_functions {
        guard Self.canMix(sampleRate: sampleRate), let rate = UInt16(exactly: sampleRate) else {
            throw .unsupportedSampleRate(sampleRate)
        }
        let (result, report) = Self.state.withLock {
            state -> (Result<fermata_mikmod_functions, MikModError>, String?) in
            switch state {
            case .failed(let error): return (.failure(error), nil)
            case .ready(let mikmod, let current):
                if current == rate { return (.success(mikmod), nil) }
                mikmod.md_mixfreq.pointee = rate
                guard mikmod.MikMod_Reset("") == 0 else {
                    return (.failure(Self.lastError("MikMod_Reset", mikmod)), nil)
                }
                state = .ready(mikmod, rate: rate)
                return (.success(mikmod), nil)
            case .notLoaded:
                switch Self.load(rate: rate) {
                case .success(let mikmod):
                    state = .ready(mikmod, rate: rate)
                    return (.success(mikmod), nil)
                case .failure(let failure):
                    state = .failed(failure.error)
                    return (.failure(failure.error), failure.report)
                }
            }
        }
        if let report, !Self.quiet.load(ordering: .relaxed) { reportOnStandardError(report) }
        return try result.get()
    }

    /// Set: a failure to load or set up is not reported on standard error (`setUpFailure(sampleRate:)`).
    private static let quiet = Atomic(false)

    /// Loads and sets libmikmod up as `setUp(sampleRate:)` does, reporting nothing on standard error: `nil` when it
    /// works, else why not. For a process that only asks (`fermata --plugin-schemes`).
    public static func setUpFailure(sampleRate: Int) -> MikModError? {
        Self.quiet.store(true, ordering: .relaxed)
        defer { Self.quiet.store(false, ordering: .relaxed) }
        do {
            try Self.setUp(sampleRate: sampleRate)
            return nil
        } catch {
            return error
        }
    }

    /// Why `load(rate:)` failed, and the line to report (`nil` when the loader reported it).
    private struct LoadFailure: Error {
        var error: MikModError
        var report: String? = nil
    }

    /// The library, never closed. DynamicLibraries reports a load failure itself.
    private static let library = DynamicLibraries<fermata_mikmod_functions>(
        names: [MikModLibrary.soname], what: MikModLibrary.soname, prefix: "mikmod: decoder plugin unavailable: ",
        fill: { table, handles in fermata_mikmod_resolve(table, handles[0]) },
        reportFailure: { message in
            if !MikModLibrary.quiet.load(ordering: .relaxed) {
                reportOnStandardError("mikmod: decoder plugin unavailable: \(message)")
            }
        })

    /// Opens the library and initialises it as `mpd`'s plugin does (under the lock).
    private static func load(rate: UInt16) -> Result<fermata_mikmod_functions, LoadFailure> {
        let mikmod: fermata_mikmod_functions
        do {
            mikmod = try Self.library.acquire()
        } catch {
            return .failure(LoadFailure(error: .setUpFailed(function: error.function, message: error.message)))
        }
        // Never closed: no use needs to be held.
        Self.library.release()
        mikmod.md_mixfreq.pointee = rate
        mikmod.md_device.pointee = 0
        mikmod.md_reverb.pointee = 0
        mikmod.MikMod_RegisterDriver(Self.driver(mikmod))
        mikmod.MikMod_RegisterAllLoaders()
        mikmod.md_pansep.pointee = 64
        mikmod.md_mode.pointee = UInt16(DMODE_SOFT_MUSIC | DMODE_INTERP | DMODE_STEREO | DMODE_16BITS)
        guard mikmod.MikMod_Init("") == 0 else {
            let error = Self.lastError("MikMod_Init", mikmod)
            guard case .setUpFailed(_, let message) = error else { return .failure(LoadFailure(error: error)) }
            return .failure(LoadFailure(error: error, report: "mikmod: Could not init MikMod: \(message)"))
        }
        return .success(mikmod)
    }

    /// The rate libmikmod mixes at now; `nil` before it is set up. Any thread.
    public static var sampleRate: Int? {
        Self.state.withLock { state in
            if case .ready(_, let rate) = state { return Int(rate) }
            return nil
        }
    }

    /// Runs `body` with the library's table while no other thread loads, starts or releases a module or resets
    /// libmikmod; `nil` when it is not set up.
    static func serialised<T>(_ body: (fermata_mikmod_functions) -> T) -> T? {
        Self.state.withLock { state in
            guard case .ready(let mikmod, _) = state else { return nil }
            return body(mikmod)
        }
    }

    private static func lastError(_ function: String, _ mikmod: fermata_mikmod_functions) -> MikModError {
        let code = mikmod.MikMod_errno.pointee
        let message = mikmod.MikMod_strerror(code).map { String(cString: $0) } ?? "error \(code)"
        return .setUpFailed(function: function, message: message)
    }

    /// The driver `MikMod_Init` picks (the only one registered): libmikmod's software mixer, no device.
    /// Allocated once per load and never freed: libmikmod keeps it in its driver list for the life of the process.
    private static func driver(_ mikmod: fermata_mikmod_functions) -> UnsafeMutablePointer<MDRIVER> {
        let driver = UnsafeMutablePointer<MDRIVER>.allocate(capacity: 1)
        driver.initialize(
            to: MDRIVER(
                next: nil, Name: UnsafePointer(strdup("Fermata")), Version: UnsafePointer(strdup("Fermata mixer")),
                HardVoiceLimit: 0, SoftVoiceLimit: 255, Alias: UnsafePointer(strdup("fermata")), CmdLineHelp: nil,
                CommandLine: nil, IsPresent: { 1 }, SampleLoad: mikmod.VC_SampleLoad,
                SampleUnload: mikmod.VC_SampleUnload, FreeSampleSpace: mikmod.VC_SampleSpace,
                RealSampleLength: mikmod.VC_SampleLength, Init: mikmod.VC_Init, Exit: mikmod.VC_Exit, Reset: nil,
                SetNumVoices: mikmod.VC_SetNumVoices, PlayStart: mikmod.VC_PlayStart, PlayStop: mikmod.VC_PlayStop,
                Update: {}, Pause: nil, VoiceSetVolume: mikmod.VC_VoiceSetVolume,
                VoiceGetVolume: mikmod.VC_VoiceGetVolume, VoiceSetFrequency: mikmod.VC_VoiceSetFrequency,
                VoiceGetFrequency: mikmod.VC_VoiceGetFrequency, VoiceSetPanning: mikmod.VC_VoiceSetPanning,
                VoiceGetPanning: mikmod.VC_VoiceGetPanning, VoicePlay: mikmod.VC_VoicePlay,
                VoiceStop: mikmod.VC_VoiceStop, VoiceStopped: mikmod.VC_VoiceStopped,
                VoiceGetPosition: mikmod.VC_VoiceGetPosition, VoiceRealVolume: mikmod.VC_VoiceRealVolume))
        return driver
    }
}

/// One module loaded by libmikmod (`MODULE`), freed (and stopped, if it plays) when released.
///
/// Set libmikmod up (`MikModLibrary.setUp(sampleRate:)`) first; until then no module loads. Create on any thread; `start()`, `isPlaying`
/// and `render(into:)` belong to the one thread that decodes.
public final class MikModModule {
    /// libmikmod's module; owned, freed in `deinit`.
    private let handle: UnsafeMutablePointer<MODULE>
    /// The library's table (it is never closed).
    private let mikmod: fermata_mikmod_functions

    /// Loads a complete module file from memory as `mpd` loads one (`Player_Load` with 128 channels, not
    /// curious), and sets whether it loops.
    ///
    /// - Returns: `nil` when libmikmod does not recognise the data, is not set up, or the data is larger than
    ///   2 GiB.
    public init?(data: [UInt8], loop: Bool = false) {
        guard !data.isEmpty, data.count <= Int(Int32.max) else { return nil }
        let loaded = MikModLibrary.serialised { mikmod in
            data.withUnsafeBytes { raw in
                mikmod.Player_LoadMem(raw.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(raw.count), 128, 0)
            }.map { (module: $0, mikmod: mikmod) }
        }
        guard let loaded = loaded ?? nil else { return nil }
        loaded.module.pointee.loop = loop ? 1 : 0
        self.handle = loaded.module
        self.mikmod = loaded.mikmod
    }

    deinit {
        let handle = self.handle
        _ = MikModLibrary.serialised { mikmod in mikmod.Player_Free(handle) }
    }

    /// The module's title as libmikmod's loader reads it (`Player_LoadTitleMem`), as raw bytes; `nil` when it
    /// has none. Any thread.
    public static func title(data: [UInt8]) -> [UInt8]? {
        guard !data.isEmpty, data.count <= Int(Int32.max) else { return nil }
        let title = MikModLibrary.serialised { mikmod -> [UInt8]? in
            let title = data.withUnsafeBytes { raw in
                mikmod.Player_LoadTitleMem(raw.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(raw.count))
            }
            guard let title else { return nil }
            defer { mikmod.MikMod_free(title) }
            return Array(UnsafeRawBufferPointer(start: title, count: strlen(title)))
        }
        return title ?? nil
    }

    /// Makes this module the one libmikmod plays, from its start (`Player_Start`). Decoder thread.
    public func start() {
        let handle = self.handle
        _ = MikModLibrary.serialised { mikmod in mikmod.Player_Start(handle) }
    }

    /// Whether this module is the one playing and has not reached its end (`Player_Active`). Takes
    /// libmikmod's own lock; does not allocate. Decoder thread.
    public var isPlaying: Bool {
        self.mikmod.Player_GetModule() == self.handle && self.mikmod.Player_Active() != 0
    }

    /// Mixes the next bytes of interleaved PCM (16-bit stereo at `MikModLibrary.sampleRate`) into `buffer`
    /// (`VC_WriteBytes`).
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: bytes written.
    public func render(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return 0 }
        return Int(self.mikmod.VC_WriteBytes(base.assumingMemoryBound(to: Int8.self), UInt32(clamping: buffer.count)))
    }
}
