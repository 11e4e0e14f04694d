// SPDX-License-Identifier: GPL-3.0-or-later

import CModPlug
import DynamicLibrary
import Glibc
import Synchronization

/// libmodplug, loaded on the first module file the modplug plugin reads and kept loaded.
///
/// The `fermata` binary does not link libmodplug: it cost every server ~0.2 MiB of resident memory at start-up,
/// used only by a server that reads a module file. The first `functions()` opens it (`dlopen`, Debian's soname),
/// resolves every function the wrapper calls into a table and sets the mixer's process-wide configuration up as
/// `mpd`'s modplug plugin does (44100 Hz, 16-bit stereo); it is never closed. When it cannot be loaded, the reason
/// is reported once (by default on stderr) and every later `functions()` fails the same way (no module then loads;
/// the server learns it at start-up from a child process, `loadFailure()`, and leaves the plugin out, as `mpd`
/// leaves out a plugin whose initialisation fails).
///
/// Thread-safe: a lock is taken per call (once per module loaded).
public final class ModPlugLibrary: Sendable {
    /// The library's file (dlopen's), `libmodplug.so.1`.
    public static let soname = FERMATA_MODPLUG_SONAME
    /// The library every module uses by default.
    public static let shared = ModPlugLibrary()

    private let library: DynamicLibraries<fermata_modplug_functions>

    /// The library at `soname` (another one in tests), whose load failure `reportFailure` is told once.
    public init(
        soname: String = ModPlugLibrary.soname,
        reportFailure: @escaping @Sendable (String) -> Void = {
            reportOnStandardError("modplug: decoder plugin unavailable: \($0)")
        }
    ) {
        self.library = DynamicLibraries(
            names: [soname], what: soname, prefix: "modplug: ",
            fill: { table, handles in fermata_modplug_resolve(table, handles[0]) },
            configure: { modplug in
                // Under the lock of loads: another instance (a test's) may share the library and its settings.
                ModPlugFile.lock.withLock { _ in
                    var settings = ModPlug_Settings()
                    modplug.ModPlug_GetSettings(&settings)
                    settings.mResamplingMode = Int32(MODPLUG_RESAMPLE_FIR.rawValue)
                    settings.mChannels = 2
                    settings.mBits = 16
                    settings.mFrequency = Int32(ModPlugFile.sampleRate)
                    settings.mLoopCount = 0
                    modplug.ModPlug_SetSettings(&settings)
                }
            }, reportFailure: reportFailure)
    }

    /// Whether the library is loaded now.
    public var isLoaded: Bool { self.library.isLoaded }

    /// Loads the library: `nil` when it works, else why not (`dlopen: …`, `dlsym: … not found in …`).
    public func loadFailure() -> String? {
        do {
            _ = try self.library.permanentFunctions()
            return nil
        } catch {
            return error.description
        }
    }

    /// The library's functions, loading it on first use; `nil` when it cannot be loaded.
    func functions() -> fermata_modplug_functions? {
        try? self.library.permanentFunctions()
    }
}

/// One module loaded by libmodplug (`ModPlugFile`); unloaded when released.
///
/// libmodplug keeps its mixer settings in process-wide state, which `ModPlug_Load` copies into its mixer's
/// static configuration: every module is loaded with the configuration `mpd`'s modplug plugin uses (44100 Hz,
/// 16-bit stereo, and its `resampling_mode` and `loop_count`, set before each load), and loads and unloads
/// are serialised by a lock. Rendering (`read(into:)`, `seek(milliseconds:)`) takes no lock: use one module per
/// thread, and render one module at a time (libmodplug mixes in static buffers).
public final class ModPlugFile {
    /// libmodplug's resampling modes, named as `mpd`'s `resampling_mode` names them.
    public enum Resampling: String, Sendable, Hashable, CaseIterable {
        /// No interpolation.
        case nearest
        /// Linear interpolation.
        case linear
        /// Cubic spline interpolation.
        case spline
        /// The 8-tap FIR filter (`mpd`'s default).
        case fir

        var mode: Int32 {
            switch self {
            case .nearest: Int32(MODPLUG_RESAMPLE_NEAREST.rawValue)
            case .linear: Int32(MODPLUG_RESAMPLE_LINEAR.rawValue)
            case .spline: Int32(MODPLUG_RESAMPLE_SPLINE.rawValue)
            case .fir: Int32(MODPLUG_RESAMPLE_FIR.rawValue)
            }
        }
    }

    /// The mixer settings a module is loaded with (the rest is fixed: 44100 Hz, 16-bit stereo).
    public struct Settings: Sendable, Hashable {
        /// The resampling mode. Default: FIR.
        public var resampling: Resampling
        /// How many times the song is repeated after its first play; -1: forever. Default: 0.
        public var loopCount: Int

        /// Settings; the defaults are `mpd`'s.
        public init(resampling: Resampling = .fir, loopCount: Int = 0) {
            self.resampling = resampling
            self.loopCount = loopCount
        }
    }

    /// The output rate.
    public static let sampleRate = 44100
    private let file: OpaquePointer
    /// The library's table (it is never closed).
    private let modplug: fermata_modplug_functions

    /// Serialises `ModPlug_Load`, `ModPlug_Unload` and the library's set-up (global settings).
    fileprivate static let lock = Mutex(())

    /// Loads a complete module file from memory with `settings` (libmodplug copies them at load time).
    ///
    /// - Parameter library: The libmodplug to use (loaded now if it is not).
    /// - Returns: `nil` when libmodplug cannot be loaded or does not recognise the data (or it is larger than
    ///   2 GiB).
    public init?(data: [UInt8], settings: Settings = Settings(), library: ModPlugLibrary = .shared) {
        guard !data.isEmpty, data.count <= Int(Int32.max), let modplug = library.functions() else { return nil }
        let loaded = Self.lock.withLock { _ in
            var current = ModPlug_Settings()
            modplug.ModPlug_GetSettings(&current)
            current.mResamplingMode = settings.resampling.mode
            current.mLoopCount = Int32(clamping: settings.loopCount)
            modplug.ModPlug_SetSettings(&current)
            return data.withUnsafeBytes { raw in modplug.ModPlug_Load(raw.baseAddress, Int32(raw.count)) }
        }
        guard let loaded else { return nil }
        self.file = loaded
        self.modplug = modplug
    }

    deinit {
        let file = self.file
        let modplug = self.modplug
        Self.lock.withLock { _ in modplug.ModPlug_Unload(file) }
    }

    /// The module's name, as raw bytes (empty when it has none).
    public var name: [UInt8] {
        guard let name = self.modplug.ModPlug_GetName(self.file) else { return [] }
        return Array(UnsafeRawBufferPointer(start: name, count: strlen(name)))
    }

    /// The song's length in milliseconds.
    public var lengthMilliseconds: Int { Int(self.modplug.ModPlug_GetLength(self.file)) }

    /// Renders interleaved 16-bit stereo into `buffer`.
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: bytes written; 0 at the end of the song.
    public func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        max(0, Int(self.modplug.ModPlug_Read(self.file, buffer.baseAddress, Int32(clamping: buffer.count))))
    }

    /// Moves to `milliseconds` into the song.
    ///
    /// Does not allocate. Decoder thread.
    public func seek(milliseconds: Int) {
        self.modplug.ModPlug_Seek(self.file, Int32(clamping: milliseconds))
    }
}
