// SPDX-License-Identifier: GPL-3.0-or-later

import FAAD
import Input
import TestTools
import Testing

enum Sample {
    static let made = MadeFiles("faad")

    /// A sine sweep encoded by ffmpeg's AAC encoder into ADTS, made once.
    static func adts(rate: Int, channels: Int, seconds: String) throws -> [UInt8] {
        let path = try self.made.file("s_\(rate)_\(channels)_\(seconds).aac") { path in
            let wave = path + ".wav"
            try makeSweep(at: wave, rate: rate, channels: channels, seconds: seconds)
            defer { removeFile(wave) }
            try runTool(
                "/usr/bin/ffmpeg",
                ["-nostdin", "-loglevel", "error", "-y", "-i", wave, "-c:a", "aac", "-f", "adts", path])
        }
        return try fileBytes(path)
    }

    /// The ADTS frame length at `offset`.
    static func frameLength(_ bytes: [UInt8], at offset: Int) -> Int {
        Int(bytes[offset + 3] & 3) << 11 | Int(bytes[offset + 4]) << 3 | Int(bytes[offset + 5] >> 5)
    }
}

@Suite struct FAADDecoderTests {
    @Test(arguments: [(44100, 2, 44100, 2), (48000, 1, 48000, 2), (22050, 2, 44100, 2), (48000, 6, 48000, 6)])
    func initialisationReportsLibfaadsOutputFormat(rate: Int, channels: Int, outRate: Int, outChannels: Int) throws {
        let bytes = try Sample.adts(rate: rate, channels: channels, seconds: "0.5")
        let decoder = try FAADDecoder()
        let format = try bytes.withUnsafeBytes { try decoder.initialize($0) }
        #expect(format.consumed == 0)
        #expect(format.sampleRate == outRate)
        #expect(format.channels == outChannels)
    }

    @Test func decodesEveryFrameTo16BitSamples() throws {
        let bytes = try Sample.adts(rate: 44100, channels: 2, seconds: "0.5")
        let decoder = try FAADDecoder()
        _ = try bytes.withUnsafeBytes { try decoder.initialize($0) }
        var offset = 0
        var frames = 0
        var samples = 0
        var loud = false
        while offset + 7 <= bytes.count {
            let length = Sample.frameLength(bytes, at: offset)
            let info = bytes.withUnsafeBytes { decoder.decode(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
            #expect(info.error == 0, "\(info.errorMessage)")
            #expect(info.bytesConsumed == length)
            if frames > 0 { #expect(info.samples == 2048) }
            decoder.withOutput { output in
                #expect(output.count == info.samples * 2)
                loud = loud || output.bindMemory(to: Int16.self).contains { abs(Int($0)) > 8000 }
            }
            samples += info.samples
            offset += info.bytesConsumed
            frames += 1
        }
        #expect(offset == bytes.count)
        #expect(loud)
        // The first frame only primes the decoder.
        #expect(samples == (frames - 1) * 2048)
    }

    @Test func floatOutputHasFourBytesASample() throws {
        let bytes = try Sample.adts(rate: 44100, channels: 2, seconds: "0.3")
        let decoder = try FAADDecoder(
            configuration: .init(outputFormat: .float, downMatrix: true, upSampleImplicitSBR: true))
        _ = try bytes.withUnsafeBytes { try decoder.initialize($0) }
        var offset = 0
        for _ in 0..<3 {
            let info = bytes.withUnsafeBytes { decoder.decode(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
            offset += info.bytesConsumed
            decoder.withOutput { #expect($0.count == info.samples * 4) }
        }
    }

    @Test func initialisingFromNothingThrows() throws {
        let decoder = try FAADDecoder()
        #expect(throws: FAADError.empty) { try decoder.initialize(UnsafeRawBufferPointer(start: nil, count: 0)) }
    }

    @Test func garbageNeverCrashes() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            let garbage = (0..<3000).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let decoder = try FAADDecoder()
            guard (try? garbage.withUnsafeBytes({ try decoder.initialize($0) })) != nil else { continue }
            var offset = 0
            for _ in 0..<20 where offset < garbage.count {
                let info = garbage.withUnsafeBytes { decoder.decode(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
                if info.error != 0 || info.bytesConsumed == 0 { break }
                offset += info.bytesConsumed
            }
        }
    }
}

@Suite struct FAADInputBufferTests {
    @Test func needReadsUntilEnoughIsBufferedAndFailsAtTheEnd() throws {
        let buffer = FAADInputBuffer(input: MemoryInputStream(Array(0..<100)), capacity: 32)
        #expect(buffer.need(10)?.count == 32)
        buffer.consume(30)
        #expect(buffer.available == 2)
        // The tail is at the end: what is left moves to the front before the next read.
        let next = try #require(buffer.need(20))
        #expect(Array(next.prefix(3)) == [30, 31, 32])
        #expect(buffer.need(33) == nil)
        buffer.clear()
        #expect(buffer.available == 0)
    }

    @Test func skipPastTheBufferReadsOnAndReportsTheEnd() throws {
        let buffer = FAADInputBuffer(input: MemoryInputStream(Array(0..<200)), capacity: 16)
        #expect(buffer.need(1) != nil)
        #expect(buffer.skip(100))
        #expect(buffer.need(1)?.first == 100)
        #expect(!buffer.skip(500))
        #expect(!buffer.fill())
    }
}
