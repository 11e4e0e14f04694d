// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import TestTools
import Testing
import WavPack

/// WavPack files encoded at test time with `wavpack` (installed by the project's install script) from WAVs
/// written here, in one temporary directory per test process.
enum Encoded {
    static let made = MadeFiles("wavpack")

    static func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

    /// Interleaved samples of `bits` (8: unsigned in the WAV) for `frames` frames: a ramp per channel.
    static func sample(_ frame: Int, _ channel: Int, bits: Int) -> Int32 {
        let range = 1 << (bits - 1)
        return Int32(((frame * 37 + channel * 1001) % (2 * range)) - range)
    }

    /// A WAV of the ramp, then `wavpack` with `flags`: the .wv path (a .wvc beside it with `-c`).
    static func file(bits: Int, channels: Int, frames: Int, float: Bool = false, flags: [String] = []) throws -> String
    {
        let name = "\(bits)-\(channels)-\(frames)-\(float)-\(flags.joined())"
        let wave = try self.made.file(
            "\(name).wav", bytes: self.wave(bits: bits, channels: channels, frames: frames, float: float))
        let final = self.made.directory + "/\(name).wv"
        return try self.made.file("\(name).wv") { path in
            try runTool("/usr/bin/wavpack", ["-q", "-y"] + flags + [wave, "-o", path])
            // `-c` writes the correction file beside the partial one: move it beside the final name first.
            if flags.contains("-c") { try renameFile(path + "c", to: final + "c") }
        }
    }

    /// A WAV of the ramp.
    static func wave(bits: Int, channels: Int, frames: Int, float: Bool) -> [UInt8] {
        var data: [UInt8] = []
        for frame in 0..<frames {
            for channel in 0..<channels {
                let value = self.sample(frame, channel, bits: bits)
                if float {
                    data += self.le32(Int((Float(value) / Float(1 << (bits - 1))).bitPattern))
                } else if bits == 8 {
                    data.append(UInt8(truncatingIfNeeded: value + 128))
                } else {
                    data += self.le32(Int(value)).prefix(bits / 8)
                }
            }
        }
        let block = channels * bits / 8
        func le16(_ value: Int) -> [UInt8] { Array(self.le32(value).prefix(2)) }
        let fmt =
            Array("fmt ".utf8) + self.le32(16) + le16(float ? 3 : 1) + le16(channels) + self.le32(44100)
            + self.le32(44100 * block) + le16(block) + le16(bits)
        let body = Array("WAVE".utf8) + fmt + Array("data".utf8) + self.le32(data.count) + data
        return Array("RIFF".utf8) + self.le32(body.count) + body
    }

    static func unpackAll(_ context: WavPackContext) -> [Int32] {
        var all: [Int32] = []
        var buffer = [Int32](repeating: 0, count: 1000 * context.channels)
        while true {
            let frames = buffer.withUnsafeMutableBufferPointer { context.unpack(into: $0) }
            if frames == 0 { return all }
            all += buffer.prefix(frames * context.channels)
        }
    }
}

@Suite struct WavPackContextTests {
    @Test(arguments: [(8, 1), (16, 2), (24, 2), (32, 2), (16, 6)])
    func integerStreamsAreLossless(_ bits: Int, _ channels: Int) throws {
        let path = try Encoded.file(bits: bits, channels: channels, frames: 30000)
        let context = try WavPackContext(input: try FileInputStream(path: path))
        #expect(context.sampleRate == 44100 && context.channels == channels && context.bytesPerSample == bits / 8)
        #expect(!context.isFloat && !context.isDSD && context.totalSamples == 30000)
        let samples = Encoded.unpackAll(context)
        #expect(samples.count == 30000 * channels)
        let want = (0..<30000).flatMap { frame in (0..<channels).map { Encoded.sample(frame, $0, bits: bits) } }
        #expect(samples == want)
    }

    @Test func floatStreamsAreNormalised() throws {
        let path = try Encoded.file(bits: 32, channels: 1, frames: 2000, float: true)
        let context = try WavPackContext(input: try FileInputStream(path: path), flags: .normalize)
        #expect(context.isFloat && context.bytesPerSample == 4)
        let samples = Encoded.unpackAll(context).map { Float(bitPattern: UInt32(bitPattern: $0)) }
        let want = (0..<2000).map { Float(Encoded.sample($0, 0, bits: 32)) / Float(1 << 31) }
        #expect(samples == want)
    }

    @Test func seeksToTheExactSample() throws {
        let path = try Encoded.file(bits: 16, channels: 2, frames: 100_000)
        let context = try WavPackContext(input: try FileInputStream(path: path))
        for target in [77_777, 3, 99_999, 50_000] {
            try context.seek(toSample: Int64(target))
            var buffer = [Int32](repeating: 0, count: 2)
            #expect(buffer.withUnsafeMutableBufferPointer { context.unpack(into: $0) } == 1)
            #expect(buffer == [Encoded.sample(target, 0, bits: 16), Encoded.sample(target, 1, bits: 16)])
        }
    }

    /// A hybrid file decodes lossily alone and losslessly with its correction stream.
    @Test func correctionStreamMakesHybridLossless() throws {
        let path = try Encoded.file(bits: 16, channels: 2, frames: 20000, flags: ["-b2.5", "-c"])
        let want = (0..<20000).flatMap { frame in (0..<2).map { Encoded.sample(frame, $0, bits: 16) } }
        let lossy = try WavPackContext(input: try FileInputStream(path: path))
        #expect(!lossy.usesCorrection)
        #expect(Encoded.unpackAll(lossy) != want)
        let lossless = try WavPackContext(
            input: try FileInputStream(path: path), correction: try FileInputStream(path: path + "c"))
        #expect(lossless.usesCorrection)
        #expect(Encoded.unpackAll(lossless) == want)
    }

    @Test func truncatedStreamsEndEarly() throws {
        let bytes = try fileBytes(try Encoded.file(bits: 16, channels: 2, frames: 100_000))
        let context = try WavPackContext(input: MemoryInputStream(Array(bytes.prefix(bytes.count / 2))))
        #expect(context.totalSamples == 100_000)
        let count = Encoded.unpackAll(context).count
        #expect(count > 0 && count < 100_000 * 2)
    }

    @Test(arguments: [[UInt8](), Array("wvpk".utf8), Array(repeating: 0x5A, count: 4096)])
    func garbageIsRefused(_ bytes: [UInt8]) {
        #expect(throws: WavPackError.self) { try WavPackContext(input: MemoryInputStream(bytes)) }
    }
}
