// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Testing

@testable import Playback

/// Where the filter chain sits among the conversions, as in `mpd`: `audio_output_format` before it (on the
/// decoder's side), the output's own format after it, and DSD through it.
@Suite struct FilterChainOrderTests {
    private static let stereo = AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2)

    @Test func audioOutputFormatConvertsBeforeTheChain() throws {
        // The song is made mono first, then the route fills two channels from it (the first from a channel the
        // mono stream lacks: silence). Converting after the chain would open the device in mono.
        var configuration = OutputConfiguration(name: "out", type: "null")
        configuration.filters = [.route(try RouteTable(routes: "1>0, 0>1"))]
        let capture = CaptureOutput(sync: false)
        let harness = try PlayerHarness(outputs: [(configuration, capture, nil)], audioOutputFormat: "*:*:1")
        harness.withPlayer { $0.play(fakeSong(1, base: 100, frames: 3000), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.finished(token: 1)) })
        #expect(capture.opens == [Self.stereo])
        // Both channels (samples16 reads channel 0 only).
        let samples = capture.samples16(channels: 1)
        #expect(samples.count == 6000)
        let want: [Int16] = (0..<3000).flatMap { (frame: Int) -> [Int16] in [0, Int16(100 + frame)] }
        #expect(
            samples == want, "first difference at \(zip(samples, want).map { $0 == $1 }.firstIndex(of: false) ?? -1)")
    }

    @Test func theOutputsFormatConvertsAfterTheChain() throws {
        // The route makes three channels, which the output's format then averages into one.
        var configuration = OutputConfiguration(
            name: "out", type: "null", format: try AudioFormatMask.parse("*:*:1", mask: true))
        configuration.filters = [.route(try RouteTable(routes: "0>0, 0>1, 0>2"))]
        let capture = CaptureOutput(sync: false)
        let harness = try PlayerHarness(outputs: [(configuration, capture, nil)])
        harness.withPlayer { $0.play(fakeSong(1, base: 100, frames: 3000), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.finished(token: 1)) })
        #expect(capture.opens == [AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 1)])
        #expect(capture.samples16(channels: 1) == (0..<3000).map { Int16(100 + $0) })
    }

    @Test func theDecoderHandsOutWholeMpdChunksOfTheConvertedFormat() throws {
        // 16 to 24 bits: 503 frames per mpd chunk of 24-bit stereo; a pipe chunk of 8192 bytes takes two.
        let conversion = try PlayerDecoderConversion(
            input: Self.stereo, output: AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2),
            chunkBytes: 8192, resampler: .standard)
        #expect(conversion.inputFrames == 2048)
        let target = UnsafeMutableRawBufferPointer.allocate(byteCount: 8192, alignment: 16)
        defer { target.deallocate() }
        var handedOut: [Int32] = []
        for piece in 0..<3 {
            let frames = 700
            for frame in 0..<frames {
                for channel in 0..<2 {
                    conversion.scratch.storeBytes(
                        of: Int16(piece * frames + frame), toByteOffset: (frame * 2 + channel) * 2, as: Int16.self)
                }
            }
            conversion.decode(frames)
            if conversion.stagedFrames >= 1006 {
                #expect(conversion.take(into: target, capacityFrames: 1006) == 1006)
                handedOut += (0..<2012).map { target.load(fromByteOffset: $0 * 4, as: Int32.self) }
            }
        }
        #expect(conversion.stagedFrames == 2100 - 2012)
        #expect(conversion.outputFrame == 2012)
        // 16-bit samples become 24-bit ones by a shift, frame after frame.
        let want: [Int32] = (0..<2012).flatMap { (frame: Int) -> [Int32] in [Int32(frame) << 8, Int32(frame) << 8] }
        #expect(handedOut == want)
        conversion.reset(songFrame: 44100)
        #expect(conversion.stagedFrames == 0)
        #expect(conversion.outputFrame == 44100)
    }

    @Test func theDecoderConversionCountsTimeAtTheConvertedRate() throws {
        let conversion = try PlayerDecoderConversion(
            input: Self.stereo, output: AudioFormat(sampleRate: 48000, sampleFormat: .s16, channels: 2),
            chunkBytes: 8192, resampler: .standard)
        #expect(conversion.outputFrames(44100) == 48000)
        conversion.reset(songFrame: 22050)
        #expect(conversion.outputFrame == 24000)
        // The chunks count in the song's frames again (status shows the song's format and its time).
        #expect(conversion.songFrame(ofOutputFrame: 24000) == 22050)
    }

    /// `frames` frames of two-channel DSD: a 0x96 pattern on the left, 0x0F on the right.
    private static func dsd(frames: Int) -> [UInt8] {
        (0..<frames).flatMap { [UInt8(0x96 ^ ($0 & 3)), UInt8(0x0F)] }
    }

    @Test func dsdIsMadePCMBeforeNormalize() throws {
        let dsd = AudioFormat(sampleRate: 352800, sampleFormat: .dsd, channels: 2)
        let pcm = AudioFormat(sampleRate: 352800, sampleFormat: .s16, channels: 2)
        #expect(PlayerPCMConverter.filteredFormat(dsd, widening16To24: false, filters: [.normalize]) == pcm)
        var converter = PlayerPCMConverter()
        try converter.configure(input: dsd, output: pcm, maxFrames: 64, filters: [.normalize])
        let bytes = Self.dsd(frames: 64)
        let got = bytes.withUnsafeBytes {
            Array(converter.convert($0, frames: 64, replayGainSteps: 1024, softwareSteps: 1024))
        }
        // mpd: DSD to 24-bit PCM, dithered to 16 bits; the compressor's first block passes unchanged.
        let translator = DSDToPCM()
        var floats = [Float](repeating: 0, count: 128)
        bytes.withUnsafeBytes { source in
            floats.withUnsafeMutableBufferPointer {
                translator.translate(source, frames: 64, channels: 2, integer24: true, into: $0.baseAddress!)
            }
        }
        var dither = PCMDither()
        let want = floats.map {
            Int16(truncatingIfNeeded: dither.shift(Int64(Int32($0 * 8_388_608)), bits: 24, by: 8))
        }
        #expect(got.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) } == want)
        #expect(want.contains { $0 != 0 })
    }

    @Test func aRouteMovesDSDBytes() throws {
        let dsd = AudioFormat(sampleRate: 352800, sampleFormat: .dsd, channels: 2)
        let table = try RouteTable(routes: "1>0, 0>1, 0>3")
        let four = AudioFormat(sampleRate: 352800, sampleFormat: .dsd, channels: 4)
        #expect(PlayerPCMConverter.filteredFormat(dsd, widening16To24: false, filters: [.route(table)]) == four)
        var converter = PlayerPCMConverter()
        try converter.configure(input: dsd, output: four, maxFrames: 8, filters: [.route(table)])
        let bytes = Self.dsd(frames: 2)
        let got = bytes.withUnsafeBytes {
            Array(converter.convert($0, frames: 2, replayGainSteps: 512, softwareSteps: 512))
        }
        // Volumes leave DSD alone; a channel without a source is DSD's silence.
        #expect(got == [0x0F, 0x96, 0x69, 0x96, 0x0F, 0x97, 0x69, 0x97])
    }
}
