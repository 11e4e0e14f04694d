// SPDX-License-Identifier: GPL-3.0-or-later

import Formats
import MPG123
import Model
import Testing

@Suite struct MP3DecoderTests {
    @Test(arguments: [(44100, 2, "1", [String]()), (22050, 1, "1.5", ["-V", "4"]), (8000, 2, "0.7", ["-t"])])
    func decodesWholeSongIn24Bit(_ rate: Int, _ channels: Int, _ seconds: String, _ lame: [String]) throws {
        let path = try Fixtures.lame(
            "dec_\(rate)_\(channels)_\(lame.joined()).mp3", rate: rate, channels: channels, seconds: seconds,
            lameArguments: lame)
        var decoder = try MP3Format().makeDecoder(path: path)
        #expect(decoder.format == AudioFormat(sampleRate: rate, sampleFormat: .s24, channels: channels))
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096 * 8, alignment: 8)
        defer { buffer.deallocate() }
        var total: UInt64 = 0
        var peak: Int32 = 0
        while true {
            let frames = try decoder.decode(into: buffer)
            if frames == 0 { break }
            for index in 0..<(frames * channels) {
                let sample = buffer.load(fromByteOffset: index * 4, as: Int32.self)
                #expect(sample >= -(1 << 23) && sample < (1 << 23))
                peak = max(peak, abs(sample))
            }
            total += UInt64(frames)
        }
        #expect(peak > 1 << 20)
        if lame.contains("-t") {
            #expect(total > 0)
        } else {
            // With a LAME header, mpd's gapless decoding yields exactly the encoded samples; its length is the
            // Info header's frame count times the samples per frame, in whole milliseconds.
            let expected = UInt64((Double(seconds)! * Double(rate)).rounded())
            #expect(total == expected)
            let length = try #require(decoder.totalFrames)
            #expect(length > expected && length < expected + UInt64(rate) / 10)
        }
    }

    /// `mpd`'s mpg123 plugin (mad disabled) plays libmpg123's own 16-bit output: `status` shows `rate:16:channels`
    /// and no 24-to-16-bit dither is needed on the way to a 16-bit output or encoder.
    @Test func mpg123PluginDecodesLibmpg123s16Samples() throws {
        let path = try Fixtures.lame("dec_s16.mp3", rate: 44100, channels: 2, seconds: "1")
        var decoder = try MP3Format(scan: .mpg123).makeDecoder(path: path)
        #expect(decoder.format == AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096 * 4, alignment: 8)
        defer { buffer.deallocate() }
        var decoded: [Int16] = []
        while true {
            let frames = try decoder.decode(into: buffer)
            if frames == 0 { break }
            decoded += (0..<(frames * 2)).map { buffer.load(fromByteOffset: $0 * 2, as: Int16.self) }
        }
        #expect(decoded.count == 44100 * 2)
        // Exactly libmpg123's 16-bit synthesis with its defaults (what mpd's plugin reads).
        let reference = try MPG123Handle(options: .libraryDefaults)
        try reference.open(path: path)
        var expected: [Int16] = []
        while true {
            let frames = try reference.read(into: buffer)
            if frames == 0 { break }
            expected += (0..<(frames * 2)).map { buffer.load(fromByteOffset: $0 * 2, as: Int16.self) }
        }
        #expect(decoded == expected)
        #expect(decoded.contains { abs(Int($0)) > 1 << 12 })
    }

    /// mpd's mad plugin seeks to the start of the MPEG frame that ends at or after the time asked for (its
    /// seek table counts the frames of the encoder delay too), and reports the time asked for.
    @Test func seekGoesToTheFrameThatEndsAfterTheTime() throws {
        let path = try Fixtures.lame("dec_seek.mp3", rate: 44100, channels: 2, seconds: "2")
        var decoder = try MP3Format().makeDecoder(path: path)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1152 * 8, alignment: 8)
        defer { buffer.deallocate() }
        var reference: [Int32] = []
        while reference.count < 80000 {
            let frames = try decoder.decode(into: buffer)
            if frames == 0 { break }
            for index in 0..<(frames * 2) { reference.append(buffer.load(fromByteOffset: index * 4, as: Int32.self)) }
        }
        // 30000 frames is 680 ms: MPEG frame 26 (the first after the Info frame is 0) ends at 705 ms and starts
        // 26 * 1152 - (576 + 529) = 28847 frames into the trimmed song.
        #expect(try decoder.seek(toFrame: 30000) == 30000)
        var decoded: [Int32] = []
        while decoded.count < 3 * 1152 * 2 {
            let frames = try decoder.decode(into: buffer)
            if frames == 0 { break }
            for index in 0..<(frames * 2) { decoded.append(buffer.load(fromByteOffset: index * 4, as: Int32.self)) }
        }
        // libmad's bit reservoir and synthesis filter still hold the frames decoded last: from the third frame on,
        // the samples are the song's.
        let start = 28847 + 2 * 1152
        #expect(
            Array(decoded[(2 * 1152 * 2)..<(2 * 1152 * 2 + 256)]) == Array(reference[(start * 2)..<(start * 2 + 256)]))
    }

    @Test func bitRateIsTheCurrentFramesRate() throws {
        let layer3: Set<Int> = [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
        let cbr = try Fixtures.lame(
            "dec_cbr160.mp3", rate: 44100, channels: 2, seconds: "2", lameArguments: ["-b", "160"])
        let vbr = try Fixtures.lame("dec_vbr2.mp3", rate: 44100, channels: 2, seconds: "4", lameArguments: ["-V", "2"])
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1152 * 8, alignment: 8)
        defer { buffer.deallocate() }
        func rates(_ path: String) throws -> [(frames: Int, rate: Int)] {
            var decoder = try MP3Format().makeDecoder(path: path)
            #expect(decoder.bitRate == 0)
            var result: [(Int, Int)] = []
            while true {
                let frames = try decoder.decode(into: buffer)
                if frames == 0 { break }
                result.append((frames, decoder.bitRate))
            }
            return result
        }
        #expect(try rates(cbr).allSatisfy { $0.rate == 160 })
        let variable = try rates(vbr)
        #expect(variable.allSatisfy { layer3.contains($0.rate) })
        // Weighted by the frames decoded, the per-frame rates add up to the file's size (less its headers).
        let bits = variable.reduce(0.0) { $0 + Double($1.frames) / 44100 * Double($1.rate) * 1000 }
        let fileBits = Double(try Fixtures.contents(vbr).count * 8)
        #expect(abs(bits - fileBits) / fileBits < 0.05)
        #expect(Set(variable.map(\.rate)).count > 1)
    }

    @Test func mixRampTagsComeFromID3TXXX() throws {
        let plain = try Fixtures.lame("dec_mixramp_plain.mp3", rate: 44100, channels: 2, seconds: "1")
        let tagged = try Fixtures.tagged(
            "dec_mixramp.mp3", from: plain,
            script: """
                import mutagen.id3
                t = mutagen.id3.ID3()
                t.add(mutagen.id3.TXXX(encoding=3, desc="MIXRAMP_START", text=["-30.00 0.10;-20.00 0.50"]))
                t.add(mutagen.id3.TXXX(encoding=3, desc="mixramp_end", text=["-18.00 3.20"]))
                t.save(PATH)
                """)
        let decoder = try MP3Format().makeDecoder(path: tagged)
        #expect(decoder.mixRampStart == "-30.00 0.10;-20.00 0.50")
        #expect(decoder.mixRampEnd == "-18.00 3.20")
        let untagged = try MP3Format().makeDecoder(path: plain)
        #expect(untagged.mixRampStart == nil && untagged.mixRampEnd == nil)
    }

    @Test func garbageCannotBeDecoded() throws {
        let path = try Fixtures.bytes("dec_garbage.mp3", Array("not audio".utf8))
        #expect(throws: FormatError.self) { _ = try MP3Format().makeDecoder(path: path) }
    }
}
