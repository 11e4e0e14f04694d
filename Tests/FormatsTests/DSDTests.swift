// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Input
import Model
import Testing

@testable import Formats

/// DSF and DSDIFF files built byte by byte, as `mpd` 0.23.12's `dsf` and `dsdiff` plugins read them.
@Suite struct DSDTests {
    // MARK: - Builders

    static func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    static func le64(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    static func be64(_ value: UInt64) -> [UInt8] { Self.le64(value).reversed() }
    static func be32(_ value: UInt32) -> [UInt8] { Self.le32(value).reversed() }

    /// A DSF file: `channels` channels of `bytesPerChannel` bytes each (channel c's byte i is `pattern(c, i)`,
    /// stored as it is in the blocks), padded to whole 4096-byte blocks, and an ID3 tag at the end if given.
    static func dsf(
        rate: UInt32 = 2_822_400, channels: Int = 2, bytesPerChannel: Int, bitsPerSample: UInt32 = 1,
        version: UInt32 = 1, block: UInt32 = 4096, id3: [UInt8] = [], dataSizeOverride: UInt64? = nil,
        pattern: (Int, Int) -> UInt8 = { channel, index in UInt8(truncatingIfNeeded: index * 3 + channel * 101) }
    ) -> [UInt8] {
        let blocks = (bytesPerChannel + 4095) / 4096
        var data: [UInt8] = []
        for index in 0..<blocks {
            for channel in 0..<channels {
                for offset in 0..<4096 {
                    let position = index * 4096 + offset
                    data.append(position < bytesPerChannel ? pattern(channel, position) : 0)
                }
            }
        }
        var fmt = Array("fmt ".utf8) + Self.le64(52) + Self.le32(version) + Self.le32(0)
        fmt += Self.le32(UInt32(channels)) + Self.le32(UInt32(channels)) + Self.le32(rate) + Self.le32(bitsPerSample)
        fmt += Self.le64(UInt64(bytesPerChannel) * 8) + Self.le32(block) + Self.le32(0)
        let body = fmt + Array("data".utf8) + Self.le64(dataSizeOverride ?? UInt64(12 + data.count)) + data
        let total = UInt64(28 + body.count + id3.count)
        let metadata: UInt64 = id3.isEmpty ? 0 : UInt64(28 + body.count)
        return Array("DSD ".utf8) + Self.le64(28) + Self.le64(total) + Self.le64(metadata) + body + id3
    }

    static func chunk(_ id: String, _ payload: [UInt8]) -> [UInt8] {
        Array(id.utf8) + Self.be64(UInt64(payload.count)) + payload + (payload.count % 2 == 1 ? [0] : [])
    }

    /// A DSDIFF file: FVER, PROP/SND (FS, CHNL, CMPR), the DSD chunk of `audio`, then `extra` chunks.
    static func dff(
        rate: UInt32 = 2_822_400, channels: Int = 2, audio: [UInt8], compression: String = "DSD ",
        extra: [UInt8] = [], dataSizeOverride: UInt64? = nil
    ) -> [UInt8] {
        let ids = (0..<channels).flatMap { _ in Array("C   ".utf8) }
        let sound =
            Array("SND ".utf8) + Self.chunk("FS  ", Self.be32(rate))
            + Self.chunk("CHNL", [UInt8(channels >> 8), UInt8(channels & 0xFF)] + ids)
            + Self.chunk("CMPR", Array(compression.utf8) + [4] + Array("none".utf8))
        var dsd = Array("DSD ".utf8) + Self.be64(dataSizeOverride ?? UInt64(audio.count)) + audio
        if audio.count % 2 == 1 { dsd.append(0) }
        let body =
            Array("DSD ".utf8) + Self.chunk("FVER", [1, 5, 0, 0]) + Self.chunk("PROP", sound) + dsd + extra
        return Array("FRM8".utf8) + Self.be64(UInt64(body.count)) + body
    }

    static func nativeTags(artist: String, title: String) -> [UInt8] {
        func text(_ value: String) -> [UInt8] { Self.be32(UInt32(value.utf8.count)) + Array(value.utf8) }
        return Self.chunk("DIIN", Self.chunk("DIAR", text(artist)) + Self.chunk("DITI", text(title)))
    }

    static func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = Fixtures.directory + "/dsd-" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func reversed(_ byte: UInt8) -> UInt8 {
        var result: UInt8 = 0
        for bit in 0..<8 where byte & (1 << bit) != 0 { result |= 0x80 >> UInt8(bit) }
        return result
    }

    /// Everything a decoder delivers, in pieces of `chunk` bytes.
    static func decodeAll(_ decoder: inout any Decoder, chunk: Int = 1000) throws -> [UInt8] {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: chunk)
        while true {
            let frames = try buffer.withUnsafeMutableBytes { try decoder.decode(into: $0) }
            if frames == 0 { break }
            out += buffer[0..<(frames * decoder.format.channels)]
        }
        return out
    }

    static let id3 = TagBytes.id3v24([
        TagBytes.textFrame("TIT2", ["One Bit"]), TagBytes.textFrame("TPE1", ["Sigma Delta"]),
        TagBytes.textFrame("TRCK", ["4/10"]),
        Array("TXXX".utf8) + TagBytes.syncsafe(1 + 5 + 1 + 3) + [0, 0, 3] + Array("NOTE1".utf8) + [0]
            + Array("dsd".utf8),
    ])

    // MARK: - DSF

    @Test func dsfInfoHasTheDurationOfWholeBlocksAndTheID3Tags() throws {
        // 10000 bytes per channel: 2 whole blocks (8192 frames) at 352800 frames/s = 23 ms.
        let path = try Self.write("info.dsf", Self.dsf(bytesPerChannel: 10000, id3: Self.id3))
        let info = try DSFFormat().readInfo(path: path)
        #expect(info.durationMilliseconds == 8192 * 1000 / 352_800)
        #expect(info.audioFormat == nil)
        #expect(info.firstValue(.title) == "One Bit")
        #expect(info.firstValue(.artist) == "Sigma Delta")
        #expect(info.firstValue(.track) == "4")
        let comments = try DSFFormat().readComments(path: path)
        #expect(comments.map(\.name) == ["NOTE1"] && comments.map(\.value) == ["dsd"])
        #expect(try DSFFormat().readPicture(path: path) == nil)
    }

    @Test func dsfDecoderInterleavesBlocksAndReversesBits() throws {
        let bytes = Self.dsf(bytesPerChannel: 9000)
        var decoder = try DSFFormat().makeDecoder(input: MemoryInputStream(bytes))
        #expect(decoder.format == AudioFormat(sampleRate: 352_800, sampleFormat: .dsd, channels: 2))
        #expect(decoder.format.description == "dsd64:2")
        #expect(decoder.totalFrames == 8192)
        #expect(decoder.bitRate == 5644)
        let out = try Self.decodeAll(&decoder, chunk: 777)
        #expect(out.count == 8192 * 2)
        for index in [0, 1, 4095, 4096, 8191] {
            for channel in 0..<2 {
                let stored = UInt8(truncatingIfNeeded: index * 3 + channel * 101)
                #expect(out[index * 2 + channel] == Self.reversed(stored))
            }
        }
        // Seeking lands on the start of the block.
        #expect(try decoder.seek(toFrame: 5000) == 4096)
        let rest = try Self.decodeAll(&decoder)
        #expect(Array(rest) == Array(out[(4096 * 2)...]))
        #expect(try decoder.seek(toFrame: 9000) == 8192)
        #expect(try Self.decodeAll(&decoder).isEmpty)
    }

    @Test func dsfWithMostSignificantBitFirstIsNotReversedAndMonoIsCopied() throws {
        var decoder = try DSFFormat().makeDecoder(
            input: MemoryInputStream(Self.dsf(rate: 5_644_800, channels: 1, bytesPerChannel: 4096, bitsPerSample: 8)))
        #expect(decoder.format.description == "dsd128:1")
        let out = try Self.decodeAll(&decoder)
        #expect(out == (0..<4096).map { UInt8(truncatingIfNeeded: $0 * 3) })
    }

    @Test func dsdOf48kHzFamilyPrintsItsRate() throws {
        let decoder = try DSFFormat().makeDecoder(
            input: MemoryInputStream(Self.dsf(rate: 3_072_000, bytesPerChannel: 4096)))
        #expect(decoder.format.description == "384000:dsd:2")
    }

    static func damagedDSFs() -> [(String, [UInt8])] {
        let garbage: [UInt8] = (0..<5000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        return [
            ("bad rate", Self.dsf(rate: 44100, bytesPerChannel: 4096)),
            ("version 2", Self.dsf(bytesPerChannel: 4096, version: 2)),
            ("2048-byte blocks", Self.dsf(bytesPerChannel: 4096, block: 2048)),
            ("nine channels", Self.dsf(channels: 9, bytesPerChannel: 10)),
            ("data beyond the end", Self.dsf(bytesPerChannel: 4096, dataSizeOverride: 1 << 62)),
            ("data size below its header", Self.dsf(bytesPerChannel: 4096, dataSizeOverride: 3)),
            ("garbage", garbage),
            ("empty", []),
        ]
    }

    @Test(arguments: Self.damagedDSFs())
    func damagedDSFIsRejected(_ name: String, _ bytes: [UInt8]) throws {
        let path = try Self.write("damaged-\(name).dsf", bytes)
        #expect(throws: FormatError.self) { try DSFFormat().readInfo(path: path) }
        #expect(throws: FormatError.self) { try DSFFormat().makeDecoder(input: MemoryInputStream(bytes)) }
    }

    @Test func truncatedDSFIsRejectedAndEveryPrefixIsSafe() throws {
        let bytes = Self.dsf(bytesPerChannel: 10000, id3: Self.id3)
        let path = try Self.write("truncated.dsf", Array(bytes.prefix(bytes.count / 2)))
        #expect(throws: FormatError.self) { try DSFFormat().readInfo(path: path) }
        for length in stride(from: 0, to: 200, by: 1) {
            _ = try? DSFFormat().makeDecoder(input: MemoryInputStream(Array(bytes.prefix(length))))
        }
    }

    @Test func anID3OffsetOutsideTheFileGivesNoTags() throws {
        var bytes = Self.dsf(bytesPerChannel: 4096, id3: Self.id3)
        bytes.replaceSubrange(20..<28, with: Self.le64(UInt64(bytes.count) + 5))
        let info = try DSFFormat().readInfo(path: try Self.write("id3-outside.dsf", bytes))
        #expect(info.tags.isEmpty)
    }

    // MARK: - DSDIFF

    @Test func dffDecoderDeliversTheChunkAsItIs() throws {
        let audio = (0..<20000).map { UInt8(truncatingIfNeeded: $0 * 5 + 1) }
        var decoder = try DSDIFFFormat().makeDecoder(input: MemoryInputStream(Self.dff(audio: audio)))
        #expect(decoder.format.description == "dsd64:2")
        #expect(decoder.totalFrames == 10000)
        #expect(try Self.decodeAll(&decoder, chunk: 999) == audio)
        #expect(try decoder.seek(toFrame: 1234) == 1234)
        #expect(try Self.decodeAll(&decoder) == Array(audio[2468...]))
        #expect(try decoder.seek(toFrame: 10000) == 10000)
        #expect(try Self.decodeAll(&decoder).isEmpty)
    }

    @Test func dffDurationIsTheChunksStatedSize() throws {
        let path = try Self.write("long.dff", Self.dff(audio: [1, 2, 3, 4], dataSizeOverride: 705_600))
        #expect(try DSDIFFFormat().readInfo(path: path).durationMilliseconds == 1000)
        var decoder = try DSDIFFFormat().makeDecoder(
            input: MemoryInputStream(Self.dff(audio: [1, 2, 3, 4], dataSizeOverride: 705_600)))
        // The file ends inside the first 8192-byte piece: as in `mpd`, nothing is played.
        #expect(try Self.decodeAll(&decoder).isEmpty)
    }

    @Test func dffTagsAfterTheAudioAreFoundWhere023FindsThem() throws {
        // 0.23.12 skips the audio twice: with four bytes of audio it lands inside the DIIN header and finds
        // nothing; with none it reads DIIN, then DIAR, whose text it skips twice, and misses DITI.
        let tiny = Self.dff(audio: [1, 2, 3, 4], extra: Self.nativeTags(artist: "Native", title: "Title"))
        #expect(try DSDIFFFormat().readInfo(path: try Self.write("tiny.dff", tiny)).tags.isEmpty)
        let empty = Self.dff(audio: [], extra: Self.nativeTags(artist: "Native", title: "Title"))
        let info = try DSDIFFFormat().readInfo(path: try Self.write("empty-audio.dff", empty))
        #expect(info.tags.map(\.type) == [.artist] && info.firstValue(.artist) == "Native")
    }

    @Test func dffID3ChunkIsReadWhenReached() throws {
        // No audio: the ID3 chunk right after the DSD chunk is found.
        let bytes = Self.dff(audio: [], extra: Self.chunk("ID3 ", Self.id3))
        let path = try Self.write("id3.dff", bytes)
        let info = try DSDIFFFormat().readInfo(path: path)
        #expect(info.firstValue(.title) == "One Bit")
        #expect(try DSDIFFFormat().readComments(path: path).map(\.value) == ["dsd"])
        // With audio, 0.23.12 skips past it.
        let audio = [UInt8](repeating: 0x69, count: 4000)
        let far = try Self.write("id3-far.dff", Self.dff(audio: audio, extra: Self.chunk("ID3 ", Self.id3)))
        #expect(try DSDIFFFormat().readInfo(path: far).tags.isEmpty)
        #expect(try DSDIFFFormat().readComments(path: far).isEmpty)
    }

    static func damagedDFFs() -> [(String, [UInt8])] {
        let form: [UInt8] = Array("FRM8".utf8) + Self.be64(16) + Array("DSD ".utf8)
        let absurd: [UInt8] = form + Array("COMT".utf8) + Self.be64(.max)
        let garbage: [UInt8] = (0..<5000).map { UInt8(truncatingIfNeeded: $0 * 11) }
        return [
            ("DST", Self.dff(audio: [1, 2], compression: "DST ")),
            ("nine channels", Self.dff(channels: 9, audio: [1, 2, 3, 4, 5, 6, 7, 8, 9])),
            ("no PROP", form + Self.chunk("DSD ", [1, 2])),
            ("absurd chunk", absurd),
            ("garbage", garbage),
            ("empty", []),
        ]
    }

    @Test(arguments: Self.damagedDFFs())
    func damagedDFFIsRejected(_ name: String, _ bytes: [UInt8]) throws {
        let path = try Self.write("damaged-\(name).dff", bytes)
        #expect(throws: FormatError.self) { try DSDIFFFormat().readInfo(path: path) }
        #expect(throws: FormatError.self) { try DSDIFFFormat().makeDecoder(input: MemoryInputStream(bytes)) }
    }

    @Test func everyPrefixOfADFFIsSafe() throws {
        let bytes = Self.dff(audio: [UInt8](repeating: 7, count: 64), extra: Self.nativeTags(artist: "A", title: "T"))
        for length in 0...bytes.count {
            let prefix = Array(bytes.prefix(length))
            let path = try Self.write("prefix.dff", prefix)
            _ = try? DSDIFFFormat().readInfo(path: path)
            if var decoder = try? DSDIFFFormat().makeDecoder(input: MemoryInputStream(prefix)) {
                _ = try? Self.decodeAll(&decoder)
            }
        }
    }

    // MARK: - Streams

    /// A stream that only reads forward (as an HTTP stream will), of unknown size.
    final class ForwardOnly: Input.InputStream {
        let inner: MemoryInputStream
        init(_ bytes: [UInt8]) { self.inner = MemoryInputStream(bytes, uri: "http://host/song") }
        var uri: String { self.inner.uri }
        var size: UInt64? { nil }
        var isSeekable: Bool { false }
        var mimeType: String? { "audio/x-dsd" }
        var offset: UInt64 { self.inner.offset }
        func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
            try self.inner.read(into: buffer)
        }
        func seek(to offset: UInt64) throws(InputError) { throw .notSeekable(uri: self.uri) }
    }

    @Test func streamsThatCannotSeekAreReadForward() throws {
        let bytes = Self.dsf(bytesPerChannel: 3 * 4096)
        var decoder = try DSFFormat().makeDecoder(input: ForwardOnly(bytes))
        #expect(decoder.totalFrames == 3 * 4096)
        var buffer = [UInt8](repeating: 0, count: 4096 * 2)
        _ = try buffer.withUnsafeMutableBytes { try decoder.decode(into: $0) }
        // Forward: the skipped block is read past.
        #expect(try decoder.seek(toFrame: 2 * 4096) == 2 * 4096)
        let frames = try buffer.withUnsafeMutableBytes { try decoder.decode(into: $0) }
        #expect(frames == 4096)
        #expect(buffer[0] == Self.reversed(UInt8(truncatingIfNeeded: 2 * 4096 * 3)))
        // Backward: not possible.
        #expect(throws: FormatError.self) { try decoder.seek(toFrame: 0) }

        let audio = (0..<6000).map { UInt8(truncatingIfNeeded: $0) }
        var dff = try DSDIFFFormat().makeDecoder(input: ForwardOnly(Self.dff(audio: audio)))
        #expect(try Self.decodeAll(&dff) == audio)
    }

    // MARK: - Registry

    @Test func registryListsTheDSDPlugins() {
        let names = FormatRegistry.standard.plugins.map(\.name)
        #expect(names.contains("dsdiff") && names.contains("dsf"))
        #expect(FormatRegistry.standard.plugin(forSuffix: "DSF")?.name == "dsf")
        #expect(FormatRegistry.standard.plugin(forMimeType: "audio/x-dsd")?.name == "dsdiff")
    }
}
