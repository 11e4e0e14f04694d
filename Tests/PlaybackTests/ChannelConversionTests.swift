// SPDX-License-Identifier: GPL-3.0-or-later

import Model
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
}
