// SPDX-License-Identifier: GPL-3.0-or-later

import Formats
import Input
import Model
import Synchronization
import Testing

/// What an update stores about a song of a mounted storage (`FormatRegistry.readInfo(input:)`, `mpd`'s
/// `tag_stream_scan`): the same as for the file, read through the stream only as far as the plugin's scan reads;
/// nothing from a plugin that only scans files.
@Suite struct StreamInfoScanTests {
    /// The file's bytes as a remote stream at `uri`, counting what is read of it.
    static func counted(_ path: String, uri: String) throws -> CountingStream {
        CountingStream(MemoryInputStream(try Fixtures.contents(path), uri: uri))
    }

    @Test func aFLACsInfoIsTheFilesAndOnlyItsMetadataIsRead() throws {
        let path = try FLACFixtures.flac(
            "stream-info-long.flac", seconds: "20", tags: ["TITLE=Long", "ARTIST=Streamed"])
        let registry = FormatRegistry.standard
        let stream = try Self.counted(path, uri: "smb://h/share/long.flac")
        let info = try registry.readInfo(input: stream)
        #expect(info == (try registry.readInfo(path: path)))
        #expect(info.tags.contains(TagItem(.title, "Long")))
        let size = try Fixtures.contents(path).count
        #expect(size > 500_000)
        #expect(stream.bytesRead.load(ordering: .relaxed) < size / 10)
    }

    @Test func anMP3sInfoIsTheFilesAndOnlyItsStartAndTagsAreRead() throws {
        let path = try Fixtures.lame("stream-info-long.mp3", rate: 44100, channels: 2, seconds: "60")
        let registry = FormatRegistry.standard
        let stream = try Self.counted(path, uri: "http://h/dav/long.mp3")
        let info = try registry.readInfo(input: stream)
        #expect(info == (try registry.readInfo(path: path)))
        #expect(info.durationMilliseconds ?? 0 > 59_000)
        let size = try Fixtures.contents(path).count
        #expect(size > 500_000)
        #expect(stream.bytesRead.load(ordering: .relaxed) < size / 10)
    }

    @Test func vorbisOpusMP3AndWAVInfoIsTheFiles() throws {
        let registry = FormatRegistry.standard
        for (path, uri) in [
            (try StreamScanTests.commentedVorbis(), "nfs://h/e/a.ogg"),
            (try OggFormatTests.opus("stream-info.opus"), "nfs://h/e/a.opus"),
            (try StreamScanTests.pictureMP3(), "http://h/dav/a.mp3"),
            (try OggFormatTests.wave("stream-info.wav", rate: 22050, channels: 1, seconds: "1"), "smb://h/s/a.wav"),
        ] {
            let info = try registry.readInfo(input: try Self.counted(path, uri: uri))
            #expect(info == (try registry.readInfo(path: path)), "\(uri)")
        }
    }

    @Test func aPluginThatOnlyScansFilesTakesNoStream() throws {
        let path = try StreamScanTests.pictureMP3()
        let uri = "smb://h/share/a.mp3"
        let registry = FormatRegistry([MP3Format(scan: .mpg123)])
        #expect(try registry.readInfo(path: path).tags.contains(TagItem(.title, "Scan Title")))
        let stream = try Self.counted(path, uri: uri)
        #expect(throws: FormatError.notRecognized(path: uri)) { try registry.readInfo(input: stream) }
        #expect(stream.bytesRead.load(ordering: .relaxed) == 0)
    }

    @Test func aStreamWithNeitherSuffixNorMIMETypeIsNoSong() throws {
        let path = try StreamScanTests.pictureMP3()
        #expect(throws: FormatError.notRecognized(path: "smb://h/share/noSuffix")) {
            try FormatRegistry.standard.readInfo(input: try Self.counted(path, uri: "smb://h/share/noSuffix"))
        }
    }
}

/// A stream that counts the bytes read through it.
final class CountingStream: Input.InputStream {
    let inner: any Input.InputStream
    let bytesRead = Atomic<Int>(0)
    init(_ inner: any Input.InputStream) { self.inner = inner }
    var uri: String { self.inner.uri }
    var size: UInt64? { self.inner.size }
    var isSeekable: Bool { self.inner.isSeekable }
    var mimeType: String? { self.inner.mimeType }
    var offset: UInt64 { self.inner.offset }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        let count = try self.inner.read(into: buffer)
        self.bytesRead.add(count, ordering: .relaxed)
        return count
    }
    func seek(to offset: UInt64) throws(InputError) { try self.inner.seek(to: offset) }
}
