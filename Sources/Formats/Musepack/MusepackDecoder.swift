// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import MPCDec
import Model

/// Decodes Musepack with libmpcdec into 24-bit samples in 32-bit words, as `mpd`'s `mpcdec` plugin converts
/// libmpcdec's float samples: scaled by 2^23, truncated toward zero, clamped to 24 bits.
///
/// Confined to the decoding thread. `decode(into:)` and `seek(toFrame:)` do not allocate.
public final class MusepackDecoder: Decoder {
    /// `rate:24:channels`.
    public let format: AudioFormat
    /// The playable length in samples per channel (`mpc_streaminfo_get_length_samples`).
    public let totalFrames: UInt64?
    /// The stream header's ReplayGain, if it has any (`mpd`'s plugin submits it).
    public let replayGain: ReplayGainInfo?
    /// The bit rate of the frame decoded last, in kbit/s: its bits × rate / (1000 × samples), as `mpd` reports it.
    public private(set) var bitRate = 0
    private let demux: MPCDemux
    /// Samples of the last frame already delivered, and how many it has (all channels).
    private var pendingOffset = 0
    private var pendingCount = 0

    /// Opens the stream `input` reads (kept by the decoder).
    ///
    /// - Throws: `FormatError.decoder` when libmpcdec rejects it.
    public init(input: any InputStream) throws(FormatError) {
        do {
            self.demux = try MPCDemux(input: input)
        } catch {
            throw .decoder("\(error)")
        }
        let info = self.demux.info
        guard info.sampleRate > 0 else { throw .unsupportedFormat("sample rate \(info.sampleRate)") }
        self.format = AudioFormat(sampleRate: info.sampleRate, sampleFormat: .s24, channels: info.channels)
        self.totalFrames = UInt64(max(0, info.lengthSamples))
        let replayGain = MusepackFormat.replayGain(info)
        self.replayGain = replayGain.isEmpty ? nil : replayGain
    }

    /// Decodes into `buffer` (whole frames of `format.frameSize` bytes).
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: frames written; 0 at the end, or when libmpcdec cannot decode a frame (as `mpd`, which ends the
    ///   song there without an error).
    /// - Throws: nothing in practice (the protocol's signature).
    public func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        let channels = self.format.channels
        let capacity = buffer.count / (4 * channels) * channels
        guard capacity > 0 else { return 0 }
        while self.pendingOffset >= self.pendingCount {
            let frame: MPCFrame?
            do {
                frame = try self.demux.decodeFrame()
            } catch {
                // As mpd's plugin: a frame that does not decode ends the song (no error).
                return 0
            }
            guard let frame else { return 0 }
            self.pendingOffset = 0
            self.pendingCount = frame.samples * channels
            // An empty frame can follow a seek: skipped, as mpd does.
            if frame.samples > 0 {
                let rate = UInt32(truncatingIfNeeded: self.format.sampleRate)
                self.bitRate = Int(
                    UInt32(truncatingIfNeeded: frame.bits) &* rate / (1000 &* UInt32(truncatingIfNeeded: frame.samples))
                )
            }
        }
        let count = min(capacity, self.pendingCount - self.pendingOffset)
        let offset = self.pendingOffset
        self.demux.withSamples { samples in
            for index in 0..<count {
                buffer.storeBytes(of: Self.s24(samples[offset + index]), toByteOffset: index * 4, as: Int32.self)
            }
        }
        self.pendingOffset += count
        return count / channels
    }

    /// Seeks to `frame` (sample-accurate).
    ///
    /// Does not allocate. Decoder thread.
    /// - Throws: `FormatError.decoder` when libmpcdec cannot seek there.
    @discardableResult
    public func seek(toFrame frame: UInt64) throws(FormatError) -> UInt64 {
        self.pendingOffset = 0
        self.pendingCount = 0
        do {
            try self.demux.seek(toSample: frame)
        } catch {
            throw .decoder("\(error)")
        }
        return frame
    }

    /// One float sample as mpd converts it: × 2^23 in float, truncated toward zero (a value outside the 32-bit
    /// range, or NaN, becomes INT32_MIN as x86's conversion does), clamped to 24 bits.
    @inline(__always)
    static func s24(_ sample: Float) -> Int32 {
        let scaled = sample * 8_388_608
        let truncated: Int32 = scaled > -2_147_483_904 && scaled < 2_147_483_648 ? Int32(scaled) : .min
        return min(max(truncated, -8_388_608), 8_388_607)
    }
}
