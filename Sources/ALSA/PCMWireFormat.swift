// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// How samples of one of Fermata's sample formats travel to an ALSA device: as they are, packed from 32-bit words
/// into 3 bytes (`S24_3LE`), and/or byte-swapped for a big-endian device.
///
/// Pure value; safe from any thread.
struct PCMWireFormat: Hashable, Sendable, CustomStringConvertible {
    /// The format the rest of Fermata produces and the output thread converts to.
    var sampleFormat: SampleFormat
    /// 24-bit samples in 3 bytes instead of a 32-bit word (only for ``SampleFormat/s24``).
    var packed24: Bool = false
    /// Samples in the other byte order than the host's.
    var reverseEndian: Bool = false
    /// Frames of 5 to 8 channels move from the decoders' order (FLAC's, WAV's, Vorbis's: FL FR FC LFE BL BR SL SR)
    /// into ALSA's default map (FL FR BL BR FC LFE SL SR), as `mpd`'s ALSA output does; 8-bit samples and DSD stay.
    var alsaChannelOrder: Bool = false

    /// Bytes per sample on the wire.
    var bytesPerSample: Int { self.packed24 ? 3 : self.sampleFormat.bytesPerSample }

    /// Whether samples must be rewritten before `snd_pcm_writei`.
    var needsExport: Bool { self.packed24 || (self.reverseEndian && self.bytesPerSample > 1) || self.alsaChannelOrder }

    /// The layout for a stream of `channels` channels: ALSA's channel order where `mpd` applies it (5, 6, 7 or 8
    /// channels of 16, 24, 32-bit or float samples, not DSD over PCM).
    func ordering(channels: Int, dsdOverPCM: Bool) -> PCMWireFormat {
        var format = self
        format.alsaChannelOrder =
            !dsdOverPCM && (5...8).contains(channels) && self.sampleFormat != .s8 && self.sampleFormat != .dsd
        return format
    }

    /// The input channel that ALSA's channel `channel` of a `channels`-channel frame takes (with
    /// ``alsaChannelOrder``).
    static func alsaSourceChannel(_ channel: Int, of channels: Int) -> Int {
        switch (channels, channel) {
        // 5.0: FL FR FC BL BR -> FL FR BL BR FC.
        case (5, 2): 3
        case (5, 3): 4
        case (5, 4): 2
        // 5.1 and 7.1: FC LFE BL BR -> BL BR FC LFE (7.1's side pair stays last).
        case (6, 2), (8, 2): 4
        case (6, 3), (8, 3): 5
        case (6, 4), (8, 4): 2
        case (6, 5), (8, 5): 3
        // 7.0: FL FR FC LFE BC SL SR -> FL FR SL SR FC LFE BC.
        case (7, 2): 5
        case (7, 3): 6
        case (7, 4): 2
        case (7, 5): 3
        case (7, 6): 4
        default: channel
        }
    }

    var description: String {
        "\(self.sampleFormat.wireName)\(self.packed24 ? "_3" : "")\(self.reverseEndian ? " (byte-swapped)" : "")"
    }

    /// The formats tried when the device refuses the requested one, in `mpd`'s order.
    static let probeOrder: [SampleFormat] = [.s24, .s32, .s16, .s8]

    /// Finds the first layout the device accepts, in `mpd`'s order: the requested format, its packed 24-bit form,
    /// the byte-swapped forms; then the same for 24-in-32, 32, 16 and 8 bits.
    ///
    /// Only `-EINVAL` ("not supported") moves on to the next candidate; any other error ends the search.
    /// - Parameters:
    ///   - requested: What the stream carries.
    ///   - attempt: Sets a candidate on the device's parameters; returns 0 or a negative errno.
    /// - Returns: the accepted layout, or the error of the last attempt.
    static func negotiate(
        _ requested: SampleFormat, attempt: (PCMWireFormat) -> Int32
    ) -> Result<PCMWireFormat, NegotiationFailure> {
        var lastError = -Self.invalidArgument
        for format in [requested] + Self.probeOrder.filter({ $0 != requested }) {
            for candidate in Self.candidates(for: format) {
                lastError = attempt(candidate)
                if lastError == 0 { return .success(candidate) }
                if lastError != -Self.invalidArgument { return .failure(NegotiationFailure(code: lastError)) }
            }
        }
        return .failure(NegotiationFailure(code: lastError))
    }

    /// The layouts tried for one sample format: as is, packed, byte-swapped, byte-swapped and packed.
    static func candidates(for format: SampleFormat) -> [PCMWireFormat] {
        var list: [PCMWireFormat] = []
        for reverse in [false, true] {
            if reverse && format.bytesPerSample == 1 { continue }
            list.append(PCMWireFormat(sampleFormat: format, packed24: false, reverseEndian: reverse))
            if format == .s24 {
                list.append(PCMWireFormat(sampleFormat: format, packed24: true, reverseEndian: reverse))
            }
        }
        return list
    }

    /// `EINVAL`, which alsa-lib returns (negated) for a value the device does not support.
    static let invalidArgument: Int32 = 22

    /// Rewrites `frames` frames of `channels` samples from Fermata's layout (`input`) into this wire layout (channel
    /// order, packing, byte order).
    ///
    /// Audio path: no allocation. `output` must hold `frames * channels * bytesPerSample` bytes.
    func export(
        _ input: UnsafeRawBufferPointer, frames: Int, channels: Int, into output: UnsafeMutableRawBufferPointer
    ) {
        let samples = frames * channels
        let inSize = self.sampleFormat.bytesPerSample
        let outSize = self.bytesPerSample
        precondition(input.count >= samples * inSize && output.count >= samples * outSize)
        guard let source = input.baseAddress, let target = output.baseAddress else { return }
        let from = source.assumingMemoryBound(to: UInt8.self)
        let to = target.assumingMemoryBound(to: UInt8.self)
        let reorder = self.alsaChannelOrder
        for sample in 0..<samples {
            let channel = sample % channels
            let i = (reorder ? sample - channel + Self.alsaSourceChannel(channel, of: channels) : sample) * inSize
            let o = sample * outSize
            if self.packed24 {
                // The low three bytes of a little-endian 32-bit word hold the 24-bit sample.
                if self.reverseEndian {
                    to[o] = from[i + 2]
                    to[o + 1] = from[i + 1]
                    to[o + 2] = from[i]
                } else {
                    to[o] = from[i]
                    to[o + 1] = from[i + 1]
                    to[o + 2] = from[i + 2]
                }
            } else if self.reverseEndian {
                for byte in 0..<outSize { to[o + byte] = from[i + outSize - 1 - byte] }
            } else {
                for byte in 0..<outSize { to[o + byte] = from[i + byte] }
            }
        }
    }
}

/// No sample layout was accepted: the errno (negative) of the last attempt.
struct NegotiationFailure: Error, Equatable {
    var code: Int32
}
