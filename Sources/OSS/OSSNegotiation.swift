// SPDX-License-Identifier: GPL-3.0-or-later

import COSS
import Glibc
import Model
import Playback

/// A setting of a DSP device, set with its own ioctl (`SNDCTL_DSP_CHANNELS`, `SNDCTL_DSP_SPEED`,
/// `SNDCTL_DSP_SETFMT`).
enum OSSSetting: Sendable, Hashable, CaseIterable {
    case channels
    case speed
    case format

    /// `mpd`'s message when the device refuses the setting.
    var failure: String {
        switch self {
        case .channels: "Failed to set channel count"
        case .speed: "Failed to set sample rate"
        case .format: "Failed to set sample format"
        }
    }
}

/// The values a DSP device settled on (the ioctls' values), kept to set them again exactly when the device is
/// reopened after a cancel.
struct OSSParameters: Sendable, Hashable {
    var channels: Int32
    var speed: Int32
    /// An `AFMT_` value.
    var format: Int32
}

/// The OSS sample formats Fermata writes: Linux's header has no native-endian 24- or 32-bit format, so, as `mpd`
/// built for Linux, only signed 8 and 16 bits (everything else is converted by the output thread).
enum OSSSampleFormat {
    /// `AFMT_QUERY`: no OSS counterpart.
    static let query = Int32(fermata_oss_afmt_query)
    static let s8 = Int32(fermata_oss_afmt_s8)
    static let s16 = Int32(fermata_oss_afmt_s16_ne)

    /// The `AFMT_` value of `format`, or ``query`` when it has none.
    static func oss(_ format: SampleFormat) -> Int32 {
        switch format {
        case .s8: Self.s8
        case .s16: Self.s16
        case .s24, .s32, .float, .dsd: Self.query
        }
    }

    /// Fermata's format for an `AFMT_` value, or `nil` for one it does not write.
    static func fermata(_ oss: Int32) -> SampleFormat? {
        switch oss {
        case Self.s8: .s8
        case Self.s16: .s16
        default: nil
        }
    }
}

/// How an OSS output settles a stream's format with its device, as `mpd`'s oss output: channels, then rate, then
/// sample format, each asked as the song has it and, when the device refuses it, the alternatives `mpd` tries (one
/// channel; 48000 then 44100 Hz; 24-in-32, 32, 16, 8 bits, of which only 16 and 8 exist in OSS on Linux). A device
/// may answer another value than the one asked: any valid one is taken. Only `EINVAL` means "not supported"; any
/// other error ends the negotiation with `mpd`'s message and the error's text.
///
/// Pure: the device is the `set` closure given (an ioctl, or a test's fake). Any thread.
enum OSSNegotiation {
    /// `EINVAL`, negated as the C shim returns it.
    static let notSupported = -EINVAL

    /// One ioctl: `set(setting, &value)` sets `value`, leaves the device's choice in it, and returns 0 or the
    /// errno, negated.
    typealias Set = (OSSSetting, inout Int32) -> Int32

    /// The format the device accepts for a stream of `requested`, and the ioctl values that give it.
    ///
    /// - Throws: `mpd`'s message (`Failed to set channel count`, `… sample rate`, `… sample format`, with `: ` and
    ///   the error's text when the device failed otherwise than with `EINVAL`).
    static func negotiate(_ requested: AudioFormat, set: Set) throws(OutputError) -> (AudioFormat, OSSParameters) {
        var format = requested
        let channels = try Self.first(
            .channels, [Int32(requested.channels)] + (requested.channels == 1 ? [] : [1]),
            valid: { (1...8).contains($0) }, set: set)
        format.channels = Int(channels)
        let speed = try Self.first(
            .speed,
            [Int32(clamping: requested.sampleRate)] + [48000, 44100].filter { Int($0) != requested.sampleRate },
            valid: { $0 > 0 && $0 < 1 << 30 }, set: set)
        format.sampleRate = Int(speed)
        var oss = OSSSampleFormat.query
        for candidate in [requested.sampleFormat] + [.s24, .s32, .s16, .s8].filter({ $0 != requested.sampleFormat }) {
            if let accepted = try Self.probe(candidate, set: set) {
                (format.sampleFormat, oss) = accepted
                break
            }
        }
        guard oss != OSSSampleFormat.query else { throw OutputError(OSSSetting.format.failure) }
        return (format, OSSParameters(channels: channels, speed: speed, format: oss))
    }

    /// The first of `values` the device takes for `setting` and answers with a valid value.
    private static func first(
        _ setting: OSSSetting, _ values: [Int32], valid: (Int32) -> Bool, set: Set
    ) throws(OutputError) -> Int32 {
        for value in values {
            var effective = value
            let result = set(setting, &effective)
            if result == 0 && valid(effective) { return effective }
            if result != 0 && result != Self.notSupported { throw Self.error(setting, result) }
        }
        throw OutputError(setting.failure)
    }

    /// Sets `format`'s OSS counterpart: the format the device answered, if Fermata writes it; `nil` when `format`
    /// has no counterpart (no ioctl then) or the device refuses it.
    private static func probe(_ format: SampleFormat, set: Set) throws(OutputError) -> (SampleFormat, Int32)? {
        var oss = OSSSampleFormat.oss(format)
        guard oss != OSSSampleFormat.query else { return nil }
        let result = set(.format, &oss)
        if result != 0 {
            if result == Self.notSupported { return nil }
            throw Self.error(.format, result)
        }
        return OSSSampleFormat.fermata(oss).map { ($0, oss) }
    }

    /// Sets `parameters` again on a reopened device, each of which it must take unchanged.
    ///
    /// - Throws: `mpd`'s message, with the error's text when the ioctl failed.
    static func restore(_ parameters: OSSParameters, set: Set) throws(OutputError) {
        for (setting, value) in [
            (OSSSetting.channels, parameters.channels), (.speed, parameters.speed), (.format, parameters.format),
        ] {
            var effective = value
            let result = set(setting, &effective)
            if result != 0 { throw Self.error(setting, result) }
            if effective != value { throw OutputError(setting.failure) }
        }
    }

    /// `mpd`'s message for an ioctl that failed with `code` (a negated errno).
    static func error(_ setting: OSSSetting, _ code: Int32) -> OutputError {
        OutputError("\(setting.failure): \(OSSError.text(code))")
    }
}

/// Error texts.
enum OSSError {
    /// `strerror`'s text for a negated errno.
    static func text(_ code: Int32) -> String { String(cString: strerror(-code)) }
}
