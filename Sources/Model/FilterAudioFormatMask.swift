// SPDX-License-Identifier: GPL-3.0-or-later

/// An audio format with optional fields, as in `(AudioFormat =~ '*:24:*')`; `nil` fields match anything.
public struct AudioFormatMask: Sendable, Hashable, CustomStringConvertible {
    /// Frames per second, or `nil` for any.
    public var sampleRate: Int?
    /// The sample format, or `nil` for any.
    public var sampleFormat: SampleFormat?
    /// The channel count, or `nil` for any.
    public var channels: Int?

    /// Creates a mask.
    public init(sampleRate: Int?, sampleFormat: SampleFormat?, channels: Int?) {
        self.sampleRate = sampleRate
        self.sampleFormat = sampleFormat
        self.channels = channels
    }

    /// A mask matching exactly `format`.
    public init(_ format: AudioFormat) {
        self.init(sampleRate: format.sampleRate, sampleFormat: format.sampleFormat, channels: format.channels)
    }

    /// Whether every field is given (the `==` form).
    public var isFullyDefined: Bool { self.sampleRate != nil && self.sampleFormat != nil && self.channels != nil }

    /// Whether `format` agrees with every given field.
    public func matches(_ format: AudioFormat) -> Bool {
        (self.sampleRate.map { $0 == format.sampleRate } ?? true)
            && (self.sampleFormat.map { $0 == format.sampleFormat } ?? true)
            && (self.channels.map { $0 == format.channels } ?? true)
    }

    /// `mpd`'s text: `44100:24:2`, `dsd64:2`, with `*` for missing fields.
    public var description: String {
        if self.sampleFormat == .dsd, let rate = self.sampleRate, rate > 0, rate % 44100 == 0 {
            return "dsd\(rate * 8 / 44100):\(self.channels.map(String.init) ?? "*")"
        }
        return "\(self.sampleRate.map(String.init) ?? "*"):\(self.sampleFormat?.wireName ?? "*"):"
            + (self.channels.map(String.init) ?? "*")
    }
}
