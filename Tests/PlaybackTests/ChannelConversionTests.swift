// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Model
import Samplerate
import Soxr
import Testing

@testable import Playback

/// Channel counts changed as `mpd`'s `PcmConvert` changes them: format first, then channels with its rules.
@Suite struct ChannelConversionTests {
    private static func converted(
        _ samples: [Int16], channels: Int, to outChannels: Int, format output: SampleFormat = .s16
    ) throws -> [Int32] {
        var converter = PlayerPCMConverter()
        let frames = samples.count / channels
        try converter.configure(
            input: AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: channels),
            output: AudioFormat(sampleRate: 44100, sampleFormat: output, channels: outChannels), maxFrames: frames)
        let bytes = samples.withUnsafeBytes { Array(converter.convert($0, frames: frames, fromGain: 1, toGain: 1)) }
        return bytes.withUnsafeBytes { raw in
            output == .s16 ? raw.bindMemory(to: Int16.self).map { Int32($0) } : Array(raw.bindMemory(to: Int32.self))
        }
    }

    @Test func stereoToMonoAveragesTruncatingTowardsZero() throws {
        #expect(
            try Self.converted([3, 4, -3, -4, 32767, 32767, -32768, -32767], channels: 2, to: 1) == [
                3, -3, 32767, -32767,
            ])
    }

    @Test func monoIsCopiedToEveryChannelAfterWidening() throws {
        #expect(try Self.converted([1, -2], channels: 1, to: 2, format: .s24) == [256, 256, -512, -512])
        #expect(try Self.converted([5], channels: 1, to: 6) == [5, 5, 5, 5, 5, 5])
    }

    @Test func surroundIsAveragedIntoEveryChannel() throws {
        #expect(try Self.converted([1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6], channels: 6, to: 2) == [3, 3, -3, -3])
        #expect(try Self.converted([1, 2, 3, 4, 5, 7], channels: 6, to: 1) == [3])
    }

    @Test func stereoGoesToTheFrontPairWithTheRestSilent() throws {
        #expect(try Self.converted([7, -8], channels: 2, to: 6) == [7, -8, 0, 0, 0, 0])
    }

    /// `samples` (s16, `channels`) at 48 kHz resampled to 44.1 kHz 16-bit `outChannels` by `resampler`, in chunks.
    private static func resampled(
        _ samples: [Int16], channels: Int, to outChannels: Int, resampler: Resampler
    ) throws -> [Int16] {
        var converter = PlayerPCMConverter()
        let chunk = 480
        try converter.configure(
            input: AudioFormat(sampleRate: 48000, sampleFormat: .s16, channels: channels),
            output: AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: outChannels), maxFrames: chunk,
            resampler: resampler)
        var result: [Int16] = []
        for start in stride(from: 0, to: samples.count, by: chunk * channels) {
            let slice = Array(samples[start..<min(samples.count, start + chunk * channels)])
            let bytes = slice.withUnsafeBytes {
                Array(converter.convert($0, frames: slice.count / channels, fromGain: 1, toGain: 1))
            }
            result += bytes.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        }
        let tail = Array(converter.flush())
        return result + tail.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    /// mpd resamples in the song's channels, makes 16-bit samples, and only then averages them (truncating): the
    /// mono and stereo devices get the averages of the surround song's resampled channels.
    @Test(arguments: [Resampler.soxr(.high), .libsamplerate(.fastestSinc)])
    func resamplingComesBeforeTheChannels(resampler: Resampler) throws {
        let channels = 6
        var samples: [Int16] = []
        for frame in 0..<4800 {
            for channel in 0..<channels {
                let phase = Double(frame * (channel + 1)) * 2 * Double.pi * 220 / 48000
                samples.append(Int16(9000 * sin(phase)))
            }
        }
        let surround = try Self.resampled(samples, channels: channels, to: channels, resampler: resampler)
        #expect(surround.count > 6 * 4000)
        let averages = stride(from: 0, to: surround.count, by: channels).map { start in
            Int16(surround[start..<(start + channels)].reduce(0) { $0 + Int($1) } / channels)
        }
        #expect(try Self.resampled(samples, channels: channels, to: 1, resampler: resampler) == averages)
        #expect(
            try Self.resampled(samples, channels: channels, to: 2, resampler: resampler)
                == averages.flatMap { [$0, $0] })
    }
}
