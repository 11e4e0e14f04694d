// SPDX-License-Identifier: GPL-3.0-or-later

import FLAC
import Input
import Testing

@Suite struct FLACStreamDecoderTests {
    @Test(arguments: [(44100, 2, 16), (48000, 1, 16), (96000, 2, 24), (44100, 6, 16), (22050, 1, 8), (44100, 2, 32)])
    func decodesLikeTheReferenceDecoder(_ rate: Int, _ channels: Int, _ bits: Int) throws {
        let path = try Files.flac("ref_\(rate)_\(channels)_\(bits).flac", rate: rate, channels: channels, bits: bits)
        let decoder = try FLACStreamDecoder(input: try FileInputStream(path: path), container: .native)
        let info = decoder.streamInfo
        #expect(info.sampleRate == rate && info.channels == channels && info.bitsPerSample == bits)
        #expect(info.totalSamples == UInt64(rate))
        #expect(decoder.bytesPerSample == (bits == 8 ? 1 : bits == 16 ? 2 : 4))
        let pcm = try decoder.readAll()
        #expect(pcm.count == rate * decoder.frameSize)
        let expected = widened(try Files.reference(path), bytes: bits / 8, width: decoder.bytesPerSample)
        #expect(pcm == expected)
    }

    @Test(arguments: [1, 7, 1000, 4095, 4097, 20000])
    func anyBufferSizeYieldsTheSameFrames(_ chunk: Int) throws {
        let path = try Files.flac("chunks.flac", seconds: "0.6")
        let whole = try FLACStreamDecoder(input: try FileInputStream(path: path), container: .native).readAll()
        let pieces = try FLACStreamDecoder(input: try FileInputStream(path: path), container: .native)
            .readAll(chunkFrames: chunk)
        #expect(pieces == whole)
    }

    @Test(arguments: [0, 1, 4095, 4096, 4097, 12345, 26459])
    func seekingIsSampleAccurate(_ target: Int) throws {
        let path = try Files.flac("seek.flac", bits: 24, seconds: "0.6")
        let decoder = try FLACStreamDecoder(input: try FileInputStream(path: path), container: .native)
        let whole = try decoder.readAll()
        let frameSize = decoder.frameSize
        // Seek backwards from the end, then forwards again after a partial read.
        #expect(try decoder.seek(toSample: UInt64(target)) == UInt64(target))
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 100 * frameSize, alignment: 16)
        defer { buffer.deallocate() }
        let first = try decoder.read(into: buffer)
        #expect(first > 0)
        #expect(
            Array(buffer[0..<(first * frameSize)]) == Array(whole[(target * frameSize)...].prefix(first * frameSize)))
        try decoder.seek(toSample: UInt64(target))
        #expect(try decoder.readAll(chunkFrames: 333) == Array(whole[(target * frameSize)...]))
    }

    @Test func seekingPastTheEndThrowsAndDecodingGoesOn() throws {
        let path = try Files.flac("seek.flac", bits: 24, seconds: "0.6")
        let decoder = try FLACStreamDecoder(input: try FileInputStream(path: path), container: .native)
        #expect(throws: FLACError.self) { try decoder.seek(toSample: 26460) }
        try decoder.seek(toSample: 100)
        #expect(try decoder.readAll().count == (26460 - 100) * decoder.frameSize)
    }

    @Test func oggFLACDecodesTheSameSamples() throws {
        let native = try Files.flac("ogg_src.flac", rate: 48000, seconds: "0.5")
        let ogg = try Files.flac("ogg_src.oga", rate: 48000, seconds: "0.5", flacArguments: ["--ogg"])
        let a = try FLACStreamDecoder(input: try FileInputStream(path: native), container: .native).readAll()
        let decoder = try FLACStreamDecoder(input: try FileInputStream(path: ogg), container: .ogg)
        #expect(decoder.streamInfo.totalSamples == 24000)
        #expect(try decoder.readAll(chunkFrames: 999) == a)
        #expect(decoder.bitRate == 0)
        try decoder.seek(toSample: 5000)
        #expect(try decoder.readAll() == Array(a[(5000 * 4)...]))
    }

    @Test func nativeStreamIsNotOgg() throws {
        let native = try Files.flac("ogg_src.flac", rate: 48000, seconds: "0.5")
        #expect(throws: FLACError.self) {
            _ = try FLACStreamDecoder(input: try FileInputStream(path: native), container: .ogg)
        }
        #expect(throws: FLACError.self) {
            _ = try FLACMetadata.read(input: try FileInputStream(path: native), container: .ogg)
        }
    }

    @Test func bitRateFollowsMPDsFormula() throws {
        let path = try Files.flac("chunks.flac", seconds: "0.6")
        let decoder = try FLACStreamDecoder(input: try FileInputStream(path: path), container: .native)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096 * decoder.frameSize, alignment: 16)
        defer { buffer.deallocate() }
        _ = try decoder.read(into: buffer)
        #expect(decoder.bitRate == 0)  // the first frame has no previous position
        _ = try decoder.read(into: buffer)
        // A compressed 16-bit stereo 44.1 kHz sweep: well under the 1411 kbit/s of PCM, well above nothing.
        #expect(decoder.bitRate > 100 && decoder.bitRate < 1411)
    }

    @Test func readsMetadataBlocksInOrder() throws {
        let cover = try Files.write("cover.png", Array("not really a png".utf8))
        let path = try Files.flac(
            "meta.flac", seconds: "0.2",
            flacArguments: [
                "-T", "TITLE=Title", "-T", "ARTIST=One", "-T", "ARTIST=Two",
                "--picture=3|image/png|front|16x16x24|\(cover)",
            ])
        let blocks = try FLACMetadata.read(input: try FileInputStream(path: path), container: .native)
        guard case .streamInfo(let info) = blocks.first else {
            Issue.record("STREAMINFO first")
            return
        }
        #expect(info.totalSamples == 8820)
        let entries = blocks.compactMap { block -> [[UInt8]]? in
            if case .vorbisComment(_, let entries) = block { return entries }
            return nil
        }
        #expect(entries == [[Array("TITLE=Title".utf8), Array("ARTIST=One".utf8), Array("ARTIST=Two".utf8)]])
        let pictures = blocks.compactMap { block -> FLACPicture? in
            if case .picture(let picture) = block { return picture }
            return nil
        }
        #expect(pictures.map(\.mimeType) == [Array("image/png".utf8)])
        #expect(pictures.first?.data == Array("not really a png".utf8))
        #expect(pictures.first?.description == Array("front".utf8))

        let decoder = try FLACStreamDecoder(
            input: try FileInputStream(path: path), container: .native, metadata: [.vorbisComment, .picture])
        #expect(decoder.metadata.count == 2)
        let plain = try FLACStreamDecoder(input: try FileInputStream(path: path), container: .native)
        #expect(plain.metadata.isEmpty)
    }

    @Test func skipsAnID3v2TagInFront() throws {
        let path = try Files.flac("id3src.flac", seconds: "0.3", flacArguments: ["-T", "TITLE=x"])
        var id3: [UInt8] = Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, 20]
        id3 += [UInt8](repeating: 0, count: 20)
        let prefixed = try Files.write("id3front.flac", id3 + (try Files.bytes(path)))
        let blocks = try FLACMetadata.read(input: try FileInputStream(path: prefixed), container: .native)
        #expect(blocks.contains(.vorbisComment(vendor: vendor(blocks), entries: [Array("TITLE=x".utf8)])))
        let decoder = try FLACStreamDecoder(input: try FileInputStream(path: prefixed), container: .native)
        let plain = try FLACStreamDecoder(input: try FileInputStream(path: path), container: .native)
        #expect(try decoder.readAll() == (try plain.readAll()))
    }

    @Test func nonSeekableStreamWithoutStreamInfoStartsAtTheFirstFrame() throws {
        let path = try Files.flac("cut.flac", seconds: "0.5", flacArguments: ["--no-padding", "--no-seektable"])
        let bytes = try Files.bytes(path)
        // Find the first frame: after the last metadata block.
        var position = 4
        while true {
            let header = bytes[position]
            let length = Int(bytes[position + 1]) << 16 | Int(bytes[position + 2]) << 8 | Int(bytes[position + 3])
            position += 4 + length
            if header & 0x80 != 0 { break }
        }
        let frames = Array(bytes[position...])
        #expect(throws: FLACError.missingStreamInfo) {
            _ = try FLACStreamDecoder(input: MemoryInputStream(frames), container: .native)
        }
        let decoder = try FLACStreamDecoder(input: NonSeekableInput(frames), container: .native)
        #expect(decoder.streamInfo.sampleRate == 44100 && decoder.streamInfo.totalSamples == 0)
        let full = try FLACStreamDecoder(input: try FileInputStream(path: path), container: .native).readAll()
        #expect(try decoder.readAll() == full)
    }

    @Test func truncatedAudioEndsEarlyWithoutError() throws {
        let path = try Files.flac("trunc_src.flac", seconds: "1")
        let bytes = try Files.bytes(path)
        let decoder = try FLACStreamDecoder(
            input: MemoryInputStream(Array(bytes.prefix(bytes.count / 2))), container: .native)
        let pcm = try decoder.readAll()
        let full = try FLACStreamDecoder(input: MemoryInputStream(bytes), container: .native).readAll()
        #expect(pcm.count > 0 && pcm.count < full.count)
        #expect(Array(full.prefix(pcm.count)) == pcm)
    }

    @Test(arguments: [0, 3, 4, 30, 41])
    func damagedMetadataThrows(_ keep: Int) throws {
        let path = try Files.flac("trunc_src.flac", seconds: "1")
        let bytes = Array(try Files.bytes(path).prefix(keep))
        #expect(throws: FLACError.self) {
            _ = try FLACMetadata.read(input: MemoryInputStream(bytes), container: .native)
        }
        #expect(throws: FLACError.self) {
            _ = try FLACStreamDecoder(input: MemoryInputStream(bytes), container: .native)
        }
    }

    @Test func garbageThrows() throws {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<5000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        #expect(throws: FLACError.self) {
            _ = try FLACMetadata.read(input: MemoryInputStream(bytes), container: .native)
        }
        #expect(throws: FLACError.self) { _ = try FLACMetadata.read(input: MemoryInputStream(bytes), container: .ogg) }
    }

    @Test func frameLargerThanStreamInfoSaysStopsDecoding() throws {
        // STREAMINFO claims a maximum block size of 16 while the frames hold 4096 samples: the buffers sized
        // from it cannot take a frame, so decoding fails instead of writing past them.
        let path = try Files.flac("trunc_src.flac", seconds: "1")
        var bytes = try Files.bytes(path)
        bytes[8] = 0
        bytes[9] = 16
        bytes[10] = 0
        bytes[11] = 16
        let decoder = try FLACStreamDecoder(input: MemoryInputStream(bytes), container: .native)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 8, alignment: 16)
        defer { buffer.deallocate() }
        #expect(throws: FLACError.self) { _ = try decoder.read(into: buffer) }
    }
}

private func vendor(_ blocks: [FLACMetadataBlock]) -> [UInt8] {
    for case .vorbisComment(let vendor, _) in blocks { return vendor }
    return []
}
