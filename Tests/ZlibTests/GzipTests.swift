// SPDX-License-Identifier: GPL-3.0-or-later

import Testing
import Zlib

@Suite struct GzipTests {
    /// "hello\n" as `gzip -n` writes it.
    static let member: [UInt8] = [
        0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xCB, 0x48, 0xCD, 0xC9, 0xC9, 0xE7, 0x02, 0x00,
        0x20, 0x30, 0x3A, 0x36, 0x06, 0x00, 0x00, 0x00,
    ]

    @Test func inflatesMembersOneAfterTheOther() throws {
        #expect(Gzip.isCompressed(Self.member))
        #expect(!Gzip.isCompressed(Array("info_begin\n".utf8)))
        #expect(try Gzip.inflate(Self.member, limit: 100) == Array("hello\n".utf8))
        #expect(try Gzip.inflate(Self.member + Self.member, limit: 100) == Array("hello\nhello\n".utf8))
    }

    @Test func refusesDamagedTruncatedAndOversizedStreams() throws {
        #expect(throws: GzipError.self) { try Gzip.inflate(Array(Self.member.dropLast(12)), limit: 100) }
        #expect(throws: GzipError.self) { try Gzip.inflate(Self.member, limit: 3) }
        var damaged = Self.member
        damaged[12] ^= 0xFF
        #expect(throws: GzipError.self) { try Gzip.inflate(damaged, limit: 100) }
        #expect(throws: GzipError.self) { try Gzip.inflate([0x1F, 0x8B, 0x08, 0x00], limit: 100) }
        // Truncated after some output: accepted only when asked for.
        #expect(throws: GzipError.self) { try Gzip.inflate(Array(Self.member.dropLast(8)), limit: 100) }
        #expect(
            try Gzip.inflate(Array(Self.member.dropLast(8)), limit: 100, acceptsTruncation: true)
                == Array("hello\n".utf8))
    }

    @Test(arguments: [Gzip.Level.standard, .fastest])
    func deflatesWhatInflates(level: Gzip.Level) throws {
        var text: [UInt8] = []
        for index in 0..<50_000 { text += Array("song_begin: \(index).flac\nTitle: \(index * 7)\nsong_end\n".utf8) }
        var deflater = Gzip.Deflater(level: level)
        // Fed in uneven pieces, as a writer flushes its buffer.
        var offset = 0
        while offset < text.count {
            let end = min(text.count, offset + 1 + offset % 70_000)
            text[offset..<end].withUnsafeBufferPointer { deflater.append($0) }
            offset = end
        }
        let compressed = try deflater.finish()
        #expect(Gzip.isCompressed(compressed))
        #expect(compressed.count < text.count / 4)
        #expect(try Gzip.inflate(compressed, limit: text.count) == text)
        #expect(try Gzip.inflate(Gzip.deflate([]), limit: 10) == [])
    }
}

@Suite struct GzipLevelTests {
    /// The fastest level is a different compressor (zlib's `deflate_fast`): its output differs from the default
    /// level's and is larger, and both inflate to the input.
    @Test func fastestDiffersFromStandard() throws {
        var text: [UInt8] = []
        for index in 0..<20_000 { text += Array("Artist: \(index % 97)\nTitle: \(index * 13 % 1009)\n".utf8) }
        var standard = Gzip.Deflater(level: .standard)
        var fastest = Gzip.Deflater(level: .fastest)
        text.withUnsafeBufferPointer { standard.append($0) }
        text.withUnsafeBufferPointer { fastest.append($0) }
        let small = try standard.finish()
        let fast = try fastest.finish()
        #expect(fast.count > small.count)
        #expect(try Gzip.inflate(fast, limit: text.count) == text)
    }
}
