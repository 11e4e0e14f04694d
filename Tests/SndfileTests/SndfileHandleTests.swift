// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Sndfile
import Testing

/// WAV files built in memory (no tools needed).
enum Wave {
    static func le16(_ value: Int) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)]
    }
    static func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

    /// A PCM (format 1) or float (format 3) WAV of interleaved little-endian sample bytes, with extra chunks.
    static func file(
        format: Int = 1, channels: Int, rate: Int, bits: Int, data: [UInt8], dataSize: Int? = nil,
        extra: [UInt8] = []
    ) -> [UInt8] {
        let block = channels * bits / 8
        let fmt =
            Array("fmt ".utf8) + self.le32(16) + self.le16(format) + self.le16(channels) + self.le32(rate)
            + self.le32(rate * block) + self.le16(block) + self.le16(bits)
        let body = Array("WAVE".utf8) + fmt + Array("data".utf8) + self.le32(dataSize ?? data.count) + data + extra
        return Array("RIFF".utf8) + self.le32(body.count) + body
    }

    /// 16-bit stereo frames: left counts up from 0, right down from -1.
    static func ramp16(frames: Int) -> [UInt8] {
        (0..<frames).flatMap { self.le16($0) + self.le16(-1 - $0) }
    }

    /// A `LIST`/`INFO` chunk.
    static func info(_ fields: [(String, String)]) -> [UInt8] {
        var body = Array("INFO".utf8)
        for (key, value) in fields {
            var text = Array(value.utf8) + [0]
            if text.count % 2 == 1 { text.append(0) }
            body += Array(key.utf8) + self.le32(value.utf8.count + 1) + text
        }
        return Array("LIST".utf8) + self.le32(body.count) + body
    }
}

@Suite struct SndfileHandleTests {
    @Test func opensAWaveThroughTheStream() throws {
        let handle = try SndfileHandle(
            input: MemoryInputStream(Wave.file(channels: 2, rate: 44100, bits: 16, data: Wave.ramp16(frames: 1000))))
        #expect(handle.frames == 1000 && handle.sampleRate == 44100 && handle.channels == 2)
        #expect(handle.encoding == .pcm16 && handle.isSeekable)
    }

    @Test func readsShortsIntsAndFloats() throws {
        let bytes = Wave.file(channels: 2, rate: 8000, bits: 16, data: Wave.ramp16(frames: 300))
        let shorts = try SndfileHandle(input: MemoryInputStream(bytes))
        var buffer = [Int16](repeating: 0, count: 2 * 400)
        let frames = buffer.withUnsafeMutableBufferPointer { shorts.readFrames(into: $0) }
        #expect(frames == 300)
        #expect(buffer[0] == 0 && buffer[1] == -1 && buffer[2 * 299] == 299 && buffer[2 * 299 + 1] == -300)
        #expect(buffer.withUnsafeMutableBufferPointer { shorts.readFrames(into: $0) } == 0)

        let ints = try SndfileHandle(input: MemoryInputStream(bytes))
        var words = [Int32](repeating: 0, count: 2 * 10)
        #expect(words.withUnsafeMutableBufferPointer { ints.readFrames(into: $0) } == 10)
        #expect(words[2] == 1 << 16 && words[3] == -2 << 16)

        let floats = try SndfileHandle(input: MemoryInputStream(bytes))
        var values = [Float](repeating: 0, count: 2 * 10)
        #expect(values.withUnsafeMutableBufferPointer { floats.readFrames(into: $0) } == 10)
        #expect(values[2] == 1 / 32768 && values[3] == -2 / 32768)
    }

    @Test func twentyFourBitsAreLeftJustifiedInts() throws {
        let data: [UInt8] = [0x01, 0x02, 0x03, 0xFF, 0xFF, 0xFF]
        let handle = try SndfileHandle(
            input: MemoryInputStream(Wave.file(channels: 1, rate: 48000, bits: 24, data: data)))
        #expect(handle.encoding == .pcm24)
        var words = [Int32](repeating: 0, count: 4)
        #expect(words.withUnsafeMutableBufferPointer { handle.readFrames(into: $0) } == 2)
        #expect(words[0] == 0x0302_0100 && words[1] == -256)
    }

    @Test func floatFilesAreFloat() throws {
        let data = [Float(0.5), -0.25].flatMap { value in Wave.le32(Int(value.bitPattern)) }
        let handle = try SndfileHandle(
            input: MemoryInputStream(Wave.file(format: 3, channels: 1, rate: 44100, bits: 32, data: data)))
        #expect(handle.encoding == .float)
        var values = [Float](repeating: 0, count: 2)
        #expect(values.withUnsafeMutableBufferPointer { handle.readFrames(into: $0) } == 2)
        #expect(values == [0.5, -0.25])
    }

    @Test func seeksToTheExactFrame() throws {
        let handle = try SndfileHandle(
            input: MemoryInputStream(Wave.file(channels: 2, rate: 44100, bits: 16, data: Wave.ramp16(frames: 5000))))
        for target in [4321, 0, 4999, 1] {
            #expect(try handle.seek(toFrame: Int64(target)) == Int64(target))
            var buffer = [Int16](repeating: 0, count: 2)
            #expect(buffer.withUnsafeMutableBufferPointer { handle.readFrames(into: $0) } == 1)
            #expect(buffer == [Int16(target), Int16(-1 - target)])
        }
        #expect(throws: SndfileError.self) { try handle.seek(toFrame: 5001) }
    }

    @Test func infoStrings() throws {
        let info = Wave.info([("INAM", "A Title"), ("IART", "Someone"), ("ITRK", "03/12"), ("ISFT", "tool")])
        let handle = try SndfileHandle(
            input: MemoryInputStream(Wave.file(channels: 1, rate: 8000, bits: 16, data: [0, 0], extra: info)))
        #expect(handle.string(.title) == Array("A Title".utf8))
        #expect(handle.string(.artist) == Array("Someone".utf8))
        #expect(handle.string(.trackNumber) == Array("03/12".utf8))
        #expect(handle.string(.software) == Array("tool".utf8))
        #expect(handle.string(.album) == nil)
    }

    /// A data chunk claiming more than the file holds: libsndfile counts what is there, and reads stop there.
    @Test func truncatedDataReadsWhatIsThere() throws {
        let bytes = Wave.file(channels: 2, rate: 44100, bits: 16, data: Wave.ramp16(frames: 100), dataSize: 400_000)
        let handle = try SndfileHandle(input: MemoryInputStream(bytes))
        #expect(handle.frames == 100)
        var buffer = [Int16](repeating: 0, count: 2 * 1000)
        #expect(buffer.withUnsafeMutableBufferPointer { handle.readFrames(into: $0) } == 100)
    }

    /// A chunk after the audio whose size runs far past the end: libsndfile seeks past the end (which the
    /// stream allows, as `lseek` does) and still opens the file with the right length.
    @Test func chunkRunningPastTheEnd() throws {
        let runaway = Array("junk".utf8) + Wave.le32(0x7FFF_FFF0) + [1, 2, 3, 4]
        let bytes = Wave.file(channels: 2, rate: 44100, bits: 16, data: Wave.ramp16(frames: 64), extra: runaway)
        let handle = try SndfileHandle(input: MemoryInputStream(bytes))
        #expect(handle.frames == 64)
        var buffer = [Int16](repeating: 0, count: 2 * 100)
        #expect(buffer.withUnsafeMutableBufferPointer { handle.readFrames(into: $0) } == 64)
    }

    @Test(arguments: [
        [UInt8](), Array("RIFF".utf8), Array(repeating: 0x5A, count: 4096),
        Array("RIFF\u{0}\u{0}\u{0}\u{0}WAVEfmt ".utf8),
    ])
    func garbageIsRefused(_ bytes: [UInt8]) {
        #expect(throws: SndfileError.self) { try SndfileHandle(input: MemoryInputStream(bytes)) }
    }
}
