// SPDX-License-Identifier: GPL-3.0-or-later

/// Why an audio format text did not parse: `mpd`'s message (such as `Invalid sample rate: 0`).
public struct AudioFormatParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The message.
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    public var description: String { self.message }
}

/// Parsing, as `mpd` 0.23 parses audio formats (`pcm/AudioParser`) for filters, `audio_output_format` and an
/// output's `format`; and applying a mask, as `mpd`'s `AudioFormat::ApplyMask`. Pure; any thread.
extension AudioFormatMask {
    /// Parses `R:B:C` or `dsdN:C`; with `mask` any field may be `*`.
    ///
    /// Numbers are read as `strtoul` reads them (leading white space and a sign are accepted; a negative value
    /// wraps). Sample formats: `8`, `16`, `24` (or `24_3`), `32`, `f`, `dsd`. `dsdN` needs an even N in 32…4096
    /// and means a DSD rate of N × 44100 / 8 bytes per second.
    ///
    /// - Throws: `Failed to parse the sample rate`, `Invalid sample rate: N`, `Sample format missing`,
    ///   `Failed to parse the sample format`, `Invalid sample format: N`, `Channel count missing`,
    ///   `Failed to parse the channel count`, `Invalid channel count: N` or `Extra data after channel count: REST`.
    public static func parse(_ text: String, mask: Bool) throws(AudioFormatParseError) -> AudioFormatMask {
        try self.parse(Array(text.utf8), mask: mask)
    }

    /// `format` with every field this mask gives replaced.
    public func applied(to format: AudioFormat) -> AudioFormat {
        AudioFormat(
            sampleRate: self.sampleRate ?? format.sampleRate, sampleFormat: self.sampleFormat ?? format.sampleFormat,
            channels: self.channels ?? format.channels)
    }

    /// Parses the bytes of a format text; see `parse(_:mask:)`.
    public static func parse(_ text: [UInt8], mask: Bool) throws(AudioFormatParseError) -> AudioFormatMask {
        var index = 0
        if text.starts(with: "dsd".utf8) {
            let (multiple, end) = CNumbers.strtoul(text, from: 3)
            if end > 3, end < text.count, text[end] == UInt8(ascii: ":"), (32...4096).contains(multiple),
                multiple % 2 == 0
            {
                index = end + 1
                let channels = try channelCount(text, &index, mask: mask)
                try expectEnd(text, index)
                return Self(
                    sampleRate: Int(multiple) * 44100 / 8, sampleFormat: .dsd, channels: channels)
            }
        }
        let rate = try sampleRate(text, &index, mask: mask)
        guard index < text.count, text[index] == UInt8(ascii: ":") else {
            throw AudioFormatParseError("Sample format missing")
        }
        index += 1
        let format = try sampleFormat(text, &index, mask: mask)
        guard index < text.count, text[index] == UInt8(ascii: ":") else {
            throw AudioFormatParseError("Channel count missing")
        }
        index += 1
        let channels = try channelCount(text, &index, mask: mask)
        try expectEnd(text, index)
        return Self(sampleRate: rate, sampleFormat: format, channels: channels)
    }

    private static func isStar(_ text: [UInt8], _ index: Int, mask: Bool) -> Bool {
        mask && index < text.count && text[index] == UInt8(ascii: "*")
    }

    private static func sampleRate(_ text: [UInt8], _ index: inout Int, mask: Bool) throws(AudioFormatParseError)
        -> Int?
    {
        if isStar(text, index, mask: mask) {
            index += 1
            return nil
        }
        let (value, end) = CNumbers.strtoul(text, from: index)
        guard end > index else { throw AudioFormatParseError("Failed to parse the sample rate") }
        guard value > 0 && value < 1 << 30 else { throw AudioFormatParseError("Invalid sample rate: \(value)") }
        index = end
        return Int(value)
    }

    private static func sampleFormat(
        _ text: [UInt8], _ index: inout Int, mask: Bool
    ) throws(AudioFormatParseError) -> SampleFormat? {
        if isStar(text, index, mask: mask) {
            index += 1
            return nil
        }
        if index < text.count, text[index] == UInt8(ascii: "f") {
            index += 1
            return .float
        }
        if text[index...].starts(with: "dsd".utf8) {
            index += 3
            return .dsd
        }
        let (value, end) = CNumbers.strtoul(text, from: index)
        guard end > index else { throw AudioFormatParseError("Failed to parse the sample format") }
        index = end
        switch value {
        case 8: return .s8
        case 16: return .s16
        case 24:
            // "24_3" is accepted for backwards compatibility and means the same.
            if text[index...].starts(with: "_3".utf8) { index += 2 }
            return .s24
        case 32: return .s32
        default: throw AudioFormatParseError("Invalid sample format: \(value)")
        }
    }

    private static func channelCount(_ text: [UInt8], _ index: inout Int, mask: Bool) throws(AudioFormatParseError)
        -> Int?
    {
        if isStar(text, index, mask: mask) {
            index += 1
            return nil
        }
        let (value, end) = CNumbers.strtoul(text, from: index)
        guard end > index else { throw AudioFormatParseError("Failed to parse the channel count") }
        // mpd prints the value with `%u`, so only its low 32 bits.
        guard (1...8).contains(value) else {
            throw AudioFormatParseError("Invalid channel count: \(UInt32(truncatingIfNeeded: value))")
        }
        index = end
        return Int(value)
    }

    private static func expectEnd(_ text: [UInt8], _ index: Int) throws(AudioFormatParseError) {
        guard index >= text.count else {
            let rest = String(decoding: text[index...], as: UTF8.self)
            throw AudioFormatParseError("Extra data after channel count: \(rest)")
        }
    }
}
