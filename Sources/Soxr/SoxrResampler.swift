// SPDX-License-Identifier: GPL-3.0-or-later

import CSoxr
import DynamicLibrary

/// Why libsoxr failed: its message.
public struct SoxrError: Error, Sendable, CustomStringConvertible {
    /// libsoxr's error text.
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    public var description: String { self.message }
}

/// libsoxr, loaded on the first resampling with the soxr resampler and kept loaded.
///
/// The `fermata` binary does not link libsoxr: with the OpenMP runtime it needs (libgomp) it cost every server
/// ~0.4 MiB of resident memory at start-up, used only by a server that resamples with it. The first
/// `functions()` opens it (`dlopen`, Debian's soname) and resolves every function the wrapper calls into a table;
/// it is never closed. When it cannot be loaded, the reason is reported once (by default on stderr) and every later
/// `functions()` fails the same way (each stream then fails to open its resampler, as a failing `soxr_create`
/// would).
///
/// Thread-safe: a lock is taken per call (once per stream that opens a resampler).
public final class SoxrLibrary: Sendable {
    /// The library's file (dlopen's), `libsoxr.so.0`.
    public static let soname = FERMATA_SOXR_SONAME
    /// The library every resampler uses by default.
    public static let shared = SoxrLibrary()

    private let library: DynamicLibraries<fermata_soxr_functions>

    /// The library at `soname` (another one in tests), whose load failure `reportFailure` is told once.
    public init(
        soname: String = SoxrLibrary.soname,
        reportFailure: @escaping @Sendable (String) -> Void = { reportOnStandardError("soxr: \($0)") }
    ) {
        self.library = DynamicLibraries(
            names: [soname], what: soname, prefix: "soxr: ",
            fill: { table, handles in fermata_soxr_resolve(table, handles[0]) }, reportFailure: reportFailure)
    }

    /// Whether the library is loaded now.
    public var isLoaded: Bool { self.library.isLoaded }

    /// The library's functions, loading it on first use.
    ///
    /// - Throws: `SoxrError` (`dlopen: …` or `dlsym: … not found in …`) when it cannot be loaded, then every time.
    func functions() throws(SoxrError) -> fermata_soxr_functions {
        do {
            return try self.library.permanentFunctions()
        } catch {
            throw SoxrError(error.description)
        }
    }
}

/// A libsoxr stream resampler for interleaved 32-bit float frames, the resampler `mpd` uses when configured with
/// `samplerate_converter "soxr"` (recipe "high", `SOXR_HQ`, unless told otherwise), single-threaded.
///
/// Confined to one thread (it is not `Sendable`): created when an output opens a stream, then used only on that
/// output's thread. `process` and `flush` do not allocate once the first call has set up the filter.
public final class SoxrResampler {
    /// libsoxr's quality recipes, named as in `mpd`'s `soxr` settings.
    public enum Quality: Sendable, Hashable {
        case quick, low, medium, high, veryHigh
        /// `mpd`'s `quality "custom"`: the high recipe with these settings in its place.
        case custom(CustomRecipe)

        fileprivate var recipe: UInt {
            switch self {
            case .quick: UInt(SOXR_QQ)
            case .low: UInt(SOXR_LQ)
            case .medium: UInt(SOXR_MQ)
            case .high, .custom: UInt(SOXR_HQ)
            case .veryHigh: UInt(SOXR_VHQ)
            }
        }
    }

    /// The settings of a custom recipe, as libsoxr's `soxr_quality_spec_t` and the I/O scale take them.
    public struct CustomRecipe: Sendable, Hashable {
        /// Bits of precision (16 to 32).
        public var precision: Double
        /// 0 (minimum phase) to 100 (maximum), 50 linear.
        public var phaseResponse: Double
        /// The end of the pass band, a fraction of the Nyquist frequency.
        public var passbandEnd: Double
        /// The start of the stop band, a fraction of the Nyquist frequency.
        public var stopbandBegin: Double
        /// The low six quality flags, which replace the high recipe's.
        public var flags: UInt
        /// The factor the output is scaled by.
        public var scale: Double

        /// A recipe.
        public init(
            precision: Double, phaseResponse: Double, passbandEnd: Double, stopbandBegin: Double, flags: UInt,
            scale: Double
        ) {
            self.precision = precision
            self.phaseResponse = phaseResponse
            self.passbandEnd = passbandEnd
            self.stopbandBegin = stopbandBegin
            self.flags = flags
            self.scale = scale
        }
    }

    /// Frames per second in.
    public let inputRate: Int
    /// Frames per second out.
    public let outputRate: Int
    /// Interleaved channels.
    public let channels: Int
    private let handle: soxr_t
    /// The library's table (it is never closed).
    private let soxr: fermata_soxr_functions

    /// Creates a resampler.
    ///
    /// - Parameter library: The libsoxr to use (loaded now if it is not).
    /// - Throws: `SoxrError` when libsoxr cannot be loaded or refuses the rates or channel count.
    public init(
        inputRate: Int, outputRate: Int, channels: Int, quality: Quality = .high, library: SoxrLibrary = .shared
    ) throws(SoxrError) {
        precondition(inputRate > 0 && outputRate > 0 && channels > 0)
        let soxr = try library.functions()
        self.inputRate = inputRate
        self.outputRate = outputRate
        self.channels = channels
        var io = soxr.soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
        var qualitySpec = soxr.soxr_quality_spec(quality.recipe, 0)
        if case .custom(let recipe) = quality {
            qualitySpec.precision = recipe.precision
            qualitySpec.phase_response = recipe.phaseResponse
            qualitySpec.passband_end = recipe.passbandEnd
            qualitySpec.stopband_begin = recipe.stopbandBegin
            qualitySpec.flags = (qualitySpec.flags & 0xFFFF_FFC0) | (recipe.flags & 0x3F)
            io.scale = recipe.scale
        }
        var runtime = soxr.soxr_runtime_spec(1)
        var error: soxr_error_t?
        let handle = soxr.soxr_create(
            Double(inputRate), Double(outputRate), UInt32(channels), &error, &io, &qualitySpec, &runtime)
        guard let handle, error == nil else {
            if let handle { soxr.soxr_delete(handle) }
            throw SoxrError(error.map { String(cString: $0) } ?? "soxr_create failed")
        }
        self.handle = handle
        self.soxr = soxr
    }

    deinit { self.soxr.soxr_delete(self.handle) }

    /// The most frames `process` may return for `frames` frames in (what a caller's output buffer needs).
    public func maxOutputFrames(forInput frames: Int) -> Int {
        (frames * self.outputRate + self.inputRate - 1) / self.inputRate + 64
    }

    /// Resamples `frames` frames from `input` into `output` (room for `capacity` frames). Output that does not
    /// fit stays inside libsoxr and comes out with the next call.
    ///
    /// Does not allocate (after the first call). Owning thread.
    /// - Returns: frames written to `output`.
    /// - Throws: `SoxrError` from `soxr_process`.
    public func process(
        _ input: UnsafePointer<Float>, frames: Int, into output: UnsafeMutablePointer<Float>, capacity: Int
    ) throws(SoxrError) -> Int {
        var consumed = 0
        var produced = 0
        let error = self.soxr.soxr_process(self.handle, input, frames, &consumed, output, capacity, &produced)
        if let error { throw SoxrError(String(cString: error)) }
        return produced
    }

    /// Ends the input: writes what libsoxr still holds (its filter's tail) into `output`. Call again while it
    /// returns `capacity` frames; then `reset` before new input.
    ///
    /// Owning thread.
    /// - Returns: frames written.
    public func flush(into output: UnsafeMutablePointer<Float>, capacity: Int) throws(SoxrError) -> Int {
        var produced = 0
        let error = self.soxr.soxr_process(self.handle, nil, 0, nil, output, capacity, &produced)
        if let error { throw SoxrError(String(cString: error)) }
        return produced
    }

    /// Forgets the signal so far (seek, new stream), keeping the configuration. Owning thread.
    public func reset() {
        _ = self.soxr.soxr_clear(self.handle)
    }
}
