// SPDX-License-Identifier: GPL-3.0-or-later

/// A PCM sample format, as `mpd` names them in format strings.
public enum SampleFormat: Sendable, Hashable {
    /// 8-bit signed integer.
    case s8
    /// 16-bit signed integer.
    case s16
    /// 24-bit signed integer in 32-bit words (`mpd`'s `S24_P32`), printed as `24`.
    case s24
    /// 32-bit signed integer.
    case s32
    /// 32-bit float, printed as `f`.
    case float
    /// DSD, printed as `dsd`.
    case dsd

    /// The text in a format string: `16`, `24`, `f`…
    public var wireName: String {
        switch self {
        case .s8: "8"
        case .s16: "16"
        case .s24: "24"
        case .s32: "32"
        case .float: "f"
        case .dsd: "dsd"
        }
    }

    /// Bytes per sample in memory.
    public var bytesPerSample: Int {
        switch self {
        case .s8, .dsd: 1
        case .s16: 2
        case .s24, .s32, .float: 4
        }
    }

    /// A number for the format in compact encodings: 0 to 5, in the order of the cases.
    public var ordinal: UInt8 {
        switch self {
        case .s8: 0
        case .s16: 1
        case .s24: 2
        case .s32: 3
        case .float: 4
        case .dsd: 5
        }
    }

    /// The format ``ordinal`` numbers; `nil` for a number no format has.
    public init?(ordinal: UInt8) {
        switch ordinal {
        case 0: self = .s8
        case 1: self = .s16
        case 2: self = .s24
        case 3: self = .s32
        case 4: self = .float
        case 5: self = .dsd
        default: return nil
        }
    }
}

/// A PCM audio format: sample rate, sample format and channel count.
public struct AudioFormat: Sendable, Hashable, CustomStringConvertible {
    /// Frames per second.
    public var sampleRate: Int
    /// The sample format.
    public var sampleFormat: SampleFormat
    /// Interleaved channels.
    public var channels: Int

    /// Creates a format.
    public init(sampleRate: Int, sampleFormat: SampleFormat, channels: Int) {
        self.sampleRate = sampleRate
        self.sampleFormat = sampleFormat
        self.channels = channels
    }

    /// `mpd`'s text form: `44100:16:2`, `48000:f:1`, `dsd64:2`; DSD of the 48 kHz family as `384000:dsd:2`.
    public var description: String {
        if self.sampleFormat == .dsd, self.sampleRate > 0, self.sampleRate % 44100 == 0 {
            // DSD rates (bits per second / 8) are printed as multiples of 44.1 kHz per bit: dsd64 is 2822400
            // bits/s, `sampleRate` 352800.
            return "dsd\(self.sampleRate * 8 / 44100):\(self.channels)"
        }
        return "\(self.sampleRate):\(self.sampleFormat.wireName):\(self.channels)"
    }

    /// Bytes in one frame (one sample for every channel).
    public var frameSize: Int { self.sampleFormat.bytesPerSample * self.channels }
}
