// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Testing

@testable import Formats

/// `mpd`'s mad plugin's own arithmetic around libmad.
@Suite struct MadDecoderTests {
    /// `mad_fixed_to_24_sample`: add 2^4, clip to [-1.0, 1.0) (28 fraction bits), drop 5 bits.
    @Test func fixedPointSamplesAreRoundedAndClippedAsMPDDoes() {
        let one: Int32 = 1 << 28
        #expect(MadDecoder.s24(0) == 0)
        #expect(MadDecoder.s24(15) == 0 && MadDecoder.s24(16) == 1 && MadDecoder.s24(47) == 1)
        #expect(MadDecoder.s24(48) == 2)
        #expect(MadDecoder.s24(-16) == 0 && MadDecoder.s24(-17) == -1 && MadDecoder.s24(-48) == -1)
        #expect(MadDecoder.s24(-49) == -2)
        #expect(MadDecoder.s24(one / 2) == 1 << 22)
        #expect(MadDecoder.s24(one) == (1 << 23) - 1 && MadDecoder.s24(.max) == (1 << 23) - 1)
        #expect(MadDecoder.s24(-one) == -(1 << 23) && MadDecoder.s24(.min) == -(1 << 23))
    }

    /// The library's length comes from the first frame: the Info header's frame count times 1152 samples, in
    /// whole milliseconds, whether or not the file is played; a file without one is estimated from its size.
    @Test func theScanLengthIsTheInfoFrameCountOrTheFileSizeAtTheFirstBitRate() throws {
        let info = try Fixtures.lame("mad_len_info.mp3", rate: 44100, channels: 2, seconds: "2")
        let song = try MP3Format().readInfo(path: info)
        #expect(song.audioFormat == AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2))
        let frames = (2 * 44100 + 576 + 1151) / 1152  // the encoded samples, delay included, in whole frames
        let millisecondsPerFrame = 1152.0 * 1000 / 44100
        let length = try #require(song.durationMilliseconds)
        #expect(length >= UInt64(Double(frames) * millisecondsPerFrame) - 1)
        #expect(length <= UInt64(Double(frames + 1) * millisecondsPerFrame))
        let decoder = try MP3Format().makeDecoder(path: info)
        #expect(decoder.totalFrames == length * 44100 / 1000)
        let bare = try Fixtures.lame(
            "mad_len_bare.mp3", rate: 44100, channels: 2, seconds: "2", lameArguments: ["-t", "-b", "128"])
        let size = UInt64(try Fixtures.contents(bare).count)
        #expect(try MP3Format().readInfo(path: bare).durationMilliseconds == size * 1000 / (128_000 / 8))
    }
}
