// SPDX-License-Identifier: GPL-3.0-or-later

import CModPlug
import Glibc
import Synchronization

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

    /// Serialises `ModPlug_Load` and `ModPlug_Unload` (global settings); set up on first use.
    private static let lock: Mutex<Void> = {
        var settings = ModPlug_Settings()
        ModPlug_GetSettings(&settings)
        settings.mResamplingMode = Int32(MODPLUG_RESAMPLE_FIR.rawValue)
        settings.mChannels = 2
        settings.mBits = 16
        settings.mFrequency = Int32(ModPlugFile.sampleRate)
        settings.mLoopCount = 0
        ModPlug_SetSettings(&settings)
        return Mutex(())
    }()

    /// Loads a complete module file from memory with `settings` (libmodplug copies them at load time).
    ///
    /// - Returns: `nil` when libmodplug does not recognise the data (or it is larger than 2 GiB).
    public init?(data: [UInt8], settings: Settings = Settings()) {
        guard !data.isEmpty, data.count <= Int(Int32.max) else { return nil }
        let loaded = Self.lock.withLock { _ in
            var current = ModPlug_Settings()
            ModPlug_GetSettings(&current)
            current.mResamplingMode = settings.resampling.mode
            current.mLoopCount = Int32(clamping: settings.loopCount)
            ModPlug_SetSettings(&current)
            return data.withUnsafeBytes { raw in ModPlug_Load(raw.baseAddress, Int32(raw.count)) }
        }
        guard let loaded else { return nil }
        self.file = loaded
    }

    deinit {
        let file = self.file
        Self.lock.withLock { _ in ModPlug_Unload(file) }
    }

    /// The module's name, as raw bytes (empty when it has none).
    public var name: [UInt8] {
        guard let name = ModPlug_GetName(self.file) else { return [] }
        return Array(UnsafeRawBufferPointer(start: name, count: strlen(name)))
    }

    /// The song's length in milliseconds.
    public var lengthMilliseconds: Int { Int(ModPlug_GetLength(self.file)) }

    /// Renders interleaved 16-bit stereo into `buffer`.
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: bytes written; 0 at the end of the song.
    public func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        max(0, Int(ModPlug_Read(self.file, buffer.baseAddress, Int32(clamping: buffer.count))))
    }

    /// Moves to `milliseconds` into the song.
    ///
    /// Does not allocate. Decoder thread.
    public func seek(milliseconds: Int) {
        ModPlug_Seek(self.file, Int32(clamping: milliseconds))
    }
}
