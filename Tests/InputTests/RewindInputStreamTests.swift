// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Model
import Testing

/// A stream that only reads forward, in pieces of at most `piece` bytes, as a radio stream does.
private final class ForwardOnlyStream: InputStream {
    let uri = "http://radio/"
    let size: UInt64? = nil
    let isSeekable = false
    let mimeType: String? = "audio/mpeg"
    private(set) var offset: UInt64 = 0
    private let bytes: [UInt8]
    private let piece: Int
    var tags: [[TagItem]] = [[TagItem(.name, "Radio")]]

    init(_ bytes: [UInt8], piece: Int) {
        self.bytes = bytes
        self.piece = piece
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        let count = min(buffer.count, self.piece, self.bytes.count - Int(self.offset))
        guard count > 0 else { return 0 }
        buffer.copyBytes(from: self.bytes[Int(self.offset)..<(Int(self.offset) + count)])
        self.offset += UInt64(count)
        return count
    }

    func seek(to offset: UInt64) throws(InputError) {
        guard offset == self.offset else { throw .notSeekable(uri: self.uri) }
    }

    func readTag() -> [TagItem]? { self.tags.isEmpty ? nil : self.tags.removeFirst() }
}

@Suite struct RewindInputStreamTests {
    private let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }

    @Test func aProbeCanGoBackToTheStart() throws {
        let stream = RewindInputStream(ForwardOnlyStream(self.bytes, piece: 3000))
        #expect(!stream.isSeekable)
        #expect(stream.mimeType == "audio/mpeg")
        #expect(try stream.readBytes(10_000) == Array(self.bytes[0..<10_000]))
        try stream.seek(to: 0)
        #expect(stream.offset == 0)
        #expect(try stream.readBytes(5000) == Array(self.bytes[0..<5000]))
        // Within the buffer, anywhere.
        try stream.seek(to: 7000)
        #expect(try stream.readBytes(6000) == Array(self.bytes[7000..<13_000]))
        // Reading on past the buffered bytes continues from the stream.
        #expect(try stream.readBytes(50_000) == Array(self.bytes[13_000..<63_000]))
        try stream.seek(to: 100)
        #expect(try stream.readBytes(10) == Array(self.bytes[100..<110]))
        #expect(stream.readTag() == [TagItem(.name, "Radio")])
        #expect(stream.readTag() == nil)
    }

    @Test func pastSixtyFourKibibytesTheBufferIsGivenUp() throws {
        let stream = RewindInputStream(ForwardOnlyStream(self.bytes, piece: 4096))
        #expect(try stream.readBytes(70_000) == Array(self.bytes[0..<70_000]))
        #expect(throws: InputError.notSeekable(uri: "http://radio/")) { try stream.seek(to: 0) }
        #expect(try stream.readBytes(1000) == Array(self.bytes[70_000..<71_000]))
        // Seeking to where the stream is stays allowed.
        try stream.seek(to: 71_000)
        #expect(try stream.readBytes(100) == Array(self.bytes[71_000..<71_100]))
    }

    @Test func aSeekOutsideTheBufferGivesItUp() throws {
        let stream = RewindInputStream(MemoryInputStream(self.bytes))
        #expect(try stream.readBytes(1000) == Array(self.bytes[0..<1000]))
        try stream.seek(to: 150_000)
        #expect(try stream.readBytes(10) == Array(self.bytes[150_000..<150_010]))
        try stream.seek(to: 0)
        #expect(try stream.readBytes(10) == Array(self.bytes[0..<10]))
    }
}
