// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// `mpd`'s sample format conversion to signed 16-bit (its `PcmConvert` with only the sample format changing,
/// as its chromaprint client asks for), bit for bit: 8-bit samples shifted up, 24-bit (in 32-bit words) and
/// 32-bit samples shifted down with `mpd`'s dither (`PCMDither`, whose state carries from one call to the
/// next), floats scaled by 32768 and truncated towards zero, then clipped; DSD through `dsd2pcm` as 24-bit
/// integers, then dithered to 16 bits.
///
/// Not thread-safe: one per conversion. `convert` writes into a buffer it grows (allocates only when a call
/// brings more samples than any before).
struct PCMToS16: ~Copyable {
    let format: AudioFormat
    private var dither = PCMDither()
    private let dsd: DSDToPCM?
    /// The converted samples of the last call, and DSD's intermediate floats.
    private var output: [Int16] = []
    private var floats: [Float] = []

    /// A converter from `format`.
    init(from format: AudioFormat) {
        self.format = format
        self.dsd = format.sampleFormat == .dsd ? DSDToPCM() : nil
    }

    /// Converts the whole frames of `source` and hands the 16-bit samples to `body`.
    mutating func convert<Result>(
        _ source: UnsafeRawBufferPointer, _ body: (UnsafeBufferPointer<Int16>) throws -> Result
    ) rethrows -> Result {
        let frames = source.count / max(1, self.format.frameSize)
        let count = frames * self.format.channels
        if self.format.sampleFormat == .s16 {
            return try body(
                UnsafeBufferPointer(start: source.baseAddress?.assumingMemoryBound(to: Int16.self), count: count))
        }
        if self.output.count < count { self.output = [Int16](repeating: 0, count: count) }
        switch self.format.sampleFormat {
        case .s16:
            break
        case .s8:
            for index in 0..<count {
                self.output[index] = Int16(source.load(fromByteOffset: index, as: Int8.self)) << 8
            }
        case .s24:
            for index in 0..<count {
                let sample = source.loadUnaligned(fromByteOffset: index * 4, as: Int32.self)
                self.output[index] = Int16(truncatingIfNeeded: self.dither.shift(Int64(sample), bits: 24, by: 8))
            }
        case .s32:
            for index in 0..<count {
                let sample = source.loadUnaligned(fromByteOffset: index * 4, as: Int32.self)
                self.output[index] = Int16(truncatingIfNeeded: self.dither.shift(Int64(sample), bits: 32, by: 16))
            }
        case .float:
            for index in 0..<count {
                self.output[index] = Self.fromFloat(source.loadUnaligned(fromByteOffset: index * 4, as: Float.self))
            }
        case .dsd:
            if self.floats.count < count { self.floats = [Float](repeating: 0, count: count) }
            self.floats.withUnsafeMutableBufferPointer { floats in
                self.dsd?.translate(
                    source, frames: frames, channels: self.format.channels, integer24: true,
                    into: floats.baseAddress!)
            }
            for index in 0..<count {
                // The 24-bit sum, exactly (DSDToPCM divides it by 2²³ into a float, which holds 24 bits).
                let sample = Int64(self.floats[index] * 8_388_608)
                self.output[index] = Int16(truncatingIfNeeded: self.dither.shift(sample, bits: 24, by: 8))
            }
        }
        return try self.output.withUnsafeBufferPointer { buffer in
            try body(UnsafeBufferPointer(rebasing: buffer[0..<count]))
        }
    }

    /// `mpd`'s float to 16-bit: the sample × 32768 in single precision, converted to a 32-bit integer as x86
    /// does (towards zero; out of range or NaN gives the smallest integer), then clipped to 16 bits.
    static func fromFloat(_ sample: Float) -> Int16 {
        let scaled = sample * 32768
        guard scaled.isFinite, scaled > -2_147_483_648, scaled < 2_147_483_648 else { return Int16.min }
        return Int16(clamping: Int32(scaled))
    }
}
