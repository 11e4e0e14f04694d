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

    /// One song of each plugin that scanned a temporary copy before: WavPack, Musepack, ADTS AAC, DSF and DSDIFF
    /// with tags, and a module for openmpt (`.mod`) and for modplug (`.dfm`, which only modplug claims).
    static func formerCopyScans() throws -> [(path: String, uri: String)] {
        let modules = try TrackerFormatTests.directory([
            "tune.mod": ChiptuneBytes.protracker(), "tune.dfm": ChiptuneBytes.protracker(),
        ])
        let dff = DSDTests.dff(
            audio: (0..<4000).map { UInt8(truncatingIfNeeded: $0) },
            extra: DSDTests.nativeTags(artist: "Native", title: "Streamed"))
        return [
            (try PCMFixtures.wavpack("stream-info.wv", samples: 30000), "smb://h/s/a.wv"),
            (try Fixtures.mpc("stream-info.mpc", rate: 44100, channels: 2, seconds: "1"), "nfs://h/e/a.mpc"),
            (try Fixtures.adts("stream-info.aac", rate: 44100, channels: 2, seconds: "1.3"), "http://h/dav/a.aac"),
            (
                try DSDTests.write("stream-info.dsf", DSDTests.dsf(bytesPerChannel: 10000, id3: DSDTests.id3)),
                "http://h/a.dsf"
            ),
            (try DSDTests.write("stream-info.dff", dff), "smb://h/s/a.dff"),
            (modules + "/tune.mod", "http://h/dav/tune.mod"),
            (modules + "/tune.dfm", "nfs://h/e/tune.dfm"),
        ]
    }

    @Test func wavpackMusepackAACDSDAndModuleInfoIsTheFiles() throws {
        let registry = FormatRegistry.standard
        for (path, uri) in try Self.formerCopyScans() {
            let info = try registry.readInfo(input: try Self.counted(path, uri: uri))
            #expect(info == (try registry.readInfo(path: path)), "\(uri)")
            #expect(info.durationMilliseconds ?? 0 > 0, "\(uri)")
        }
    }

    /// (A DSDIFF file's tag chunks are found only after no audio, as in `mpd` 0.23.12: see `DSDTests`.)
    @Test(arguments: ["dsf", "dff"]) func dsdCommentsAndPictureOfAStreamAreTheFiles(suffix: String) throws {
        let picture = TagBytes.id3v24([
            TagBytes.textFrame("TIT2", ["Pictured"]),
            Array("APIC".utf8) + TagBytes.syncsafe(1 + 10 + 1 + 1 + 3) + [0, 0, 0] + Array("image/png".utf8)
                + [0, 3, 0] + [1, 2, 3],
            Array("TXXX".utf8) + TagBytes.syncsafe(1 + 5 + 1 + 3) + [0, 0, 0] + Array("NOTE1".utf8) + [0]
                + Array("dsd".utf8),
        ])
        let bytes =
            suffix == "dsf"
            ? DSDTests.dsf(bytesPerChannel: 4096, id3: picture)
            : DSDTests.dff(audio: [], extra: DSDTests.chunk("ID3 ", picture))
        let path = try DSDTests.write("stream-picture.\(suffix)", bytes)
        let registry = FormatRegistry.standard
        let uri = "http://h/dav/a.\(suffix)"
        let comments = try registry.readComments(input: try Self.counted(path, uri: uri))
        #expect(comments.map { "\($0.name)=\($0.value)" } == ["NOTE1=dsd"])
        #expect(
            comments.map { "\($0.name)=\($0.value)" }
                == (try registry.readComments(path: path)).map { "\($0.name)=\($0.value)" })
        let streamed = try registry.readPicture(input: try Self.counted(path, uri: uri))
        #expect(streamed?.data == [1, 2, 3])
        #expect(streamed == (try registry.readPicture(path: path)))
    }

    @Test func longWavPackMusepackAndDSFScansReadLittleOfTheStream() throws {
        let registry = FormatRegistry.standard
        for (path, uri) in [
            (try PCMFixtures.wavpack("stream-info-long.wv", samples: 44100 * 30), "smb://h/s/long.wv"),
            (try Fixtures.mpc("stream-info-long.mpc", rate: 44100, channels: 2, seconds: "60"), "nfs://h/e/long.mpc"),
            (
                try DSDTests.write("stream-info-long.dsf", DSDTests.dsf(bytesPerChannel: 1_000_000, id3: DSDTests.id3)),
                "http://h/dav/long.dsf"
            ),
        ] {
            let stream = try Self.counted(path, uri: uri)
            let info = try registry.readInfo(input: stream)
            #expect(info == (try registry.readInfo(path: path)), "\(uri)")
            let size = try Fixtures.contents(path).count
            #expect(size > 200_000, "\(uri)")
            #expect(stream.bytesRead.load(ordering: .relaxed) < size / 10, "\(uri)")
        }
    }

    /// `mpd`'s generic scan of a stream whose seeking is not cheap (HTTP) reads no APE tag and only an ID3v2 tag at
    /// the start; over SMB or NFS it reads them as for a file.
    @Test func overHTTPTheGenericScanReadsNoAPETag() throws {
        let source = try PCMFixtures.wavpack("stream-ape-source.wv", samples: 4410)
        let path = try Fixtures.tagged(
            "stream-ape.wv", from: source,
            script: "from mutagen.apev2 import APEv2\nt = APEv2()\nt['Title'] = 'Ape Title'\nt.save(PATH)\n")
        let registry = FormatRegistry.standard
        let local = try registry.readInfo(path: path)
        #expect(local.firstValue(.title) == "Ape Title")
        #expect(try registry.readInfo(input: try Self.counted(path, uri: "smb://h/s/a.wv")) == local)
        #expect(try registry.readInfo(input: try Self.counted(path, uri: "nfs://h/e/a.wv")) == local)
        let remote = try registry.readInfo(input: try Self.counted(path, uri: "http://h/dav/a.wv"))
        #expect(remote.tags.isEmpty)
        #expect(remote.durationMilliseconds == local.durationMilliseconds)
        let front = try StreamScanTests.pictureMP3()
        #expect(
            try registry.readInfo(input: try Self.counted(front, uri: "https://h/dav/a.mp3")).firstValue(.title)
                == "Scan Title")
    }

    /// faad counts every ADTS frame of a stream that seeks cheaply (SMB, NFS), as of a file; of an HTTP one it
    /// extrapolates from the first 128 frames (`mpd`'s `adts_song_duration`), reading little of it.
    @Test func aacFramesAreCountedOverSMBAndEstimatedOverHTTP() throws {
        let path = try Fixtures.adts("stream-long.aac", rate: 44100, channels: 2, seconds: "30")
        let registry = FormatRegistry.standard
        let local = try registry.readInfo(path: path)
        #expect(try registry.readInfo(input: try Self.counted(path, uri: "smb://h/s/a.aac")) == local)
        let stream = try Self.counted(path, uri: "http://h/dav/a.aac")
        let remote = try registry.readInfo(input: stream)
        let size = try Fixtures.contents(path).count
        #expect(stream.bytesRead.load(ordering: .relaxed) < size / 4)
        #expect(abs(Int(remote.durationMilliseconds ?? 0) - Int(local.durationMilliseconds ?? 0)) < 1000)
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
