// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Model
import Samplerate
import Soxr
import Testing

@testable import Playback

/// The `resampler` setting reaches the library: the output's converter resamples with the plugin and recipe it
/// is given.
@Suite struct ResamplerQualityTests {
    /// A 1 kHz sine at 48 kHz, stereo floats, resampled to 44.1 kHz in chunks; the output floats.
    static func resampled(_ resampler: Resampler?) throws -> [Float] {
        let input = AudioFormat(sampleRate: 48000, sampleFormat: .float, channels: 2)
        let output = AudioFormat(sampleRate: 44100, sampleFormat: .float, channels: 2)
        let chunk = 960
        var converter = PlayerPCMConverter()
        if let resampler {
            try converter.configure(input: input, output: output, maxFrames: chunk, resampler: resampler)
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
        let high = try Self.resampled(.soxr(.high))
        #expect(high.count > 8000)
        let quick = try Self.resampled(.soxr(.quick))
        let veryHigh = try Self.resampled(.soxr(.veryHigh))
        #expect(quick != high && veryHigh != high && quick != veryHigh)
    }

    @Test func libsamplerateIsTheDefaultAsInDebiansMpd() throws {
        let fastest = try Self.resampled(.libsamplerate(.fastestSinc))
        #expect(fastest.count > 8000)
        #expect(try Self.resampled(nil) == fastest)
        #expect(fastest != (try Self.resampled(.soxr(.high))))
        #expect(fastest != (try Self.resampled(.libsamplerate(.zeroOrderHold))))
    }

    /// libsamplerate's tail is not played at the end of a stream, as `mpd` never ends its input; libsoxr's is.
    @Test func onlySoxrFlushesItsTail() throws {
        let input = AudioFormat(sampleRate: 48000, sampleFormat: .float, channels: 2)
        let output = AudioFormat(sampleRate: 44100, sampleFormat: .float, channels: 2)
        for (resampler, flushes) in [(Resampler.soxr(.high), true), (.libsamplerate(.fastestSinc), false)] {
            var converter = PlayerPCMConverter()
            try converter.configure(input: input, output: output, maxFrames: 960, resampler: resampler)
            let samples = [Float](repeating: 0.25, count: 960 * 2)
            _ = samples.withUnsafeBytes { converter.convert($0, frames: 960, fromGain: 1, toGain: 1).count }
            #expect((converter.flush().count > 0) == flushes)
        }
    }
}
