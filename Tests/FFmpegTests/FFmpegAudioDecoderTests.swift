// SPDX-License-Identifier: GPL-3.0-or-later

import FFmpeg
import Input
import TestTools
import Testing

@Suite struct FFmpegAudioDecoderTests {
    static func decoder(_ path: String) throws -> FFmpegAudioDecoder {
        try FFmpegAudioDecoder(input: try FFmpegInput(input: try FileInputStream(path: path), url: path))
    }

    /// Everything `decoder` decodes, in calls of `chunk` bytes.
    static func decodeAll(_ decoder: FFmpegAudioDecoder, chunk: Int) throws -> [UInt8] {
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: chunk)
        let frameBytes = decoder.channels * decoder.bytesPerSample
        while true {
            let frames = try buffer.withUnsafeMutableBytes { try decoder.decode(into: $0) }
            if frames == 0 { break }
            output += buffer[..<(frames * frameBytes)]
        }
        return output
    }

    @Test(arguments: [
        ("alac16-stereo.m4a", 44100, 2, ["-c:a", "alac", "-sample_fmt", "s16p"], "s16le", 4096),
        ("alac16-mono.m4a", 48000, 1, ["-c:a", "alac", "-sample_fmt", "s16p"], "s16le", 1002),
        ("alac24-stereo.m4a", 96000, 2, ["-c:a", "alac", "-sample_fmt", "s32p"], "s32le", 999),
        ("flac-in.mka", 44100, 2, ["-c:a", "flac"], "s32le", 65536),
        ("pcm-in.mka", 44100, 2, ["-c:a", "pcm_s16le"], "s16le", 10),
        ("tta.tta", 44100, 2, ["-c:a", "tta"], "s32le", 3000),
    ])
    func losslessDecodesEqualFFmpegsOwn(
        name: String, rate: Int, channels: Int, codec: [String], raw: String, chunk: Int
    ) throws {
        let path = try FFmpegSample.file(name, rate: rate, channels: channels, codec: codec)
        let decoder = try Self.decoder(path)
        #expect(decoder.sampleRate == rate)
        #expect(decoder.channels == channels)
        let got = try Self.decodeAll(decoder, chunk: chunk)
        let want = try FFmpegSample.decode(path, format: raw)
        #expect(got.count == want.count)
        #expect(got == want)
    }

    @Test func planarFloatIsInterleaved() throws {
        let path = try FFmpegSample.file("aac-stereo.m4a", codec: ["-c:a", "aac"])
        let decoder = try Self.decoder(path)
        #expect(decoder.sampleFormat == .float(planar: true))
        let got = try Self.decodeAll(decoder, chunk: 5000)
        // ffmpeg's own decode of the same AAC stream, interleaved to f32le (no conversion of values).
        let want = try FFmpegSample.decode(path, format: "f32le")
        #expect(got == want)
    }

    @Test func theCodecHasATimeBaseSoSeeksSkipToTheExactSample() throws {
        let path = try FFmpegSample.file("seek.m4a", seconds: "2", codec: ["-c:a", "alac", "-sample_fmt", "s16p"])
        let decoder = try Self.decoder(path)
        #expect(decoder.codecTimeBase == (1, 44100))
        let whole = try Self.decodeAll(try Self.decoder(path), chunk: 8192)
        // Frames whose millisecond is exact (seeks go through whole milliseconds, as in mpd).
        for frame: UInt64 in [44100, 5 * 441, 70 * 441, 0, 150 * 441] {
            #expect(try decoder.seek(toFrame: frame) == frame)
            let got = try Self.decodeAll(decoder, chunk: 3000)
            #expect(got.count == whole.count - Int(frame) * 4)
            #expect(got == Array(whole[(Int(frame) * 4)...]), "seek to \(frame)")
        }
    }

    @Test func seekingPastTheEndGivesNothingOrThrows() throws {
        let path = try FFmpegSample.file("short.m4a", seconds: "0.5", codec: ["-c:a", "alac"])
        let decoder = try Self.decoder(path)
        if (try? decoder.seek(toFrame: 10 * 44100)) != nil {
            #expect(try Self.decodeAll(decoder, chunk: 4096).isEmpty)
        }
    }

    @Test func absurdSeekTargetsThrowOrEndWithoutTrapping() throws {
        let path = try FFmpegSample.file("short.m4a", seconds: "0.5", codec: ["-c:a", "alac"])
        let decoder = try Self.decoder(path)
        for frame: UInt64 in [UInt64.max, UInt64.max / 1000, UInt64.max / 1000 - 1, 1 << 62] {
            if (try? decoder.seek(toFrame: frame)) != nil {
                #expect(try Self.decodeAll(decoder, chunk: 4096).count <= 44100 * 8)
            }
        }
        #expect(throws: FFmpegError.self) { try decoder.seek(toFrame: UInt64.max) }
    }

    @Test func aDamagedMiddleDecodesWithoutTrapping() throws {
        let path = try FFmpegSample.file("damage.m4a", seconds: "1", codec: ["-c:a", "alac"])
        var bytes = try FFmpegSample.bytes(path)
        for index in (bytes.count / 3)..<(bytes.count / 3 + 3000) {
            bytes[index] = UInt8(truncatingIfNeeded: index &* 37)
        }
        let input = try FFmpegInput(input: MemoryInputStream(bytes, uri: "d.m4a"), url: "d.m4a")
        let decoder = try FFmpegAudioDecoder(input: input)
        let got = try Self.decodeAll(decoder, chunk: 4096)
        #expect(got.count <= 44100 * 8)
    }

    @Test func noAudioStreamThrows() throws {
        let path = try FFmpegSample.made.file("still.mkv") { path in
            try runTool(
                "/usr/bin/ffmpeg",
                ["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "color=red:s=8x8:d=0.2", "-c:v", "ffv1", path])
        }
        let input = try FFmpegInput(input: try FileInputStream(path: path), url: path)
        #expect(input.firstAudioStreamIndex == nil)
        #expect(throws: FFmpegError.self) { _ = try FFmpegAudioDecoder(input: input) }
    }
}

/// A stream that cannot seek (like a pipe or an HTTP stream without ranges), over bytes in memory.
private final class ForwardOnlyStream: InputStream {
    let uri: String
    let bytes: [UInt8]
    var size: UInt64? { nil }
    var isSeekable: Bool { false }
    var mimeType: String? { nil }
    private(set) var offset: UInt64 = 0

    init(_ bytes: [UInt8], uri: String) {
        self.bytes = bytes
        self.uri = uri
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        let start = Int(self.offset)
        let count = min(buffer.count, self.bytes.count - start)
        guard count > 0 else { return 0 }
        self.bytes.withUnsafeBytes { source in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[start..<(start + count)]))
        }
        self.offset += UInt64(count)
        return count
    }

    func seek(to offset: UInt64) throws(InputError) { throw .notSeekable(uri: self.uri) }
}

@Suite struct FFmpegForwardOnlyTests {
    @Test func aMatroskaStreamDecodesWithoutSeeking() throws {
        let path = try FFmpegSample.file("stream.mka", seconds: "0.5", codec: ["-c:a", "flac"])
        let bytes = try FFmpegSample.bytes(path)
        let input = try FFmpegInput(input: ForwardOnlyStream(bytes, uri: "stream.mka"), url: "stream.mka")
        let decoder = try FFmpegAudioDecoder(input: input)
        let got = try FFmpegAudioDecoderTests.decodeAll(decoder, chunk: 4096)
        #expect(got == (try FFmpegSample.decode(path, format: "s32le")))
        // libavformat may still "seek" (from its index, at the end of the data): whatever it does, nothing traps
        // and nothing comes from before the end.
        if (try? decoder.seek(toFrame: 100)) != nil {
            #expect(try FFmpegAudioDecoderTests.decodeAll(decoder, chunk: 4096).count <= got.count)
        }
    }
}
