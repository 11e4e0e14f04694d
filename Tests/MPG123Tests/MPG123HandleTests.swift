// SPDX-License-Identifier: GPL-3.0-or-later

import MPG123
import TestTools
import Testing

enum Sample {
    static let made = MadeFiles("mpg123")

    /// A LAME-encoded sine sweep, made once.
    static func mp3(rate: Int, channels: Int, seconds: String, lame: [String] = []) throws -> String {
        try self.made.file("s_\(rate)_\(channels)_\(seconds)_\(lame.joined()).mp3") { path in
            let wave = path + ".wav"
            try makeSweep(at: wave, rate: rate, channels: channels, seconds: seconds)
            defer { removeFile(wave) }
            try runTool("/usr/bin/lame", ["--quiet"] + lame + [wave, path])
        }
    }
}

@Suite struct MPG123HandleTests {
    @Test func openingAMissingFileThrowsWithMessage() throws {
        let handle = try MPG123Handle()
        #expect {
            try handle.open(path: "/nonexistent.mp3")
        } throws: { error in
            guard let error = error as? MPG123Error else { return false }
            return error.function == "mpg123_open" && !error.message.isEmpty
        }
    }

    @Test(arguments: [
        (44100, 2, [String](), MPEGVersion.mpeg1, BitRateMode.constant, 128),
        (22050, 1, ["-V", "5"], MPEGVersion.mpeg2, BitRateMode.variable, -1),
        (8000, 2, ["-b", "24"], MPEGVersion.mpeg25, BitRateMode.constant, 24),
    ])
    func formatLengthAndFrameInfo(
        _ rate: Int, _ channels: Int, _ lame: [String], _ version: MPEGVersion, _ mode: BitRateMode, _ bitRate: Int
    ) throws {
        let path = try Sample.mp3(rate: rate, channels: channels, seconds: "1", lame: lame)
        let handle = try MPG123Handle()
        try handle.open(path: path)
        #expect(try handle.format() == MPG123OutputFormat(sampleRate: rate, channels: channels, encoding: .signed16))
        #expect(handle.length() == Int64(rate))  // gapless, from the LAME header
        let info = try handle.frameInfo()
        #expect(info.version == version)
        #expect(info.layer == 3)
        #expect(info.sampleRate == rate)
        #expect(info.channels == channels)
        #expect(info.bitRateMode == mode)
        if bitRate > 0 { #expect(info.bitRate == bitRate) }
        let encoder = handle.encoderInfo()
        #expect(encoder.delay == 576)
        #expect(encoder.padding != nil)
    }

    @Test func scanGivesExactLengthWithoutInfoHeader() throws {
        let path = try Sample.mp3(rate: 44100, channels: 2, seconds: "2", lame: ["-t", "-V", "2"])
        let handle = try MPG123Handle()
        try handle.open(path: path)
        try handle.scan()
        let frames = try #require(handle.frameCount())
        // Without a LAME header nothing is trimmed: whole MPEG frames of 1152 samples.
        #expect(handle.length() == frames * 1152)
    }

    @Test func readDecodesEverythingAndSeekIsExact() throws {
        let path = try Sample.mp3(rate: 44100, channels: 2, seconds: "1.5")
        let handle = try MPG123Handle(options: .playback)
        try handle.open(path: path)
        #expect(try handle.format().encoding == .signed16)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4 * 1000 + 3, alignment: 8)
        defer { buffer.deallocate() }
        var total: Int64 = 0
        while case let frames = try handle.read(into: buffer), frames > 0 {
            #expect(frames <= 1000)
            total += Int64(frames)
        }
        #expect(total == 66150)
        #expect(try handle.seek(toFrame: 12345) == 12345)
        #expect(handle.tell() == 12345)
        #expect(try handle.read(into: buffer) > 0)
    }

    @Test func rawID3v2IsStored() throws {
        let audio = try fileBytes(try Sample.mp3(rate: 44100, channels: 2, seconds: "1"))
        let body: [UInt8] = Array("TIT2".utf8) + [0, 0, 0, 4, 0, 0, 3] + Array("abc".utf8)
        let tag: [UInt8] = Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, UInt8(body.count)] + body
        let path = try Sample.made.file("tagged.mp3", bytes: tag + audio)
        let handle = try MPG123Handle(options: .playback)
        try handle.open(path: path)
        _ = try handle.format()
        #expect(handle.rawID3v2() == tag)
    }

    @Test func garbageHasNoFormat() throws {
        let path = try Sample.made.file("garbage.mp3", bytes: Array(String(repeating: "garbage ", count: 200).utf8))
        let handle = try MPG123Handle()
        try handle.open(path: path)
        #expect(throws: MPG123Error.self) { try handle.format() }
    }
}
