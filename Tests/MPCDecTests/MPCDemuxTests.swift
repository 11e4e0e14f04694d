// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Input
import MPCDec
import Testing

enum Sample {
    static let directory: String = {
        let path = NSTemporaryDirectory() + "fermata-mpcdec-\(getpid())"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()
    private static let lock = NSLock()

    static func run(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "\(tool) \(arguments)")
    }

    /// A sine sweep encoded with Debian's mpcenc (SV8), made once.
    static func mpc(rate: Int, channels: Int, seconds: String) throws -> String {
        self.lock.lock()
        defer { self.lock.unlock() }
        let path = self.directory + "/s_\(rate)_\(channels)_\(seconds).mpc"
        if FileManager.default.fileExists(atPath: path) { return path }
        let wave = path + ".wav"
        try self.run(
            "/usr/bin/sox",
            [
                "-R", "-D", "-n", "-r", "\(rate)", "-c", "\(channels)", "-b", "16", wave, "synth", seconds, "sine",
                "200-2000", "vol", "0.5",
            ])
        defer { try? FileManager.default.removeItem(atPath: wave) }
        try self.run("/usr/bin/mpcenc", ["--silent", wave, path + ".tmp.mpc"])
        try FileManager.default.moveItem(atPath: path + ".tmp.mpc", toPath: path)
        return path
    }

    static func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

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
