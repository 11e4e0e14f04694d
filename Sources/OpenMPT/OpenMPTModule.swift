// SPDX-License-Identifier: GPL-3.0-or-later

import COpenMPT
import DynamicLibrary
import Glibc

/// A libopenmpt failure: the function and libopenmpt's message.
public struct OpenMPTError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The libopenmpt function.
    public var function: String
    /// libopenmpt's message (or error code).
    public var message: String

    /// Creates an error.
    public init(function: String, message: String) {
        self.function = function
        self.message = message
    }

    /// `function: message`.
    public var description: String { "\(self.function): \(self.message)" }
}

/// libopenmpt, loaded on the first module file the openmpt plugin reads and kept loaded.
///
/// The `fermata` binary does not link libopenmpt: with libvorbisfile it cost every server ~0.3 MiB of resident
/// memory at start-up, used only by a server that reads a module file. The first `functions()` opens it (`dlopen`,
/// Debian's soname) and resolves every function the wrapper calls into a table; it is never closed. When it cannot
/// be loaded, the reason is reported once (by default on stderr) and every later `functions()` fails the same way
/// (no module then loads; the server learns it at start-up from a child process, `loadFailure()`, and leaves the
/// plugin out, as `mpd` leaves out a plugin whose initialisation fails).
///
/// Thread-safe: a lock is taken per call (once per module loaded).
public final class OpenMPTLibrary: Sendable {
    /// The library's file (dlopen's), `libopenmpt.so.0`.
    public static let soname = FERMATA_OPENMPT_SONAME
    /// The library every module uses by default.
    public static let shared = OpenMPTLibrary()

    private let library: DynamicLibraries<fermata_openmpt_functions>

    /// The library at `soname` (another one in tests), whose load failure `reportFailure` is told once.
    public init(
        soname: String = OpenMPTLibrary.soname,
        reportFailure: @escaping @Sendable (String) -> Void = {
            reportOnStandardError("openmpt: decoder plugin unavailable: \($0)")
        }
    ) {
        self.library = DynamicLibraries(
            names: [soname], what: soname, prefix: "openmpt: ",
            fill: { table, handles in fermata_openmpt_resolve(table, handles[0]) }, reportFailure: reportFailure)
    }

    /// Whether the library is loaded now.
    public var isLoaded: Bool { self.library.isLoaded }

    /// Loads the library: `nil` when it works, else why not.
    public func loadFailure() -> OpenMPTError? {
        do {
            _ = try self.functions()
            return nil
        } catch {
            return error
        }
    }

    /// The library's functions, loading it on first use.
    ///
    /// - Throws: `OpenMPTError` (`dlopen` or `dlsym`) when it cannot be loaded, then every time.
    func functions() throws(OpenMPTError) -> fermata_openmpt_functions {
        do {
            return try self.library.permanentFunctions()
        } catch {
            throw OpenMPTError(function: error.function, message: error.message)
        }
    }
}

/// One loaded tracker module (`openmpt_module`); destroyed when released.
///
/// Thread confinement: create on any thread, then use from one thread at a time. `render(into:sampleRate:)`
/// and `setPosition(seconds:)` do not allocate in Swift.
public final class OpenMPTModule {
    /// `OPENMPT_MODULE_RENDER_*` parameters.
    public enum RenderParameter: Sendable, Hashable {
        /// Master gain in millibel.
        case masterGainMillibel
        /// Stereo separation in percent.
        case stereoSeparationPercent
        /// Interpolation filter taps (0: the module's default).
        case interpolationFilterLength
        /// Volume ramping strength (-1: default).
        case volumeRampingStrength

        var raw: Int32 {
            switch self {
            case .masterGainMillibel: Int32(OPENMPT_MODULE_RENDER_MASTERGAIN_MILLIBEL)
            case .stereoSeparationPercent: Int32(OPENMPT_MODULE_RENDER_STEREOSEPARATION_PERCENT)
            case .interpolationFilterLength: Int32(OPENMPT_MODULE_RENDER_INTERPOLATIONFILTER_LENGTH)
            case .volumeRampingStrength: Int32(OPENMPT_MODULE_RENDER_VOLUMERAMPING_STRENGTH)
            }
        }
    }

    private let module: OpaquePointer
    /// The library's table (it is never closed).
    private let openmpt: fermata_openmpt_functions

    /// Loads a module from a complete file in memory (`openmpt_module_create_from_memory2`), silently.
    ///
    /// - Parameter library: The libopenmpt to use (loaded now if it is not).
    /// - Throws: `OpenMPTError` when libopenmpt cannot be loaded or cannot load the module.
    public init(data: [UInt8], library: OpenMPTLibrary = .shared) throws(OpenMPTError) {
        let openmpt = try library.functions()
        var error: Int32 = 0
        var message: UnsafePointer<CChar>?
        let created = data.withUnsafeBytes { raw in
            openmpt.openmpt_module_create_from_memory2(
                raw.baseAddress, raw.count, openmpt.openmpt_log_func_silent, nil, openmpt.openmpt_error_func_store,
                nil, &error, &message, nil)
        }
        guard let created else {
            var text = "error \(error)"
            if let message {
                text = String(cString: message)
                openmpt.openmpt_free_string(message)
            }
            throw OpenMPTError(function: "openmpt_module_create_from_memory2", message: text)
        }
        if let message { openmpt.openmpt_free_string(message) }
        self.module = created
        self.openmpt = openmpt
    }

    deinit { self.openmpt.openmpt_module_destroy(self.module) }

    /// The song's length in seconds (for the current subsong and repeat count).
    public var durationSeconds: Double { self.openmpt.openmpt_module_get_duration_seconds(self.module) }

    /// A metadata value (`title`, `artist`, `message`, `date`, `tracker`, `type`…), empty when unset.
    public func metadata(_ key: String) -> [UInt8] {
        guard let value = key.withCString({ self.openmpt.openmpt_module_get_metadata(self.module, $0) }) else {
            return []
        }
        defer { self.openmpt.openmpt_free_string(value) }
        return Array(UnsafeRawBufferPointer(start: value, count: strlen(value)))
    }

    /// How often the song repeats (0: play once; -1: forever).
    ///
    /// - Throws: `OpenMPTError` when libopenmpt rejects the value.
    public func setRepeatCount(_ count: Int) throws(OpenMPTError) {
        try Self.check(
            "openmpt_module_set_repeat_count", self.openmpt.openmpt_module_set_repeat_count(self.module, Int32(count)))
    }

    /// Sets a render parameter.
    ///
    /// - Throws: `OpenMPTError` when libopenmpt rejects the value.
    public func setRenderParameter(_ parameter: RenderParameter, _ value: Int) throws(OpenMPTError) {
        try Self.check(
            "openmpt_module_set_render_param",
            self.openmpt.openmpt_module_set_render_param(self.module, parameter.raw, Int32(clamping: value)))
    }

    /// Sets a boolean ctl (`seek.sync_samples`, `render.resampler.emulate_amiga`…).
    ///
    /// - Throws: `OpenMPTError` when libopenmpt does not know the ctl.
    public func setControl(_ name: String, _ value: Bool) throws(OpenMPTError) {
        let result = name.withCString { self.openmpt.openmpt_module_ctl_set_boolean(self.module, $0, value ? 1 : 0) }
        try Self.check("openmpt_module_ctl_set_boolean(\(name))", result)
    }

    /// Sets a text ctl (`render.resampler.emulate_amiga_type`…).
    ///
    /// - Throws: `OpenMPTError` when libopenmpt does not know the ctl.
    public func setControl(_ name: String, _ value: String) throws(OpenMPTError) {
        let result = name.withCString { ctl in
            value.withCString { self.openmpt.openmpt_module_ctl_set_text(self.module, ctl, $0) }
        }
        try Self.check("openmpt_module_ctl_set_text(\(name))", result)
    }

    /// Renders up to `buffer.count / 2` interleaved stereo float frames at `sampleRate` Hz.
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: frames rendered; 0 at the end of the song.
    public func render(into buffer: UnsafeMutableBufferPointer<Float>, sampleRate: Int) -> Int {
        self.openmpt.openmpt_module_read_interleaved_float_stereo(
            self.module, Int32(clamping: sampleRate), buffer.count / 2, buffer.baseAddress)
    }

    /// Moves to `seconds` into the song.
    ///
    /// Decoder thread.
    /// - Returns: the position reached, in seconds.
    @discardableResult
    public func setPosition(seconds: Double) -> Double {
        self.openmpt.openmpt_module_set_position_seconds(self.module, seconds)
    }

    private static func check(_ function: String, _ result: Int32) throws(OpenMPTError) {
        if result == 0 { throw OpenMPTError(function: function, message: "failed") }
    }
}
