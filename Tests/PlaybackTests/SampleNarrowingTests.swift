// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Testing

@testable import Playback

/// Integer samples narrowed as `mpd`'s format converter narrows them when only the sample format changes.
@Suite struct SampleNarrowingTests {
    private static func converted(_ words: [Int32], from input: SampleFormat, to output: SampleFormat) throws
        -> [UInt8]
    {
        var converter = PlayerPCMConverter()
        try converter.configure(
            input: AudioFormat(sampleRate: 44100, sampleFormat: input, channels: 2),
            output: AudioFormat(sampleRate: 44100, sampleFormat: output, channels: 2), maxFrames: words.count / 2)
        return words.withUnsafeBytes { Array(converter.convert($0, frames: words.count / 2, fromGain: 1, toGain: 1)) }
    }

    @Test func thirtyTwoBitsToTwentyFourAreShiftedDown() throws {
        let words: [Int32] = [0x7FFF_FFFF, -0x8000_0000, 0x1FF, -0x1FF, 255, -1]
        let bytes = try Self.converted(words, from: .s32, to: .s24)
        let got = bytes.withUnsafeBytes { Array($0.bindMemory(to: Int32.self)) }
        // An arithmetic shift: -1 stays -1, -0x1FF becomes -2 (floor), as mpd's `>> 8`.
        #expect(got == [0x7F_FFFF, -0x80_0000, 1, -2, 0, -1])
    }

    @Test(arguments: [(SampleFormat.s24, 24, 8), (.s32, 32, 16)])
    func narrowingToSixteenBitsIsMpdsDither(format: SampleFormat, bits: Int, scale: Int) throws {
        let words: [Int32] = (0..<512).map { Int32(truncatingIfNeeded: ($0 &* 7919) << (bits - 16)) >> 1 }
        let bytes = try Self.converted(words, from: format, to: .s16)
        let got = bytes.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        // The dither's state runs on from sample to sample, starting afresh when the stream opens.
        var dither = PCMDither()
        let want = words.map { Int16(truncatingIfNeeded: dither.shift(Int64($0), bits: bits, by: scale)) }
        #expect(got == want)
        // Not plain rounding: the dither moves some samples.
        let rounded = words.map { Int16(clamping: (Int64($0) + (1 << (scale - 1))) >> scale) }
        #expect(got != rounded)
        #expect(try Self.converted(words, from: format, to: .s16) == bytes, "a new stream starts the dither afresh")
    }
}
