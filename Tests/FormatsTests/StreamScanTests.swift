// SPDX-License-Identifier: GPL-3.0-or-later

import Formats
import Input
import Model
import Testing

/// `readcomments` and `readpicture` of a remote stream (`FormatRegistry.readComments(input:)`,
/// `readPicture(input:)`): the same answers as for the file, chosen by the stream's suffix or MIME type, and the
/// generic scan only for a stream that seeks and knows its size.
@Suite struct StreamScanTests {
    /// A 1×1 PNG.
    static let png: [UInt8] = [
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00,
        0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4, 0x89, 0x00, 0x00, 0x00,
        0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x60, 0x00, 0x00, 0x02, 0x00, 0x01, 0x54, 0xA2, 0x4F, 0x5D,
        0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
    ]

    /// The PNG as a Python literal, for mutagen scripts.
    static var pythonPNG: String { "bytes([" + Self.png.map(String.init).joined(separator: ",") + "])" }

    /// An MP3 with an ID3v2 tag holding a title, a `TXXX` frame and an `APIC` picture.
    static func pictureMP3() throws -> String {
        let plain = try Fixtures.lame("stream-scan-plain.mp3", rate: 44100, channels: 1, seconds: "0.5")
        return try Fixtures.tagged(
            "stream-scan-pictured.mp3", from: plain,
            script: """
                from mutagen.id3 import ID3, APIC, TIT2, TXXX
                tag = ID3()
                tag.add(TIT2(encoding=3, text="Scan Title"))
                tag.add(TXXX(encoding=3, desc="MOOD", text="calm"))
                tag.add(APIC(encoding=3, mime="image/png", type=3, desc="cover", data=\(Self.pythonPNG)))
                tag.save(PATH, v2_version=4)
                """)
    }

    /// An Ogg Vorbis file with two comments.
    static func commentedVorbis() throws -> String {
        let plain = try OggFormatTests.vorbis("stream-scan-plain.ogg")
        return try Fixtures.tagged(
            "stream-scan-commented.ogg", from: plain,
            script: OggFormatTests.comments("OggVorbis", [("artist", "Ogg Artist"), ("TITLE", "Ogg Title")]))
    }

    /// The file's bytes as a remote stream at `uri`.
    static func stream(_ path: String, uri: String, mimeType: String? = nil) throws -> MemoryInputStream {
        MemoryInputStream(try Fixtures.contents(path), uri: uri, mimeType: mimeType)
    }

    @Test func anMP3sPairsAndPictureComeFromTheGenericScanAsForTheFile() throws {
        let path = try Self.pictureMP3()
        let registry = FormatRegistry.standard
        let comments = try registry.readComments(input: try Self.stream(path, uri: "http://h/a.mp3"))
        #expect(comments.map { "\($0.name)=\($0.value)" } == ["MOOD=calm"])
        #expect(comments.map(\.value) == (try registry.readComments(path: path)).map(\.value))
        let picture = try registry.readPicture(input: try Self.stream(path, uri: "http://h/a.mp3"))
        #expect(picture == Picture(data: Self.png, mimeType: "image/png"))
    }

    @Test func aPluginWithoutAStreamScanIsPassedOver() throws {
        let path = try Self.pictureMP3()
        let uri = "http://h/a.mp3"
        #expect(throws: FormatError.notRecognized(path: uri)) {
            try FormatRegistry([MP3Format(scan: .mpg123)]).readComments(input: try Self.stream(path, uri: uri))
        }
        #expect(try FormatRegistry([MP3Format()]).readComments(input: try Self.stream(path, uri: uri)).count == 1)
    }

    @Test func aStreamThatCannotSeekHasNoGenericScan() throws {
        let path = try Self.pictureMP3()
        let registry = FormatRegistry.standard
        let unseekable = Unseekable(try Self.stream(path, uri: "http://h/a.mp3"))
        #expect(try registry.readComments(input: unseekable).isEmpty)
        let again = Unseekable(try Self.stream(path, uri: "http://h/a.mp3"))
        #expect(try registry.readPicture(input: again) == nil)
    }

    @Test func vorbisCommentsKeepTheirNamesAndAMIMETypeAloneChoosesThePlugin() throws {
        let path = try Self.commentedVorbis()
        let registry = FormatRegistry.standard
        let bySuffix = try registry.readComments(input: try Self.stream(path, uri: "http://h/a.ogg"))
        #expect(bySuffix.map { "\($0.name)=\($0.value)" } == ["artist=Ogg Artist", "TITLE=Ogg Title"])
        let byType = try registry.readComments(
            input: try Self.stream(path, uri: "http://h/stream", mimeType: "audio/ogg; charset=x"))
        #expect(byType.map(\.name) == bySuffix.map(\.name))
        #expect(try registry.readPicture(input: try Self.stream(path, uri: "http://h/a.ogg")) == nil)
    }

    @Test func aStreamWithNeitherSuffixNorTypeIsNotRecognized() throws {
        let path = try Self.commentedVorbis()
        #expect(throws: FormatError.notRecognized(path: "http://h/stream")) {
            try FormatRegistry.standard.readComments(input: try Self.stream(path, uri: "http://h/stream"))
        }
        #expect(throws: FormatError.notRecognized(path: "http://h/a.xyz")) {
            try FormatRegistry.standard.readPicture(input: try Self.stream(path, uri: "http://h/a.xyz"))
        }
    }

    @Test func ffmpegThrowsWhatItCannotOpenAsMpdsPluginDoes() throws {
        let noise = try Fixtures.bytes("stream-scan-noise.bin", (0..<4096).map { UInt8(truncatingIfNeeded: $0 * 37) })
        let input = try Self.stream(noise, uri: "http://h/x.bin", mimeType: "application/octet-stream")
        do {
            _ = try FormatRegistry.standard.readComments(input: input)
            Issue.record("noise was read")
        } catch {
            guard case .decoder(let message) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(message.hasPrefix("avformat_open_input() failed: "))
        }
    }
}

/// A stream that says it cannot seek.
private final class Unseekable: Input.InputStream {
    let inner: any Input.InputStream
    init(_ inner: any Input.InputStream) { self.inner = inner }
    var uri: String { self.inner.uri }
    var size: UInt64? { self.inner.size }
    var isSeekable: Bool { false }
    var mimeType: String? { self.inner.mimeType }
    var offset: UInt64 { self.inner.offset }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        try self.inner.read(into: buffer)
    }
    func seek(to offset: UInt64) throws(InputError) { throw .notSeekable(uri: self.uri) }
}
