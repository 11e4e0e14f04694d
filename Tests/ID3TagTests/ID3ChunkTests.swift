// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import ID3Tag
import Model
import Testing

/// RIFF and AIFF files built by hand around an ID3 chunk.
enum Chunks {
    static func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
    static func be32(_ value: Int) -> [UInt8] { self.le32(value).reversed() }

    /// A chunk with its size in the byte order of the container, padded to even length.
    static func chunk(_ id: String, _ body: [UInt8], bigEndian: Bool = false) -> [UInt8] {
        Array(id.utf8) + (bigEndian ? self.be32(body.count) : self.le32(body.count)) + body
            + (body.count % 2 == 1 ? [0] : [])
    }

    static func riff(_ chunks: [[UInt8]], sizeField: Int? = nil) -> [UInt8] {
        let body = Array("WAVE".utf8) + chunks.flatMap { $0 }
        return Array("RIFF".utf8) + self.le32(sizeField ?? body.count) + body
    }

    static func aiff(_ chunks: [[UInt8]], form: String = "AIFF") -> [UInt8] {
        let body = Array(form.utf8) + chunks.flatMap { $0 }
        return Array("FORM".utf8) + self.be32(body.count) + body
    }

    static let format = Chunks.chunk("fmt ", [1, 0, 2, 0] + Chunks.le32(44100) + Chunks.le32(176400) + [4, 0, 16, 0])
    static let samples = Chunks.chunk("data", [UInt8](repeating: 0x11, count: 400))

    static func title(_ text: String) -> [UInt8] { Build.tag([Build.text("TIT2", [text])]) }

    static func load(_ bytes: [UInt8]) throws -> [String]? {
        let path = try Build.temporaryFile(bytes)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return ID3Loader.load(from: try TagSourceFile(path: path))?.mpdTagItems().lines
    }
}

@Suite struct ID3ChunkTests {
    @Test(arguments: ["id3 ", "ID3 "])
    func riffChunkAfterTheAudio(_ id: String) throws {
        let file = Chunks.riff([Chunks.format, Chunks.samples, Chunks.chunk(id, Chunks.title("in RIFF"))])
        #expect(try Chunks.load(file) == ["Title: in RIFF"])
    }

    @Test func oddChunksArePadded() throws {
        let odd = Chunks.chunk("odd ", [1, 2, 3])
        let file = Chunks.riff([Chunks.format, odd, Chunks.samples, Chunks.chunk("id3 ", Chunks.title("padded"))])
        #expect(try Chunks.load(file) == ["Title: padded"])
    }

    @Test func aiffChunk() throws {
        for form in ["AIFF", "AIFC"] {
            let file = Chunks.aiff(
                [
                    Chunks.chunk("COMM", [UInt8](repeating: 0, count: 18), bigEndian: true),
                    Chunks.chunk("ID3 ", Chunks.title("in \(form)"), bigEndian: true),
                ], form: form)
            #expect(try Chunks.load(file) == ["Title: in \(form)"])
        }
    }

    /// Only `ID3 ` counts in AIFF; a FORM of another type is not searched.
    @Test func aiffRulesFollowMPD() throws {
        let lower = Chunks.aiff([Chunks.chunk("id3 ", Chunks.title("lower"), bigEndian: true)])
        #expect(try Chunks.load(lower) == nil)
        let other = Chunks.aiff([Chunks.chunk("ID3 ", Chunks.title("8SVX"), bigEndian: true)], form: "8SVX")
        #expect(try Chunks.load(other) == nil)
    }

    /// A tag at the start of the file wins; the chunk wins over an ID3v1 tag at the end.
    @Test func orderOfTheSearch() throws {
        let chunked = Chunks.riff([Chunks.format, Chunks.samples, Chunks.chunk("id3 ", Chunks.title("chunk"))])
        #expect(try Chunks.load(Chunks.title("front") + chunked) == ["Title: front"])
        #expect(try Chunks.load(chunked + Build.id3v1(title: "v1")) == ["Title: chunk"])
    }

    /// The RIFF size may not exceed the file; a chunk size past the end or above 2³¹ − 1 ends the walk; a chunk
    /// over 4 MiB is not read; a chunk claiming more than the file holds gives nothing.
    @Test func hostileSizes() throws {
        let tag = Chunks.chunk("id3 ", Chunks.title("x"))
        #expect(try Chunks.load(Chunks.riff([Chunks.format, tag], sizeField: 0x7FFF_FFFF)) == nil)
        let runaway = Array("junk".utf8) + Chunks.le32(0x7FFF_FFF0)
        #expect(try Chunks.load(Chunks.riff([Chunks.format, runaway, tag])) == nil)
        let huge = Array("junk".utf8) + [0xFF, 0xFF, 0xFF, 0xFF]
        #expect(try Chunks.load(Chunks.riff([huge, tag])) == nil)
        let big = Array("id3 ".utf8) + Chunks.le32(4 * 1024 * 1024 + 1) + Chunks.title("big")
        #expect(try Chunks.load(Chunks.riff([big])) == nil)
        let short = Array("id3 ".utf8) + Chunks.le32(5000) + Chunks.title("short")
        #expect(try Chunks.load(Chunks.riff([short])) == nil)
    }

    /// Exactly 4 MiB is still read (the tag at its start parses; the rest is padding).
    @Test func fourMebibytesAreRead() throws {
        let body = Chunks.title("limit") + [UInt8](repeating: 0, count: 4 * 1024 * 1024 - Chunks.title("limit").count)
        #expect(try Chunks.load(Chunks.riff([Chunks.chunk("id3 ", body)])) == ["Title: limit"])
    }

    @Test func locatesChunks() throws {
        let file = Chunks.riff([Chunks.format, Chunks.chunk("ID3 ", [1, 2, 3])])
        let path = try Build.temporaryFile(file)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let source = try TagSourceFile(path: path)
        let found = try #require(ID3Loader.riffID3Chunk(source))
        #expect(found.offset == 12 + Chunks.format.count + 8 && found.size == 3)
        #expect(ID3Loader.aiffID3Chunk(source) == nil)
    }
}
