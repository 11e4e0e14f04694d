// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Testing

@testable import Playback

/// The `normalize` filter's compressor, block by block, with gains worked out by hand from its rules.
@Suite struct NormalizeCompressorTests {
    private static func process(_ compressor: NormalizeCompressor, _ block: [Int16]) -> [Int16] {
        var samples = block
        samples.withUnsafeMutableBufferPointer { compressor.process($0.baseAddress!, count: $0.count) }
        return samples
    }

    @Test func theFirstBlockPassesUnchanged() {
        // The first block smooths from a gain of 0 (which ends below 1×, so 1×) and ramps from 1×.
        let block: [Int16] = (0..<100).map { Int16($0 * 10 - 500) }
        #expect(Self.process(NormalizeCompressor(), block) == block)
    }

    @Test func aQuietBlockRampsTheGainUpOverTheBlock() {
        let compressor = NormalizeCompressor()
        _ = Self.process(compressor, [Int16](repeating: 1000, count: 61))
        // Peak 1000: wanted 2^24 / 1000 = 16777; smoothed (1024 · 255 + 16777) >> 8 = 1085; over 61 samples the
        // gain rises by (1085 − 1024) / 61 = 1 per sample from 1024.
        let got = Self.process(compressor, [Int16](repeating: 1000, count: 61))
        let rising: [Int16] = (0..<61).map { (index: Int) -> Int16 in
            let gain: Int = 1024 + index
            return Int16((1000 * gain) >> 10)
        }
        #expect(got == rising)
        // Next block: from 1085 towards (1085 · 255 + 16777) >> 8 = 1146, again 1 per sample.
        let next = Self.process(compressor, [Int16](repeating: -1000, count: 61))
        let falling: [Int16] = (0..<61).map { (index: Int) -> Int16 in
            let gain: Int = 1085 + index
            return Int16((-1000 * gain) >> 10)
        }
        #expect(next == falling)
    }

    @Test func theGainNeverClipsTheLoudestSample() {
        let compressor = NormalizeCompressor()
        for _ in 0..<200 { _ = Self.process(compressor, [Int16](repeating: 300, count: 64)) }
        // After many quiet blocks the gain is high; a loud block lowers it at once, ramping down until its peak
        // (sample 10 here) and holding there.
        var loud = [Int16](repeating: 300, count: 64)
        loud[10] = 30000
        let got = Self.process(compressor, loud)
        #expect(got[10] <= 32767 && got[10] >= 29000)
        // After the peak, the gain is the one that puts the peak at full scale: 32767 · 2^10 / 30000 = 1118.
        #expect(got[20] == Int16((300 * 1118) >> 10))
        #expect(got[0] > got[20], "the ramp starts from the higher gain")
    }

    @Test func aLoudBlockHoldsTheGainDownForFourHundredBlocks() {
        let compressor = NormalizeCompressor()
        _ = Self.process(compressor, [Int16](repeating: 16384, count: 8))
        // The loud peak (16384, the target) keeps the wanted gain at 1× while it is in the history.
        for _ in 0..<(NormalizeCompressor.historyLength - 1) {
            #expect(Self.process(compressor, [Int16](repeating: 100, count: 8)) == [Int16](repeating: 100, count: 8))
        }
        // Then it falls out of the history and the quiet blocks are raised.
        #expect(Self.process(compressor, [Int16](repeating: 100, count: 8)).last! > 100)
    }

    @Test func resetForgetsTheHistory() {
        let compressor = NormalizeCompressor()
        for _ in 0..<50 { _ = Self.process(compressor, [Int16](repeating: 500, count: 32)) }
        let raised = Self.process(compressor, [Int16](repeating: 500, count: 32))
        compressor.reset()
        #expect(Self.process(compressor, [Int16](repeating: 500, count: 32)) == [Int16](repeating: 500, count: 32))
        #expect(raised.last! > 500)
    }

    @Test func samplesClampAtSixteenBits() {
        let compressor = NormalizeCompressor()
        for _ in 0..<300 { _ = Self.process(compressor, [Int16](repeating: 1, count: 4)) }
        let got = Self.process(compressor, [-32768, 1, 1, 1])
        // The minimum's magnitude is 32768: the gain drops to 32767 · 2^10 / 32768 = 1023 for the rest.
        #expect(got[0] == -32768)
        #expect(got[1...] == [0, 0, 0])
    }
}

/// The filter chain in `PlayerPCMConverter`: `mpd`'s order and its chunks.
@Suite struct FilterChainConversionTests {
    private static let stereo = AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2)

    private static func quietSong(frames: Int) -> [Int16] {
        (0..<(frames * 2)).map { Int16(truncatingIfNeeded: ($0 * 37) % 900 - 450) }
    }

    /// Converts `samples` in pieces of `pieces` frames; returns the 16-bit output.
    private static func run(
        _ samples: [Int16], pieces: [Int], filters: [PCMFilter], output: AudioFormat = stereo, softwareSteps: Int = 1024
    ) throws -> [Int16] {
        var converter = PlayerPCMConverter()
        try converter.configure(input: Self.stereo, output: output, maxFrames: 4096, filters: filters)
        var out: [Int16] = []
        var frame = 0
        for piece in pieces {
            let part = Array(samples[(frame * 2)..<((frame + piece) * 2)])
            let bytes = part.withUnsafeBytes {
                Array(converter.convert($0, frames: piece, replayGainSteps: 1024, softwareSteps: softwareSteps))
            }
            out += bytes.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
            frame += piece
        }
        return out
    }

    @Test func theCompressorTakesMpdsChunks() throws {
        // 4024 bytes: 1006 stereo 16-bit frames per mpd chunk.
        let song = Self.quietSong(frames: 4000)
        let whole = try Self.run(song, pieces: [4000], filters: [.normalize])
        #expect(try Self.run(song, pieces: [1006, 1006, 1006, 982], filters: [.normalize]) == whole)
        #expect(try Self.run(song, pieces: [2012, 1988], filters: [.normalize]) == whole)
        // Our chunks must hold whole ones (the decoder fills them so): a chunk's end ends a block.
        #expect(try Self.run(song, pieces: [700, 1300, 2000], filters: [.normalize]) != whole)
        // Blocks of another length give other gains.
        let compressor = NormalizeCompressor()
        var blocks = song
        blocks.withUnsafeMutableBufferPointer { buffer in
            for start in stride(from: 0, to: 8000, by: 1000) {
                compressor.process(buffer.baseAddress! + start, count: min(1000, 8000 - start))
            }
        }
        #expect(blocks != whole)
        var mpds = song
        let compressor2 = NormalizeCompressor()
        mpds.withUnsafeMutableBufferPointer { buffer in
            for start in stride(from: 0, to: 8000, by: 2012) {
                compressor2.process(buffer.baseAddress! + start, count: min(2012, 8000 - start))
            }
        }
        #expect(mpds == whole)
    }

    @Test func aRouteSwapsAndAddsChannels() throws {
        let table = try RouteTable(routes: "1>0, 0>1, 0>3")
        let four = AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 4)
        #expect(PlayerPCMConverter.filteredFormat(Self.stereo, widening16To24: false, filters: [.route(table)]) == four)
        let got = try Self.run([1, 2, 3, 4], pieces: [2], filters: [.route(table), .null], output: four)
        #expect(got == [2, 1, 0, 1, 4, 3, 0, 3])
    }

    @Test func theSoftwareVolumeFollowsTheChain() throws {
        // Normalize then the volume: the compressor sees the full-level samples.
        let song = Self.quietSong(frames: 3000)
        let normalized = try Self.run(song, pieces: [3000], filters: [.normalize])
        let halved = try Self.run(song, pieces: [3000], filters: [.normalize], softwareSteps: 512)
        var volume = PCMVolume()
        var want = normalized
        want.withUnsafeMutableBytes { buffer in
            volume.apply(
                buffer.baseAddress!, format: .s16, samples: normalized.count, volume: 512, into: buffer.baseAddress!)
        }
        #expect(halved == want)
    }

    @Test func aSoftwareMixerAfterTheChainWidensToTwentyFourBits() {
        // mpd's volume filter makes 16-bit samples 24-bit: the device gets 24 bits after `normalize`.
        let s24 = AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2)
        #expect(
            PlayerPCMConverter.filteredFormat(
                s24, widening16To24: false, filters: [.normalize], softwareVolume: true) == s24)
        #expect(
            PlayerPCMConverter.filteredFormat(Self.stereo, widening16To24: false, filters: [], softwareVolume: true)
                == Self.stereo, "without a chain the ReplayGain stage decides (see openStream)")
    }

    @Test func normalizeMakesSixteenBitsWithMpdsDither() throws {
        let format = AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2)
        #expect(
            PlayerPCMConverter.filteredFormat(format, widening16To24: false, filters: [.normalize])
                == AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        var converter = PlayerPCMConverter()
        try converter.configure(input: format, output: Self.stereo, maxFrames: 64, filters: [.normalize])
        let words: [Int32] = (0..<128).map { Int32(($0 * 7919) % 60000 - 30000) }
        let bytes = words.withUnsafeBytes {
            Array(converter.convert($0, frames: 64, replayGainSteps: 1024, softwareSteps: 1024))
        }
        var dither = PCMDither()
        let want = words.map { Int16(truncatingIfNeeded: dither.shift(Int64($0), bits: 24, by: 8)) }
        // The first block passes the compressor unchanged.
        #expect(bytes.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) } == want)
    }
}

/// The decoder's chunks hold whole chunks of `mpd`'s.
@Suite struct ChunkFramesTests {
    @Test(arguments: [(4, 2012), (8, 1006), (12, 670), (1, 8048), (2, 4024), (48, 166), (6, 1340)])
    func chunksHoldWholeMpdChunks(frameSize: Int, frames: Int) {
        let pipe = PlayerChunkPipe(bufferSize: 1 << 16, readers: 1)
        #expect(pipe.chunkFrames(frameSize: frameSize) == frames)
        #expect(frames % (PlayerChunkPipe.mpdChunkBytes / frameSize) == 0)
    }
}
