// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Model
import Playback

/// The stream format a pulse output asks the server for, as `mpd`'s pulse output chooses it: float, 32-bit and
/// 24-bit-in-32 samples as they are (native endian), everything else converted to 16-bit first; the rate capped
/// at PulseAudio's highest (384 kHz); the channels as they are. Pure; any thread.
public struct PulseSampleSpec: Sendable, Equatable {
    /// libpulse's sample formats this output uses (`pa_sample_format_t`, little-endian machines).
    public enum Format: Sendable, Equatable {
        /// `PA_SAMPLE_S16NE`.
        case s16
        /// `PA_SAMPLE_S24_32NE`.
        case s24In32
        /// `PA_SAMPLE_S32NE`.
        case s32
        /// `PA_SAMPLE_FLOAT32NE`.
        case float32
    }

    /// PulseAudio's highest rate (`PA_RATE_MAX`).
    public static let maximumRate = 48_000 * 8

    /// The stream's sample format.
    public var format: Format
    /// Frames per second.
    public var rate: Int
    /// Interleaved channels (the channel map is WAVE-EX's order for this many).
    public var channels: Int

    /// A spec.
    public init(format: Format, rate: Int, channels: Int) {
        self.format = format
        self.rate = rate
        self.channels = channels
    }

    /// The spec for a song in `input`, and the format the output thread converts to before writing.
    public static func forInput(_ input: AudioFormat) -> (spec: PulseSampleSpec, output: AudioFormat) {
        var output = input
        let format: Format
        switch input.sampleFormat {
        case .float: format = .float32
        case .s32: format = .s32
        case .s24: format = .s24In32
        case .s16: format = .s16
        case .s8, .dsd:
            output.sampleFormat = .s16
            format = .s16
        }
        output.sampleRate = min(input.sampleRate, Self.maximumRate)
        return (PulseSampleSpec(format: format, rate: output.sampleRate, channels: input.channels), output)
    }
}

/// How `mpd`'s pulse mixer maps its 0…100 volume to the sink input's (`scale_volume`: 100 is `factor` times
/// PulseAudio's 100 %). Pure; any thread.
public struct PulseVolumeScale: Sendable, Equatable {
    /// PulseAudio's 100 % (`PA_VOLUME_NORM`).
    public static let norm: UInt32 = 0x10000

    /// The factor, 0.5…5.0 (default 1).
    public let factor: Float

    /// The sink input volume that 100 stands for.
    public var maximum: UInt32 { UInt32(self.factor * Float(Self.norm)) }

    /// A scale of `factor`.
    public init(factor: Float = 1) { self.factor = factor }

    /// Parses `scale_volume` as `mpd` does (`strtof`, the whole text, 0.5…5.0).
    ///
    /// - Throws: `"TEXT" is not a number in the range 0.5 to 5.0`.
    public init(parsing text: String?) throws(OutputError) {
        guard let text else {
            self.init()
            return
        }
        var end: UnsafeMutablePointer<CChar>?
        let (value, consumedAll, consumedAny) = text.withCString { start -> (Float, Bool, Bool) in
            let value = strtof(start, &end)
            guard let end else { return (value, false, false) }
            return (value, end.pointee == 0, end != UnsafeMutablePointer(mutating: start))
        }
        guard consumedAny, consumedAll, value >= 0.5, value <= 5.0 else {
            throw OutputError("\"\(text)\" is not a number in the range 0.5 to 5.0")
        }
        self.init(factor: value)
    }

    /// The 0…100 volume an average sink input volume reads as (may exceed 100 when another program raised it).
    public func percent(ofAverage average: UInt32) -> Int {
        Int((100 * (UInt64(average) + 1)) / UInt64(max(1, self.maximum)))
    }

    /// The sink input volume for `percent` (rounded to the nearest).
    public func volume(forPercent percent: Int) -> UInt32 {
        UInt32((UInt64(max(0, percent)) * UInt64(self.maximum) + 50) / 100)
    }
}
