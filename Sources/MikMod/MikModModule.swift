// SPDX-License-Identifier: GPL-3.0-or-later

// preconcurrency: libmikmod's settings are C globals (`md_mixfreq`…), written only under `MikModLibrary`'s lock.
@preconcurrency import CMikMod
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

/// libmikmod's process-wide state, set up as `mpd`'s mikmod plugin sets it up: a driver of libmikmod's own
/// software mixer (`VC_*`) that writes nowhere (the decoder pulls the mixed bytes with `VC_WriteBytes`), every
/// loader, panning separation 64, no reverb, 16-bit stereo interpolated software mixing.
///
/// libmikmod has one mixer and one playing module per process: a `MikModModule` that starts playing stops the
/// one that played before. Loading, starting and releasing modules and changing the rate are serialised here;
/// rendering is not (it runs on the one decoding thread).
public enum MikModLibrary {
    /// The mixing rate libmikmod was set up with; `nil` before the first successful `setUp(sampleRate:)`.
    private static let state = Mutex<UInt16?>(nil)

    /// Sets libmikmod up on first use, mixing at `sampleRate`; a later call with another rate changes the rate
    /// (`MikMod_Reset`) for every module rendered afterwards.
    ///
    /// Any thread.
    /// - Throws: `MikModError` when the rate is not one libmikmod can mix at (1 to 65535 Hz) or when
    ///   libmikmod's initialisation fails.
    public static func setUp(sampleRate: Int) throws(MikModError) {
        guard let rate = UInt16(exactly: sampleRate), rate > 0 else {
            throw .unsupportedSampleRate(sampleRate)
        }
        let failure: MikModError? = Self.state.withLock { current in
            if current == rate { return nil }
            md_mixfreq = rate
            if current != nil {
                guard MikMod_Reset("") == 0 else { return Self.lastError("MikMod_Reset") }
                current = rate
                return nil
            }
            md_device = 0
            md_reverb = 0
            MikMod_RegisterDriver(Self.driver)
            MikMod_RegisterAllLoaders()
            md_pansep = 64
            md_mode = UInt16(DMODE_SOFT_MUSIC | DMODE_INTERP | DMODE_STEREO | DMODE_16BITS)
            guard MikMod_Init("") == 0 else { return Self.lastError("MikMod_Init") }
            current = rate
            return nil
        }
        if let failure { throw failure }
    }

    /// The rate libmikmod mixes at now; `nil` before it is set up. Any thread.
    public static var sampleRate: Int? { Self.state.withLock { $0.map(Int.init) } }

    /// Runs `body` while no other thread loads, starts or releases a module or resets libmikmod.
    static func serialised<T>(_ body: () -> T) -> T {
        Self.state.withLock { _ in body() }
    }

    private static func lastError(_ function: String) -> MikModError {
        let message = MikMod_strerror(MikMod_errno).map { String(cString: $0) } ?? "error \(MikMod_errno)"
        return .setUpFailed(function: function, message: message)
    }

    /// The driver `MikMod_Init` picks (the only one registered): libmikmod's software mixer, no device.
    /// Allocated once and never freed: libmikmod keeps it in its driver list for the life of the process.
    /// nonisolated(unsafe): only `setUp(sampleRate:)` passes it on, under the lock; nothing writes it after that.
    nonisolated(unsafe) private static let driver: UnsafeMutablePointer<MDRIVER> = {
        let driver = UnsafeMutablePointer<MDRIVER>.allocate(capacity: 1)
        driver.initialize(
            to: MDRIVER(
                next: nil, Name: UnsafePointer(strdup("Fermata")), Version: UnsafePointer(strdup("Fermata mixer")),
                HardVoiceLimit: 0, SoftVoiceLimit: 255, Alias: UnsafePointer(strdup("fermata")), CmdLineHelp: nil,
                CommandLine: nil, IsPresent: { 1 }, SampleLoad: VC_SampleLoad, SampleUnload: VC_SampleUnload,
                FreeSampleSpace: VC_SampleSpace, RealSampleLength: VC_SampleLength, Init: VC_Init, Exit: VC_Exit,
                Reset: nil, SetNumVoices: VC_SetNumVoices, PlayStart: VC_PlayStart, PlayStop: VC_PlayStop,
                Update: {}, Pause: nil, VoiceSetVolume: VC_VoiceSetVolume, VoiceGetVolume: VC_VoiceGetVolume,
                VoiceSetFrequency: VC_VoiceSetFrequency, VoiceGetFrequency: VC_VoiceGetFrequency,
                VoiceSetPanning: VC_VoiceSetPanning, VoiceGetPanning: VC_VoiceGetPanning, VoicePlay: VC_VoicePlay,
                VoiceStop: VC_VoiceStop, VoiceStopped: VC_VoiceStopped, VoiceGetPosition: VC_VoiceGetPosition,
                VoiceRealVolume: VC_VoiceRealVolume))
        return driver
    }()
}

/// One module loaded by libmikmod (`MODULE`), freed (and stopped, if it plays) when released.
///
/// Set libmikmod up (`MikModLibrary.setUp(sampleRate:)`) first. Create on any thread; `start()`, `isPlaying`
/// and `render(into:)` belong to the one thread that decodes.
public final class MikModModule {
    /// libmikmod's module; owned, freed in `deinit`.
    private let handle: UnsafeMutablePointer<MODULE>

    /// Loads a complete module file from memory as `mpd` loads one (`Player_Load` with 128 channels, not
    /// curious), and sets whether it loops.
    ///
    /// - Returns: `nil` when libmikmod does not recognise the data, is not set up, or the data is larger than
    ///   2 GiB.
    public init?(data: [UInt8], loop: Bool = false) {
        guard !data.isEmpty, data.count <= Int(Int32.max), MikModLibrary.sampleRate != nil else { return nil }
        let loaded = MikModLibrary.serialised {
            data.withUnsafeBytes { raw in
                Player_LoadMem(raw.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(raw.count), 128, 0)
            }
        }
        guard let loaded else { return nil }
        loaded.pointee.loop = loop ? 1 : 0
        self.handle = loaded
    }

    deinit {
        let handle = self.handle
        MikModLibrary.serialised { Player_Free(handle) }
    }

    /// The module's title as libmikmod's loader reads it (`Player_LoadTitleMem`), as raw bytes; `nil` when it
    /// has none. Any thread.
    public static func title(data: [UInt8]) -> [UInt8]? {
        guard !data.isEmpty, data.count <= Int(Int32.max), MikModLibrary.sampleRate != nil else { return nil }
        return MikModLibrary.serialised {
            let title = data.withUnsafeBytes { raw in
                Player_LoadTitleMem(raw.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(raw.count))
            }
            guard let title else { return nil }
            defer { MikMod_free(title) }
            return Array(UnsafeRawBufferPointer(start: title, count: strlen(title)))
        }
    }

    /// Makes this module the one libmikmod plays, from its start (`Player_Start`). Decoder thread.
    public func start() {
        let handle = self.handle
        MikModLibrary.serialised { Player_Start(handle) }
    }

    /// Whether this module is the one playing and has not reached its end (`Player_Active`). Takes
    /// libmikmod's own lock; does not allocate. Decoder thread.
    public var isPlaying: Bool { Player_GetModule() == self.handle && Player_Active() != 0 }

    /// Mixes the next bytes of interleaved PCM (16-bit stereo at `MikModLibrary.sampleRate`) into `buffer`
    /// (`VC_WriteBytes`).
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: bytes written.
    public func render(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return 0 }
        return Int(VC_WriteBytes(base.assumingMemoryBound(to: Int8.self), UInt32(clamping: buffer.count)))
    }
}
