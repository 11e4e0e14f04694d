// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Testing

@testable import Samplerate

@Suite struct SamplerateResamplerTests {
    @Test(arguments: [
        ("", 2), ("2", 2), ("0", 0), ("4", 4), ("best", 0), ("Medium Sinc Interpolator", 1), ("FASTEST", 2),
        ("zoh", 3), ("linear", 4), ("l", 4),
    ])
    func readsTypesAsMpd(setting: String, number: Int32) throws {
        #expect(try #require(SamplerateResampler.Converter(setting: setting)).rawValue == number)
    }

    @Test(arguments: ["bogus", "5", "-1", "2x", " 2", "Best Sinc Interpolator and more"])
    func refusesWhatMpdRefuses(setting: String) {
        #expect(SamplerateResampler.Converter(setting: setting) == nil)
    }

    @Test func namesAreLibsampleratesNames() {
        #expect(SamplerateResampler.Converter.fastestSinc.name == "Fastest Sinc Interpolator")
        #expect(SamplerateResampler.Converter.zeroOrderHold.name == "ZOH Interpolator")
    }

    /// A 1 kHz sine at 48 kHz resampled to 44.1 kHz in chunks comes out a 1 kHz sine, the filter's delay apart,
    /// with at most the frames `mpd` makes room for in each call.
    @Test func resamplesASineInChunks() throws {
        let resampler = try SamplerateResampler(inputRate: 48000, outputRate: 44100, channels: 1)
        let chunk = 1000
        #expect(resampler.maxOutputFrames(forInput: chunk) == 919)
        var output: [Float] = []
        var buffer = [Float](repeating: 0, count: 2000)
        for start in stride(from: 0, to: 48000, by: chunk) {
            let input = (start..<(start + chunk)).map { Float(0.5 * sin(2 * Double.pi * 1000 * Double($0) / 48000)) }
            let frames = try input.withUnsafeBufferPointer { input in
                try buffer.withUnsafeMutableBufferPointer { out in
                    try resampler.process(input.baseAddress!, frames: chunk, into: out.baseAddress!, capacity: 2000)
                }
            }
            #expect(frames <= 919)
            output += buffer[0..<frames]
        }
        #expect(output.count > 43000 && output.count <= 44100)
        // Past the filter's start, the peak is the sine's.
        let peak = output.dropFirst(1000).map(abs).max() ?? 0
        #expect(abs(peak - 0.5) < 0.01)
    }

    @Test func zeroOrderHoldRepeatsInputFrames() throws {
        let resampler = try SamplerateResampler(
            inputRate: 1000, outputRate: 3000, channels: 1, converter: .zeroOrderHold)
        let input: [Float] = [0.1, 0.2, 0.3, 0.4]
        var out = [Float](repeating: 0, count: 12)
        let frames = try resampler.process(input, frames: 4, into: &out, capacity: 12)
        #expect(frames > 0)
        #expect(Set(out[0..<frames]).isSubset(of: Set(input)))
    }
}
