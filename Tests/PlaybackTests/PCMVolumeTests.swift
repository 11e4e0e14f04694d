// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Testing

@testable import Playback

/// mpd's software volume: 1/1024 steps and its dither.
@Suite struct PCMVolumeTests {
    /// Scales 16-bit `input` by `volume` steps with a fresh volume stage.
    private func scaled16(_ input: [Int16], volume: Int, stage: inout PCMVolume) -> [Int16] {
        var output = [Int16](repeating: 0, count: input.count)
        input.withUnsafeBytes { source in
            output.withUnsafeMutableBytes { target in
                stage.apply(
                    source.baseAddress!, format: .s16, samples: input.count, volume: volume, into: target.baseAddress!)
            }
        }
        return output
    }

    @Test func factorsBecomeMPDsSteps() {
        #expect(PCMVolume.steps(1) == 1024)
        #expect(PCMVolume.steps(0) == 0)
        // Musepack's header ReplayGain of the mpcfaad fixture: 0.37633 -> 385 (rounded half up).
        #expect(PCMVolume.steps(0.37633) == 385)
        #expect(PCMVolume.steps(0.5 / 1024) == 1)
        #expect(PCMVolume.steps(.nan) == 0)
        #expect(SoftwareMixer.steps(volume: 100) == 1024)
        #expect(SoftwareMixer.steps(volume: 0) == 0)
        // mpd: (e^2 − 1) / (54.5981500331 − 1) = 0.119203 -> 122.
        #expect(SoftwareMixer.steps(volume: 50) == 122)
    }

    @Test func halfVolumeDithersAroundTheExactValue() {
        var stage = PCMVolume()
        let input = (0..<4096).map { Int16(truncatingIfNeeded: 10_000 + $0) }
        let output = self.scaled16(input, volume: 512, stage: &stage)
        // The first sample by hand: 10 000 × 512 + 512 (rounding) + 863 (the generator's first low bits) − 0,
        // truncated to 1/1024: 5001.
        #expect(output[0] == 5001)
        let errors = zip(input, output).map { Double($1) - Double($0) / 2 }
        #expect(errors.allSatisfy { abs($0) <= 3 })
        // The error feedback keeps the mean error near 0 (rounding alone would add +0.25 on average here).
        #expect(abs(errors.reduce(0, +) / Double(errors.count)) < 0.1)
        // Deterministic: a fresh stage dithers the same way; a reset starts afresh.
        var other = PCMVolume()
        #expect(self.scaled16(input, volume: 512, stage: &other) == output)
        stage.reset()
        #expect(self.scaled16(input, volume: 512, stage: &stage) == output)
    }

    @Test func loudVolumesClipAndZeroIsSilence() {
        var stage = PCMVolume()
        let loud = self.scaled16([30_000, -30_000, 100], volume: 2048, stage: &stage)
        #expect(loud[0] == Int16.max && loud[1] == Int16.min)
        #expect(abs(Int(loud[2]) - 200) <= 3)
        #expect(self.scaled16([30_000, -5, 7], volume: 0, stage: &stage) == [0, 0, 0])
    }

    @Test func twentyFourBitAndFloatSamples() {
        var stage = PCMVolume()
        let words: [Int32] = [8_388_607, -8_388_608, 1_000_000]
        var out = [Int32](repeating: 0, count: 3)
        words.withUnsafeBytes { source in
            out.withUnsafeMutableBytes {
                stage.apply(source.baseAddress!, format: .s24, samples: 3, volume: 4096, into: $0.baseAddress!)
            }
        }
        // Clipped to the 24-bit range, not the 32-bit word's.
        #expect(out[0] == 8_388_607 && out[1] == -8_388_608)
        #expect(abs(Int(out[2]) - 4_000_000) <= 3)
        let floats: [Float] = [0.5, -0.25]
        var scaled = [Float](repeating: 0, count: 2)
        floats.withUnsafeBytes { source in
            scaled.withUnsafeMutableBytes {
                stage.apply(source.baseAddress!, format: .float, samples: 2, volume: 256, into: $0.baseAddress!)
            }
        }
        #expect(scaled == [0.125, -0.0625])
    }
}
