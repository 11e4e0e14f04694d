// SPDX-License-Identifier: GPL-3.0-or-later

import Chromaprint
import Formats
import Foundation
import Input
import Model
import Testing

@testable import Playback

/// A decoder of a melody (notes a third apart, 0.4 s each) in 16-bit stereo, `frames` frames long, that fails
/// after `failAt` frames if set; it counts the frames it was asked for.
private final class MelodyDecoder: Decoder {
    let format: AudioFormat
    let totalFrames: UInt64?
    let failAt: Int?
    private(set) var position = 0

    init(frames: Int, rate: Int = 44100, failAt: Int? = nil) {
        self.format = AudioFormat(sampleRate: rate, sampleFormat: .s16, channels: 2)
        self.totalFrames = UInt64(frames)
        self.failAt = failAt
    }

    static func sample(_ frame: Int, rate: Int) -> Int16 {
        let notes: [Double] = [220, 277.18, 329.63, 440, 369.99, 293.66, 246.94, 392]
        let time = Double(frame) / Double(rate)
        let note = notes[Int(time / 0.4) % notes.count]
        return Int16(12_000 * sin(2 * Double.pi * note * time) + 6_000 * sin(3 * Double.pi * note * time))
    }

    func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        if let failAt = self.failAt, self.position >= failAt { throw .decoder("broken frame") }
        var frames = min(buffer.count / 4, Int(self.totalFrames!) - self.position)
        if let failAt = self.failAt { frames = min(frames, failAt - self.position) }
        for frame in 0..<frames {
            let value = Self.sample(self.position + frame, rate: self.format.sampleRate)
            buffer.storeBytes(of: value, toByteOffset: frame * 4, as: Int16.self)
            buffer.storeBytes(of: value / 2, toByteOffset: frame * 4 + 2, as: Int16.self)
        }
        self.position += frames
        return frames
    }

    func seek(toFrame frame: UInt64) throws(FormatError) -> UInt64 { frame }
}

@Suite struct ChromaprintDecoderClientTests {
    /// libchromaprint's own fingerprint of the first `frames` frames of the melody.
    private func reference(frames: Int, rate: Int = 44100) throws -> String {
        let context = try ChromaprintContext()
        try context.start(sampleRate: rate, channels: 2)
        var samples: [Int16] = []
        samples.reserveCapacity(frames * 2)
        for frame in 0..<frames {
            let value = MelodyDecoder.sample(frame, rate: rate)
            samples.append(value)
            samples.append(value / 2)
        }
        try context.feed(samples)
        try context.finish()
        return try context.fingerprint()
    }

    @Test func shortSongIsFedWhole() throws {
        let decoder = MelodyDecoder(frames: 44100 * 7)
        let fingerprint = try ChromaprintDecoderClient.fingerprint(decoder, cancellation: nil)
        #expect(fingerprint == (try self.reference(frames: 44100 * 7)))
        #expect(fingerprint.hasPrefix("AQAA") && fingerprint != "AQAAAA")
    }

    /// Only the first two minutes are decoded and fed (mpd's `remaining_bytes`).
    @Test func twoMinutesAtMost() throws {
        let rate = 8000
        let decoder = MelodyDecoder(frames: rate * 150, rate: rate)
        let fingerprint = try ChromaprintDecoderClient.fingerprint(decoder, cancellation: nil)
        #expect(decoder.position == rate * 120)
        #expect(fingerprint == (try self.reference(frames: rate * 120, rate: rate)))
    }

    /// A decoding error ends the song: what came before is fingerprinted (mpd's plugins stop at one).
    @Test func decodingErrorEndsTheSong() throws {
        let decoder = MelodyDecoder(frames: 44100 * 10, failAt: 44100 * 6)
        let fingerprint = try ChromaprintDecoderClient.fingerprint(decoder, cancellation: nil)
        #expect(fingerprint == (try self.reference(frames: 44100 * 6)))
    }

    /// A cancelled computation stops decoding at once.
    @Test func cancellationStopsDecoding() throws {
        let decoder = MelodyDecoder(frames: 44100 * 60)
        let cancellation = InputCancellation()
        cancellation.cancel()
        _ = try ChromaprintDecoderClient.fingerprint(decoder, cancellation: cancellation)
        #expect(decoder.position == 0)
    }

    /// mpd's decoder suffix of a URI: after the last dot anywhere, unless it is the first or last character.
    @Test func suffixes() {
        #expect(ChromaprintDecoderClient.suffix("a/b.flac") == "flac")
        #expect(ChromaprintDecoderClient.suffix("a.b/c") == "b/c")
        #expect(ChromaprintDecoderClient.suffix("song.tar.MP3") == "MP3")
        #expect(ChromaprintDecoderClient.suffix(".flac") == nil)
        #expect(ChromaprintDecoderClient.suffix("song.") == nil)
        #expect(ChromaprintDecoderClient.suffix("song") == nil)
        #expect(ChromaprintDecoderClient.suffix("") == nil)
    }

    @Test func missingFileIsASystemError() {
        #expect(
            throws: FingerprintError(.system, "Failed to open '/nonexistent/x.flac': No such file or directory")
        ) {
            try ChromaprintDecoderClient.fingerprint(
                file: "/nonexistent/x.flac", uri: "x.flac", registry: FormatRegistry([]),
                cancellation: InputCancellation())
        }
        // No suffix: no plugin is tried, the file is not even opened.
        #expect(throws: FingerprintError.decodingFailed) {
            try ChromaprintDecoderClient.fingerprint(
                file: "/nonexistent/x", uri: "x", registry: FormatRegistry([]), cancellation: InputCancellation())
        }
    }
}

/// mpd's conversion of each sample format to 16 bits.
@Suite struct PCMToS16Tests {
    private func convert<T>(_ input: [T], format: SampleFormat, channels: Int = 1, into converter: inout PCMToS16)
        -> [Int16]
    {
        input.withUnsafeBytes { bytes in converter.convert(bytes) { Array($0) } }
    }

    private func convert<T>(_ input: [T], format: SampleFormat) -> [Int16] {
        var converter = PCMToS16(from: AudioFormat(sampleRate: 44100, sampleFormat: format, channels: 1))
        return self.convert(input, format: format, into: &converter)
    }

    @Test func sixteenBitsPassThrough() {
        #expect(self.convert([Int16(1), -2, .max, .min], format: .s16) == [1, -2, .max, .min])
    }

    @Test func eightBitsShiftUp() {
        #expect(self.convert([Int8(1), -1, .max, .min, 0], format: .s8) == [256, -256, 32512, -32768, 0])
    }

    /// Scaled by 32768 and truncated towards zero, clipped; NaN and out-of-range values as x86 converts them.
    @Test func floatsTruncate() {
        let input: [Float] = [1.5 / 32768, -1.5 / 32768, 0.99999, -1, 1, 2, -2, .nan, 1e10]
        #expect(self.convert(input, format: .float) == [1, -1, 32767, -32768, 32767, 32767, -32768, -32768, -32768])
    }

    /// mpd's dither, sample by sample from a fresh state (worked out by hand from `PcmDither::Dither`): error
    /// feedback plus the low bits of a linear congruential generator, clipped to the source range.
    @Test func twentyFourBitsDither() {
        let input: [Int32] = [0x12_3456, -0x12_3456, 0x7F_FFFF, -0x80_0000, 0, 1, 200, -200]
        #expect(self.convert(input, format: .s24) == [4661, -4661, 32767, -32768, 0, 1, 0, 0])
    }

    @Test func thirtyTwoBitsDither() {
        let input: [Int32] = [0x1234_5678, -0x1234_5678, .max, .min, 0, 1, 40000, -40000]
        #expect(self.convert(input, format: .s32) == [4661, -4662, 32767, -32768, 1, -1, 1, -1])
    }

    /// The dither's state carries from one call to the next, as in mpd's converter.
    @Test func ditherStateCarriesOver() {
        let input: [Int32] = (0..<1000).map { Int32($0 * 1237 % 65536 - 32768) * 97 }
        let whole = self.convert(input, format: .s24)
        var converter = PCMToS16(from: AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 1))
        let first = self.convert(Array(input[0..<333]), format: .s24, into: &converter)
        let rest = self.convert(Array(input[333...]), format: .s24, into: &converter)
        #expect(first + rest == whole)
    }

    /// DSD goes through dsd2pcm as 24-bit integers, one sample per byte: once the filter holds the silence
    /// pattern (12 bytes), silence, give or take the noise-shaped dither's two last bits.
    @Test func dsdSilence() {
        let input = [UInt8](repeating: 0x69, count: 4096)
        let output = self.convert(input, format: .dsd)
        #expect(output.count == 4096)
        #expect(output.dropFirst(12).allSatisfy { abs(Int($0)) <= 2 })
    }
}
