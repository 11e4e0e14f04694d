// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Model
import Soxr
import Testing

@testable import Playback

/// The `resampler` quality reaches libsoxr: the output's converter resamples with the recipe it is given.
@Suite struct ResamplerQualityTests {
    /// A 1 kHz sine at 48 kHz, stereo floats, resampled to 44.1 kHz in chunks; the output floats.
    static func resampled(_ quality: SoxrResampler.Quality?) throws -> [Float] {
        let input = AudioFormat(sampleRate: 48000, sampleFormat: .float, channels: 2)
        let output = AudioFormat(sampleRate: 44100, sampleFormat: .float, channels: 2)
        let chunk = 960
        var converter = PlayerPCMConverter()
        if let quality {
            try converter.configure(input: input, output: output, maxFrames: chunk, quality: quality)
        } else {
            try converter.configure(input: input, output: output, maxFrames: chunk)
        }
        var result: [Float] = []
        for start in stride(from: 0, to: 9600, by: chunk) {
            let samples = (start..<(start + chunk)).flatMap { frame -> [Float] in
                let value = Float(0.5 * sin(2 * Double.pi * 1000 * Double(frame) / 48000))
                return [value, value]
            }
            let bytes = samples.withUnsafeBytes { Array(converter.convert($0, frames: chunk, fromGain: 1, toGain: 1)) }
            result += DSDToPCMTests.floats(bytes, format: .float)
        }
        return result
    }

    @Test func eachQualityIsItsOwnRecipe() throws {
        let high = try Self.resampled(.high)
        #expect(high.count > 8000)
        #expect(try Self.resampled(nil) == high, "high is the default, as in mpd")
        let quick = try Self.resampled(.quick)
        let veryHigh = try Self.resampled(.veryHigh)
        #expect(quick != high && veryHigh != high && quick != veryHigh)
    }
}
