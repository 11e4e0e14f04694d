// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Model
import Soxr
import Testing

@testable import Playback

/// DSD to PCM in the output's converter: a sigma-delta encoding of a sine comes back as that sine.
@Suite struct DSDToPCMTests {
    static let dsd64Stereo = AudioFormat(sampleRate: 352_800, sampleFormat: .dsd, channels: 2)

    /// `seconds` of DSD64 (bytes, MSB first, interleaved): a second-order sigma-delta modulation of a sine of
    /// `frequency` Hz and `amplitude` per channel (channel c at frequency × (1 + c / 2)).
    static func sigmaDelta(seconds: Double, frequency: Double, amplitude: Double, channels: Int) -> [UInt8] {
        let bitRate = 2_822_400.0
        let bytes = Int(bitRate * seconds) / 8
        var out = [UInt8](repeating: 0, count: bytes * channels)
        for channel in 0..<channels {
            let step = 2 * Double.pi * frequency * (1 + Double(channel) / 2) / bitRate
            var first = 0.0
            var second = 0.0
            var feedback = 1.0
            for index in 0..<bytes {
                var byte: UInt8 = 0
                for bit in 0..<8 {
                    let x = amplitude * sin(step * Double(index * 8 + bit))
                    first += x - feedback
                    second += first - feedback
                    feedback = second >= 0 ? 1 : -1
                    if second >= 0 { byte |= 0x80 >> UInt8(bit) }
                }
                out[index * channels + channel] = byte
            }
        }
        return out
    }

    /// Runs `dsd` through a converter to `output` in chunks of `chunk` frames; the floats of the result.
    static func convert(_ dsd: [UInt8], to output: AudioFormat, channels: Int, chunk: Int = 1000, gain: Float = 1)
        throws -> [Float]
    {
        var converter = PlayerPCMConverter()
        let input = AudioFormat(sampleRate: 352_800, sampleFormat: .dsd, channels: channels)
        try converter.configure(input: input, output: output, maxFrames: chunk)
        var samples: [Float] = []
        let frames = dsd.count / channels
        var start = 0
        while start < frames {
            let count = min(chunk, frames - start)
            let result = dsd.withUnsafeBytes { bytes in
                let piece = UnsafeRawBufferPointer(rebasing: bytes[(start * channels)..<((start + count) * channels)])
                return Array(converter.convert(piece, frames: count, fromGain: gain, toGain: gain))
            }
            samples += Self.floats(result, format: output.sampleFormat)
            start += count
        }
        return samples
    }

    static func floats(_ bytes: [UInt8], format: SampleFormat) -> [Float] {
        bytes.withUnsafeBytes { raw in
            switch format {
            case .float:
                return (0..<(bytes.count / 4)).map { raw.loadUnaligned(fromByteOffset: $0 * 4, as: Float.self) }
            case .s24:
                return (0..<(bytes.count / 4)).map {
                    Float(raw.loadUnaligned(fromByteOffset: $0 * 4, as: Int32.self)) / 8_388_608
                }
            case .s16:
                return (0..<(bytes.count / 2)).map {
                    Float(raw.loadUnaligned(fromByteOffset: $0 * 2, as: Int16.self)) / 32768
                }
            default: return bytes.map { Float($0) }
            }
        }
    }

    /// The least-squares fit of a sine of `frequency` at `rate` to `samples`: its amplitude and the RMS of
    /// what is left.
    static func fit(_ samples: [Float], frequency: Double, rate: Double) -> (amplitude: Double, residual: Double) {
        var ss = 0.0
        var sc = 0.0
        var cc = 0.0
        var ys = 0.0
        var yc = 0.0
        for (index, sample) in samples.enumerated() {
            let phase = 2 * Double.pi * frequency * Double(index) / rate
            let (s, c) = (sin(phase), cos(phase))
            ss += s * s
            sc += s * c
            cc += c * c
            ys += Double(sample) * s
            yc += Double(sample) * c
        }
        let determinant = ss * cc - sc * sc
        let a = (ys * cc - yc * sc) / determinant
        let b = (yc * ss - ys * sc) / determinant
        var residual = 0.0
        for (index, sample) in samples.enumerated() {
            let phase = 2 * Double.pi * frequency * Double(index) / rate
            let error = Double(sample) - (a * sin(phase) + b * cos(phase))
            residual += error * error
        }
        return ((a * a + b * b).squareRoot(), (residual / Double(samples.count)).squareRoot())
    }

    static func channel(_ samples: [Float], _ channel: Int, of channels: Int) -> [Float] {
        stride(from: channel, to: samples.count, by: channels).map { samples[$0] }
    }

    @Test func aSigmaDeltaSineComesBackAsThatSine() throws {
        let dsd = Self.sigmaDelta(seconds: 0.1, frequency: 1000, amplitude: 0.5, channels: 2)
        let pcm = try Self.convert(
            dsd, to: AudioFormat(sampleRate: 352_800, sampleFormat: .float, channels: 2), channels: 2)
        #expect(pcm.count == dsd.count)
        for (channel, frequency) in [(0, 1000.0), (1, 1500.0)] {
            // Past the filter's start-up (12 bytes).
            let samples = Array(Self.channel(pcm, channel, of: 2).dropFirst(64))
            let fit = Self.fit(samples, frequency: frequency, rate: 352_800)
            #expect(abs(fit.amplitude - 0.5) < 0.01, "channel \(channel): amplitude \(fit.amplitude)")
            #expect(fit.residual < 0.01, "channel \(channel): residual \(fit.residual)")
        }
    }

    @Test func integerOutputsGetMPDs24BitSumsAndAgreeWithFloat() throws {
        let dsd = Self.sigmaDelta(seconds: 0.02, frequency: 2000, amplitude: 0.4, channels: 1)
        let float = try Self.convert(
            dsd, to: AudioFormat(sampleRate: 352_800, sampleFormat: .float, channels: 1), channels: 1)
        let s24 = try Self.convert(
            dsd, to: AudioFormat(sampleRate: 352_800, sampleFormat: .s24, channels: 1), channels: 1)
        #expect(float.count == s24.count)
        // The 24-bit path truncates each of its 12 table entries: at most 12 steps from the float path.
        let worst = zip(float, s24).map { abs($0 - $1) }.max() ?? 1
        #expect(worst <= 12 / 8_388_608 + 1e-6)
        #expect(zip(float, s24).contains { $0 != $1 })
        let fit = Self.fit(Array(s24.dropFirst(64)), frequency: 2000, rate: 352_800)
        #expect(abs(fit.amplitude - 0.4) < 0.01 && fit.residual < 0.01)
    }

    @Test func theSilencePatternIsSilentAndVolumeDoesNotApplyToDSD() throws {
        let silence = [UInt8](repeating: 0x69, count: 4000)
        let pcm = try Self.convert(
            silence, to: AudioFormat(sampleRate: 352_800, sampleFormat: .float, channels: 2), channels: 2)
        // Once the filter's 12 bytes hold the pattern (the older half bit-reversed), exactly silent.
        #expect(pcm.dropFirst(2 * 12).allSatisfy { abs($0) < 1e-6 })
        let dsd = Self.sigmaDelta(seconds: 0.01, frequency: 1000, amplitude: 0.5, channels: 2)
        let full = try Self.convert(
            dsd, to: AudioFormat(sampleRate: 352_800, sampleFormat: .float, channels: 2), channels: 2)
        let quiet = try Self.convert(
            dsd, to: AudioFormat(sampleRate: 352_800, sampleFormat: .float, channels: 2), channels: 2, gain: 0.25)
        #expect(full == quiet)
    }

    @Test func dsdToADSDDeviceIsCopiedEvenWithAGain() throws {
        let dsd = Self.sigmaDelta(seconds: 0.005, frequency: 1000, amplitude: 0.5, channels: 2)
        var converter = PlayerPCMConverter()
        try converter.configure(input: Self.dsd64Stereo, output: Self.dsd64Stereo, maxFrames: dsd.count / 2)
        let out = dsd.withUnsafeBytes {
            Array(converter.convert($0, frames: dsd.count / 2, fromGain: 0.5, toGain: 0.1))
        }
        #expect(out == dsd)
    }

    @Test func pcmCannotBecomeDSD() {
        var converter = PlayerPCMConverter()
        #expect(throws: OutputError.self) {
            try converter.configure(
                input: AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2), output: Self.dsd64Stereo,
                maxFrames: 100)
        }
    }

    @Test func resetStartsTheFilterAfresh() throws {
        let dsd = Self.sigmaDelta(seconds: 0.002, frequency: 1000, amplitude: 0.5, channels: 1)
        let output = AudioFormat(sampleRate: 352_800, sampleFormat: .float, channels: 1)
        var converter = PlayerPCMConverter()
        try converter.configure(
            input: AudioFormat(sampleRate: 352_800, sampleFormat: .dsd, channels: 1), output: output, maxFrames: 1000)
        let first = dsd.withUnsafeBytes { Array(converter.convert($0, frames: dsd.count, fromGain: 1, toGain: 1)) }
        let again = dsd.withUnsafeBytes { Array(converter.convert($0, frames: dsd.count, fromGain: 1, toGain: 1)) }
        converter.reset()
        let fresh = dsd.withUnsafeBytes { Array(converter.convert($0, frames: dsd.count, fromGain: 1, toGain: 1)) }
        #expect(first == fresh)
        #expect(first != again)
    }

    @Test func resamplingToCDRateKeepsTheWholeLengthWithTheResamplersTail() throws {
        let dsd = Self.sigmaDelta(seconds: 0.05, frequency: 1000, amplitude: 0.5, channels: 1)
        var converter = PlayerPCMConverter()
        try converter.configure(
            input: AudioFormat(sampleRate: 352_800, sampleFormat: .dsd, channels: 1),
            output: AudioFormat(sampleRate: 44100, sampleFormat: .float, channels: 1), maxFrames: 2048,
            resampler: .soxr(.high))
        var frames = 0
        var start = 0
        while start < dsd.count {
            let count = min(2048, dsd.count - start)
            frames += dsd.withUnsafeBytes { bytes in
                converter.convert(
                    UnsafeRawBufferPointer(rebasing: bytes[start..<(start + count)]), frames: count, fromGain: 1,
                    toGain: 1
                ).count / 4
            }
            start += count
        }
        frames += converter.flush().count / 4
        // 17640 bytes at 352800 Hz are 2205 frames at 44100 Hz: all of them, the tail included.
        #expect(abs(frames - dsd.count / 8) <= 2, "\(frames) frames")
    }
}
