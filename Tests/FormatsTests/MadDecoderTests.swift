// SPDX-License-Identifier: GPL-3.0-or-later

import Input
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

    /// Every sample `decoder` decodes, interleaved.
    static func decodeAll(_ decoder: MadDecoder) throws -> [Int32] {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1152 * 8, alignment: 8)
        defer { buffer.deallocate() }
        var samples: [Int32] = []
        while case let frames = try decoder.decode(into: buffer), frames > 0 {
            samples += (0..<(frames * decoder.format.channels)).map {
                buffer.load(fromByteOffset: $0 * 4, as: Int32.self)
            }
        }
        return samples
    }

    /// Where each MPEG frame of a constant-bit-rate MPEG-1 layer III stream starts (no leading tag).
    static func frameOffsets(_ bytes: [UInt8]) -> [Int] {
        let bitRates = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
        var offsets: [Int] = []
        var offset = 0
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF, bytes[offset + 1] & 0xE0 == 0xE0 {
            let bitRate = bitRates[min(14, Int(bytes[offset + 2] >> 4))] * 1000
            let length = 144 * bitRate / 44100 + Int((bytes[offset + 2] >> 1) & 1)
            guard length > 0 else { break }
            offsets.append(offset)
            offset += length
        }
        return offsets
    }

    /// mpd's plugin submits the ReplayGain and MixRamp of every ID3 tag it meets, not only the leading one, and
    /// ends its chunk there: the samples before the tag keep the gain they had, those after it take the new one.
    /// The decoder ends a `decode(into:)` at the tag and shows the new gain after the next one.
    @Test func aLaterID3TagsReplayGainAndMixRampApplyFromTheSamplesAfterIt() throws {
        let plain = try Fixtures.lame(
            "mad_midtag_plain.mp3", rate: 44100, channels: 2, seconds: "3", lameArguments: ["--noreplaygain"])
        let bytes = try Fixtures.contents(plain)
        let offsets = Self.frameOffsets(bytes)
        try #require(offsets.count > 100)
        let tag = TagBytes.id3v24([
            TagBytes.textFrame("TXXX", ["REPLAYGAIN_TRACK_GAIN", "-6.00 dB"]),
            TagBytes.textFrame("TXXX", ["MIXRAMP_END", "-20.00 2.00"]),
        ])
        // After the Info frame and 39 frames of audio.
        let path = try Fixtures.bytes(
            "mad_midtag.mp3", Array(bytes[..<offsets[40]]) + tag + Array(bytes[offsets[40]...]))
        let decoder = try MadDecoder(input: FileInputStream(path: path))
        #expect(decoder.replayGain == nil && decoder.mixRampStart == nil && decoder.mixRampEnd == nil)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1000 * 8, alignment: 8)
        defer { buffer.deallocate() }
        var total = 0
        var changedAt: Int?
        while true {
            let frames = try decoder.decode(into: buffer)
            if frames == 0 { break }
            if changedAt == nil && decoder.replayGain != nil { changedAt = total }
            total += frames
        }
        // 39 frames of 1152 samples, less the encoder's and libmad's delay (576 + 529).
        #expect(changedAt == 39 * 1152 - 1105)
        #expect(decoder.replayGain == ReplayGainInfo(trackGain: -6))
        #expect(decoder.mixRampStart == nil && decoder.mixRampEnd == "-20.00 2.00")
    }

    /// mpd's plugin submits each frame's samples interleaved by the frame's own channel count: a mono frame in a
    /// stereo stream (opened at the first frame's 2 channels) gives 576 stereo frames, its samples taken in turn
    /// as left and right.
    @Test func aMonoFrameInAStereoStreamPlaysAsHalfAsManyStereoFrames() throws {
        let stereo = try Fixtures.contents(
            Fixtures.lame("mad_mix_stereo.mp3", rate: 44100, channels: 2, seconds: "0.5", lameArguments: ["-t"]))
        let mono = try Fixtures.contents(
            Fixtures.lame("mad_mix_mono.mp3", rate: 44100, channels: 1, seconds: "0.5", lameArguments: ["-t"]))
        let path = try Fixtures.bytes("mad_mix.mp3", stereo + mono)
        let decoder = try MadDecoder(input: FileInputStream(path: path))
        #expect(decoder.format.channels == 2)
        let samples = try Self.decodeAll(decoder)
        let stereoFrames = Self.frameOffsets(stereo).count
        let monoFrames = Self.frameOffsets(mono).count
        #expect(samples.count == 2 * 1152 * stereoFrames + 1152 * monoFrames)
        // The mono part decoded alone (a mono stream) gives the same samples, in the same order, from its third
        // frame on (before that libmad's synthesis filter still holds the stereo part's last frames).
        let alone = try MadDecoder(input: FileInputStream(path: try Fixtures.bytes("mad_mix_mono_alone.mp3", mono)))
        #expect(alone.format.channels == 1)
        let monoSamples = try Self.decodeAll(alone)
        let offset = 2 * 1152 * stereoFrames
        #expect(samples[(offset + 3 * 1152)...].elementsEqual(monoSamples[(3 * 1152)...]))
    }
}
