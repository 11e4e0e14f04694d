// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import MPCDec
import TestTools
import Testing

enum Sample {
    static let made = MadeFiles("mpcdec")

    /// A sine sweep encoded with Debian's mpcenc (SV8), made once.
    static func mpc(rate: Int, channels: Int, seconds: String) throws -> String {
        try self.made.file("s_\(rate)_\(channels)_\(seconds).mpc") { path in
            let wave = path + ".wav"
            try makeSweep(at: wave, rate: rate, channels: channels, seconds: seconds)
            defer { removeFile(wave) }
            try runTool("/usr/bin/mpcenc", ["--silent", wave, path])
        }
    }

    static func bytes(_ path: String) throws -> [UInt8] { try fileBytes(path) }

    /// Every sample of the stream, from where the demuxer is.
    static func decodeAll(_ demux: MPCDemux) throws -> [Float] {
        var all: [Float] = []
        while let frame = try demux.decodeFrame() {
            demux.withSamples { all.append(contentsOf: $0) }
            #expect(frame.samples * demux.info.channels == demux.withSamples { $0.count })
        }
        return all
    }
}

@Suite struct MPCDemuxTests {
    @Test(arguments: [(44100, 2, "1.5"), (48000, 1, "0.7"), (32000, 2, "1.1")])
    func streamInfoMatchesTheEncodedFile(rate: Int, channels: Int, seconds: String) throws {
        let demux = try MPCDemux(
            input: try FileInputStream(
                path: try Sample.mpc(
                    rate: rate, channels: channels,
                    seconds: seconds)))
        #expect(demux.info.sampleRate == rate)
        #expect(demux.info.channels == channels)
        #expect(demux.info.streamVersion == 8)
        let frames = Int((Double(seconds)! * Double(rate)).rounded())
        #expect(demux.info.lengthSamples == Int64(frames))
        #expect(abs(demux.info.lengthSeconds - Double(seconds)!) < 0.001)
    }

    @Test func decodingYieldsExactlyTheLengthInSamples() throws {
        let demux = try MPCDemux(
            input: try FileInputStream(
                path: try Sample.mpc(
                    rate: 44100, channels: 2,
                    seconds: "1.5")))
        let samples = try Sample.decodeAll(demux)
        #expect(samples.count == Int(demux.info.lengthSamples) * 2)
        #expect(samples.contains { abs($0) > 0.3 })
        #expect(try demux.decodeFrame() == nil)
    }

    @Test(arguments: [0, 1, 1151, 1152, 12345, 44100, 66149])
    func seekingIsSampleAccurate(target: Int) throws {
        let path = try Sample.mpc(rate: 44100, channels: 2, seconds: "1.5")
        let whole = try Sample.decodeAll(try MPCDemux(input: try FileInputStream(path: path)))
        let demux = try MPCDemux(input: try FileInputStream(path: path))
        _ = try demux.decodeFrame()
        try demux.seek(toSample: UInt64(target))
        let rest = try Sample.decodeAll(demux)
        #expect(rest.count == whole.count - target * 2)
        #expect(Array(rest.prefix(4096)) == Array(whole[(target * 2)...].prefix(4096)))
    }

    @Test func readsThroughMemoryStreams() throws {
        let bytes = try Sample.bytes(try Sample.mpc(rate: 48000, channels: 1, seconds: "0.7"))
        let demux = try MPCDemux(input: MemoryInputStream(bytes))
        #expect(demux.info.sampleRate == 48000)
        #expect(try Sample.decodeAll(demux).count == 33600)
    }

    @Test func garbageAndEmptyStreamsAreRejected() throws {
        var generator = SystemRandomNumberGenerator()
        let garbage = (0..<4000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        for bytes in [[], [UInt8]("MPCK".utf8), garbage] {
            #expect(throws: MPCError.notMusepack) { try MPCDemux(input: MemoryInputStream(bytes)) }
        }
    }

    @Test func everyTruncationEitherThrowsOrDecodes() throws {
        let bytes = try Sample.bytes(try Sample.mpc(rate: 44100, channels: 2, seconds: "0.5"))
        for length in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 97)) {
            guard let demux = try? MPCDemux(input: MemoryInputStream(Array(bytes[..<length]))) else { continue }
            #expect(demux.info.channels == 2)
            _ = try? Sample.decodeAll(demux)
        }
    }
}
