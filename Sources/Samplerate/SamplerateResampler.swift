// SPDX-License-Identifier: GPL-3.0-or-later

import CSamplerate

/// Why libsamplerate failed: its message (`src_strerror`).
public struct SamplerateError: Error, Sendable, CustomStringConvertible {
    /// libsamplerate's error text.
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    public var description: String { self.message }
}

/// A libsamplerate converter for interleaved 32-bit float frames, used as `mpd` 0.23.12's `libsamplerate`
/// resampler uses it (Debian's `mpd` resamples with it unless configured otherwise): one `src_process` per chunk
/// with room for the chunk's frames at the new rate rounded up, input the converter leaves unread dropped, and
/// no end-of-input flush (the filter's last few milliseconds of a stream stay inside, as in `mpd`).
///
/// Confined to one thread (it is not `Sendable`): created when an output opens a stream, then used only on that
/// output's thread. `process` does not allocate.
public final class SamplerateResampler {
    /// A converter type, `SRC_SINC_BEST_QUALITY` (0) … `SRC_LINEAR` (4).
    public struct Converter: Sendable, Hashable {
        /// libsamplerate's number for it.
        public let rawValue: Int32

        /// `SRC_SINC_FASTEST`, `mpd`'s default (`type "2"`).
        public static let fastestSinc = Converter(rawValue: 2)
        /// `SRC_ZERO_ORDER_HOLD`: each output frame repeats the input frame at or before it.
        public static let zeroOrderHold = Converter(rawValue: 3)

        private init(rawValue: Int32) { self.rawValue = rawValue }

        /// libsamplerate's name for it (`Fastest Sinc Interpolator`…).
        public var name: String { String(cString: src_get_name(self.rawValue)) }

        /// A `type` setting as `mpd` reads it: empty for the default, a number libsamplerate names, or the
        /// start of a name compared ASCII case-insensitively (`best` is `Best Sinc Interpolator`); `nil` for
        /// anything else (`mpd`: `unknown samplerate converter 'x'`).
        public init?(setting: String) {
            if setting.isEmpty {
                self = .fastestSinc
                return
            }
            if setting.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                let number = Int32(setting), src_get_name(number) != nil
            {
                self.init(rawValue: number)
                return
            }
            let wanted = Array(setting.lowercased().utf8)
            var number: Int32 = 0
            while let name = src_get_name(number) {
                let known = Array(String(cString: name).lowercased().utf8)
                if known.starts(with: wanted) {
                    self.init(rawValue: number)
                    return
                }
                number += 1
            }
            return nil
        }
    }

    /// Frames per second in.
    public let inputRate: Int
    /// Frames per second out.
    public let outputRate: Int
    /// Interleaved channels.
    public let channels: Int
    private let state: OpaquePointer
    private let ratio: Double

    /// Creates a converter.
    ///
    /// - Throws: `SamplerateError` when libsamplerate refuses the converter or channel count (`mpd`'s
    ///   `libsamplerate initialization has failed: …`).
    public init(inputRate: Int, outputRate: Int, channels: Int, converter: Converter = .fastestSinc)
        throws(SamplerateError)
    {
        precondition(inputRate > 0 && outputRate > 0 && channels > 0)
        self.inputRate = inputRate
        self.outputRate = outputRate
        self.channels = channels
        self.ratio = Double(outputRate) / Double(inputRate)
        var error: Int32 = 0
        guard let state = src_new(converter.rawValue, Int32(channels), &error) else {
            throw SamplerateError(
                "libsamplerate initialization has failed: " + String(cString: src_strerror(error)))
        }
        src_set_ratio(state, self.ratio)
        self.state = state
    }

    deinit { src_delete(self.state) }

    /// The frames `process` may return for `frames` frames in: `mpd`'s room, the frames at the new rate
    /// rounded up.
    public func maxOutputFrames(forInput frames: Int) -> Int {
        (frames * self.outputRate + self.inputRate - 1) / self.inputRate
    }

    /// Resamples `frames` frames from `input` into `output` (room for `capacity` frames; it uses at most
    /// `maxOutputFrames(forInput:)` of them, as `mpd` does).
    ///
    /// Does not allocate. Owning thread.
    /// - Returns: frames written to `output`.
    /// - Throws: `SamplerateError` from `src_process` (`libsamplerate has failed: …`).
    public func process(
        _ input: UnsafePointer<Float>, frames: Int, into output: UnsafeMutablePointer<Float>, capacity: Int
    ) throws(SamplerateError) -> Int {
        var data = SRC_DATA()
        data.data_in = input
        data.data_out = output
        data.input_frames = frames
        data.output_frames = min(capacity, self.maxOutputFrames(forInput: frames))
        data.src_ratio = self.ratio
        let result = src_process(self.state, &data)
        if result != 0 {
            throw SamplerateError("libsamplerate has failed: " + String(cString: src_strerror(result)))
        }
        return data.output_frames_gen
    }

    /// Forgets the signal so far (seek, new stream). Owning thread.
    public func reset() {
        _ = src_reset(self.state)
    }
}
