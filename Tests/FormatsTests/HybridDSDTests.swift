// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Model
import Testing

@testable import Formats

/// The `hybrid_dsd` plugin on hand-built box sequences (the fixture library has real M4A files with them).
struct HybridDSDTests {
    private static func be32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8((value >> (24 - 8 * $0)) & 0xFF) } }

    private static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        Self.be32(8 + payload.count) + Array(type.utf8) + payload
    }

    private static func file(
        version: Int = 1, channels: Int = 2, bitRate: Int = 2_822_400, format: Int = 0, data: [UInt8]
    ) -> [UInt8] {
        Self.box("ftyp", Array("M4A \0\0\0\0".utf8)) + Self.box("free", [0, 0, 0, 0])
            + Self.box("bphv", Self.be32(version)) + Self.box("bphc", Self.be32(channels))
            + Self.box("bphr", Self.be32(bitRate)) + Self.box("bphf", Self.be32(format))
            + Self.box("bphd", data)
    }

    @Test func playsTheDSDBoxInWholeFrames() throws {
        let data = (0..<101).map { UInt8($0) }
        var decoder = try HybridDSDFormat().makeDecoder(input: MemoryInputStream(Self.file(data: data), uri: "a.m4a"))
        #expect(decoder.format == AudioFormat(sampleRate: 352_800, sampleFormat: .dsd, channels: 2))
        #expect(decoder.format.description == "dsd64:2")
        #expect(decoder.totalFrames == 50)
        #expect(decoder.totalFramesOverrideLibrary)
        #expect(decoder.bitRate == 5512)
        #expect(try TrackerFormatTests.decodeAll(&decoder, bufferFrames: 7) == Array(data.prefix(100)))
        #expect(try decoder.seek(toFrame: 45) == 45)
        #expect(try TrackerFormatTests.decodeAll(&decoder, bufferFrames: 64) == Array(data[90..<100]))
        // At or past the end, the song ends.
        #expect(try decoder.seek(toFrame: 50) == 50)
        #expect(try TrackerFormatTests.decodeAll(&decoder, bufferFrames: 64).isEmpty)
    }

    @Test func aCutDataBoxPlaysWhatIsThere() throws {
        let whole = Self.file(data: [UInt8](repeating: 0x69, count: 1000))
        var decoder = try HybridDSDFormat().makeDecoder(input: MemoryInputStream(Array(whole.dropLast(501)), uri: "a"))
        #expect(decoder.totalFrames == 500)
        #expect(try TrackerFormatTests.decodeAll(&decoder, bufferFrames: 64).count == 498)
    }

    @Test func otherFilesAreLeftToTheNextPlugin() {
        let refused: [[UInt8]] = [
            Self.file(version: 2, data: [1, 2]), Self.file(format: 1, data: [1, 2]), Self.file(channels: 9, data: [1]),
            Self.file(channels: 0, data: [1]), Self.file(bitRate: 7, data: [1]),
            // No version box.
            Self.box("bphc", Self.be32(2)) + Self.box("bphr", Self.be32(2_822_400))
                + Self.box("bphf", Self.be32(0)) + Self.box("bphd", [1, 2]),
            // A box shorter than its header, one longer than the file, a version box of the wrong size.
            Self.be32(4) + Array("free".utf8), Self.be32(1 << 30) + Array("mdat".utf8),
            Self.box("bphv", [0, 0, 1]), [], [0, 0, 0],
        ]
        for bytes in refused {
            #expect(throws: FormatError.self) {
                try HybridDSDFormat().makeDecoder(input: MemoryInputStream(bytes, uri: "x.m4a"))
            }
        }
        #expect(throws: FormatError.self) { try HybridDSDFormat().readInfo(path: "/m/x.m4a") }
    }
}
