// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Model
import Testing

@testable import ALSA

/// DSD to an ALSA device: natively (DSD_U8), or as DSD over PCM with `dop`, through alsa-lib's `file` plugin.
@Suite(.serialized) struct ALSADoPTests {
    static let dsd64 = AudioFormat(sampleRate: 352_800, sampleFormat: .dsd, channels: 2)

    func recorder(_ path: String) throws -> ALSALocalConfiguration {
        try ALSALocalConfiguration(
            text: """
                pcm.record {
                    type file
                    slave.pcm { type null }
                    file "\(path)"
                    format "raw"
                }
                """)
    }

    func output(_ configuration: ALSALocalConfiguration, dop: Bool) throws -> ALSAOutput {
        try ALSAOutput(
            device: "record", bufferTime: 500_000, periodTime: 0, openMode: 0, dop: dop,
            localConfiguration: configuration)
    }

    /// DSD bytes: frame f, channel c.
    static func dsd(frames: Int, channels: Int = 2) -> [UInt8] {
        (0..<(frames * channels)).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ ($0 % channels) &* 101) }
    }

    /// What DSD over PCM makes of `bytes`: per 4 frames, two 32-bit words per channel, little-endian.
    static func dop(_ bytes: [UInt8], channels: Int = 2) -> [UInt8] {
        var out: [UInt8] = []
        for block in 0..<(bytes.count / (4 * channels)) {
            let base = block * 4 * channels
            for (marker, pair) in [(UInt8(0x05), 0), (UInt8(0xFA), 2)] {
                for channel in 0..<channels {
                    let first = bytes[base + pair * channels + channel]
                    let second = bytes[base + (pair + 1) * channels + channel]
                    out += [second, first, marker, 0xFF]
                }
            }
        }
        return out
    }

    @Test func dsdGoesNativelyToADeviceThatTakesIt() throws {
        _ = ALSATestLog.start()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let capture = scratch.file("native.raw")
        let output = try self.output(self.recorder(capture), dop: false)
        #expect(try output.open(Self.dsd64) == Self.dsd64)
        let bytes = Self.dsd(frames: 5000)
        try playAll(output, bytes)
        #expect(try output.drain())
        output.close()
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: capture))) == bytes)
    }

    @Test func dopPacksTwoDSDBytesPerChannelUnderAlternatingMarkers() throws {
        _ = ALSATestLog.start()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let capture = scratch.file("dop.raw")
        let output = try self.output(self.recorder(capture), dop: true)
        #expect(try output.open(Self.dsd64) == Self.dsd64)
        let bytes = Self.dsd(frames: 6003)
        // Pieces that split blocks of 4 frames: the rest waits for the next piece.
        try playAll(output, Array(bytes[0..<(2 * 3)]))
        try playAll(output, Array(bytes[(2 * 3)..<(2 * 1001)]))
        try playAll(output, Array(bytes[(2 * 1001)...]))
        #expect(output.delayFrames >= 0)
        #expect(try output.drain())
        output.close()
        let written = Array(try Data(contentsOf: URL(fileURLWithPath: capture)))
        // 6000 frames make 3000 DoP frames; the last 3 frames wait for a block that never comes (as in mpd).
        #expect(written.count == 3000 * 2 * 4)
        #expect(written == Self.dop(bytes))
    }

    @Test func pcmIsUntouchedWithDoPOn() throws {
        _ = ALSATestLog.start()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let capture = scratch.file("pcm.raw")
        let output = try self.output(self.recorder(capture), dop: true)
        let cd = AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2)
        #expect(try output.open(cd) == cd)
        let bytes = rampSamples(frames: 3000).withUnsafeBytes { Array($0) }
        try playAll(output, bytes)
        #expect(try output.drain())
        output.close()
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: capture))) == bytes)
    }
}
