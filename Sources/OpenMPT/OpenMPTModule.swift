// SPDX-License-Identifier: GPL-3.0-or-later

import COpenMPT
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

    /// Loads a module from a complete file in memory (`openmpt_module_create_from_memory2`), silently.
    ///
    /// - Throws: `OpenMPTError` when libopenmpt cannot load it.
    public init(data: [UInt8]) throws(OpenMPTError) {
        var error: Int32 = 0
        var message: UnsafePointer<CChar>?
        let created = data.withUnsafeBytes { raw in
            openmpt_module_create_from_memory2(
                raw.baseAddress, raw.count, openmpt_log_func_silent, nil, openmpt_error_func_store, nil, &error,
                &message, nil)
        }
        guard let created else {
            var text = "error \(error)"
            if let message {
                text = String(cString: message)
                openmpt_free_string(message)
            }
            throw OpenMPTError(function: "openmpt_module_create_from_memory2", message: text)
        }
        if let message { openmpt_free_string(message) }
        self.module = created
    }

    deinit { openmpt_module_destroy(self.module) }

    /// The song's length in seconds (for the current subsong and repeat count).
    public var durationSeconds: Double { openmpt_module_get_duration_seconds(self.module) }

    /// A metadata value (`title`, `artist`, `message`, `date`, `tracker`, `type`…), empty when unset.
    public func metadata(_ key: String) -> [UInt8] {
        guard let value = key.withCString({ openmpt_module_get_metadata(self.module, $0) }) else { return [] }
        defer { openmpt_free_string(value) }
        return Array(UnsafeRawBufferPointer(start: value, count: strlen(value)))
    }

    /// How often the song repeats (0: play once; -1: forever).
    ///
    /// - Throws: `OpenMPTError` when libopenmpt rejects the value.
    public func setRepeatCount(_ count: Int) throws(OpenMPTError) {
        try Self.check("openmpt_module_set_repeat_count", openmpt_module_set_repeat_count(self.module, Int32(count)))
    }

    /// Sets a render parameter.
    ///
    /// - Throws: `OpenMPTError` when libopenmpt rejects the value.
    public func setRenderParameter(_ parameter: RenderParameter, _ value: Int) throws(OpenMPTError) {
        try Self.check(
            "openmpt_module_set_render_param",
            openmpt_module_set_render_param(self.module, parameter.raw, Int32(clamping: value)))
    }

    /// Sets a boolean ctl (`seek.sync_samples`, `render.resampler.emulate_amiga`…).
    ///
    /// - Throws: `OpenMPTError` when libopenmpt does not know the ctl.
    public func setControl(_ name: String, _ value: Bool) throws(OpenMPTError) {
        let result = name.withCString { openmpt_module_ctl_set_boolean(self.module, $0, value ? 1 : 0) }
        try Self.check("openmpt_module_ctl_set_boolean(\(name))", result)
    }

    /// Sets a text ctl (`render.resampler.emulate_amiga_type`…).
    ///
    /// - Throws: `OpenMPTError` when libopenmpt does not know the ctl.
    public func setControl(_ name: String, _ value: String) throws(OpenMPTError) {
        let result = name.withCString { ctl in value.withCString { openmpt_module_ctl_set_text(self.module, ctl, $0) } }
        try Self.check("openmpt_module_ctl_set_text(\(name))", result)
    }

    /// Renders up to `buffer.count / 2` interleaved stereo float frames at `sampleRate` Hz.
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: frames rendered; 0 at the end of the song.
    public func render(into buffer: UnsafeMutableBufferPointer<Float>, sampleRate: Int) -> Int {
        openmpt_module_read_interleaved_float_stereo(
            self.module, Int32(clamping: sampleRate), buffer.count / 2, buffer.baseAddress)
    }

    /// Moves to `seconds` into the song.
    ///
    /// Decoder thread.
    /// - Returns: the position reached, in seconds.
    @discardableResult
    public func setPosition(seconds: Double) -> Double {
        openmpt_module_set_position_seconds(self.module, seconds)
    }

    private static func check(_ function: String, _ result: Int32) throws(OpenMPTError) {
        if result == 0 { throw OpenMPTError(function: function, message: "failed") }
    }
}
