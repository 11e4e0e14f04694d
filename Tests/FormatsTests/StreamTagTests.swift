// SPDX-License-Identifier: GPL-3.0-or-later

import Formats
import Foundation
import Input
import Model
import Synchronization
import Testing

/// The tags a remote stream's decoder reports (`Decoder.readTag()`): what it read in the stream (Vorbis comments,
/// ID3v2), merged with the transport's (ICY) as `mpd`'s decoder bridge merges them.
@Suite struct StreamTagTests {
    /// A memory stream that also brings a transport tag, once.
    private final class TaggedInput: Input.InputStream {
        let inner: MemoryInputStream
        let pending: Mutex<[TagItem]?>
        init(_ bytes: [UInt8], uri: String, tags: [TagItem]?) {
            self.inner = MemoryInputStream(bytes, uri: uri)
            self.pending = Mutex(tags)
        }
        var uri: String { self.inner.uri }
        var size: UInt64? { self.inner.size }
        var isSeekable: Bool { self.inner.isSeekable }
        var mimeType: String? { nil }
        var offset: UInt64 { self.inner.offset }
        func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
            try self.inner.read(into: buffer)
        }
        func seek(to offset: UInt64) throws(InputError) { try self.inner.seek(to: offset) }
        func readTag() -> [TagItem]? {
            self.pending.withLock { tags in
                defer { tags = nil }
                return tags
            }
        }
    }

    private static func bytes(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    @Test func aFLACStreamsCommentsAreReportedOnce() throws {
        let path = try FLACFixtures.flac("stream-tags.flac", tags: ["ARTIST=Flac Artist", "TITLE=Flac Title"])
        let input = TaggedInput(try Self.bytes(path), uri: "http://h/a.flac", tags: nil)
        var decoder = try FormatRegistry.standard.openStreamDecoder(input: input)
        #expect(decoder.readTag() == [TagItem(.artist, "Flac Artist"), TagItem(.title, "Flac Title")])
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 16)
        defer { buffer.deallocate() }
        _ = try decoder.decode(into: buffer)
        #expect(decoder.readTag() == nil)
    }

    @Test func theDecodersTagsComeFirstThenTheTransportsOtherTypes() throws {
        let path = try FLACFixtures.flac("stream-tags-icy.flac", tags: ["TITLE=From The File"])
        let icy = [TagItem(.name, "Station"), TagItem(.title, "From ICY")]
        let input = TaggedInput(try Self.bytes(path), uri: "http://h/a.flac", tags: icy)
        let decoder = try FormatRegistry.standard.openStreamDecoder(input: input)
        #expect(decoder.readTag() == [TagItem(.title, "From The File"), TagItem(.name, "Station")])
        #expect(decoder.readTag() == nil)
    }

    /// A transport tag that arrives later (the station's next ICY title) wins over the decoder's of the same
    /// type, as `mpd`'s `SubmitData` merges it (`Tag::Merge(decoder, stream)`); the decoder's other types stay.
    @Test func aLaterTransportTagWinsOverTheDecoders() throws {
        let path = try FLACFixtures.flac("stream-tags-later.flac", tags: ["TITLE=From The File", "ARTIST=File Artist"])
        let icy = [TagItem(.name, "Station"), TagItem(.title, "From ICY")]
        let input = TaggedInput(try Self.bytes(path), uri: "http://h/a.flac", tags: icy)
        var decoder = try FormatRegistry.standard.openStreamDecoder(input: input)
        #expect(
            decoder.readTag() == [
                TagItem(.title, "From The File"), TagItem(.artist, "File Artist"), TagItem(.name, "Station"),
            ])
        input.pending.withLock { $0 = [TagItem(.title, "Later")] }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
        defer { buffer.deallocate() }
        _ = try decoder.decode(into: buffer)
        #expect(decoder.readTag() == [TagItem(.title, "Later"), TagItem(.artist, "File Artist")])
        #expect(decoder.readTag() == nil)
    }

    @Test func aVorbisStreamsCommentsAreReported() throws {
        let wave = try OggFormatTests.wave("stream-tags.wav", rate: 44100, channels: 2, seconds: "0.5")
        let path = try Fixtures.file("stream-tags.ogg") { path in
            try Fixtures.run("/usr/bin/oggenc", ["-Q", "-a", "Ogg Artist", "-t", "Ogg Title", "-o", path, wave])
        }
        let input = TaggedInput(try Self.bytes(path), uri: "http://h/a.ogg", tags: nil)
        let decoder = try FormatRegistry.standard.openStreamDecoder(input: input)
        #expect(decoder.readTag() == [TagItem(.title, "Ogg Title"), TagItem(.artist, "Ogg Artist")])
        #expect(decoder.readTag() == nil)
        // Without comments that are tags (oggenc's own ENCODER is none), nothing is reported.
        let plainPath = try OggFormatTests.vorbis("stream-plain.ogg")
        let plain = TaggedInput(try Self.bytes(plainPath), uri: "http://h/b.ogg", tags: nil)
        #expect(try FormatRegistry.standard.openStreamDecoder(input: plain).readTag() == nil)
    }

    /// An Opus stream's `OpusTags` are known when it opens (`lsinfo URL`), and every stream of a chain on an
    /// unseekable input (a radio) reports its own once its audio starts, as `mpd`'s `HandleTags`; so do chained
    /// Vorbis streams' comment headers.
    @Test(arguments: ["opus", "ogg"])
    func eachChainedStreamsTagsAreReported(_ suffix: String) throws {
        let wave = try OggFormatTests.wave("stream-chain.wav", rate: 48000, channels: 2, seconds: "0.5")
        func encoded(_ title: String) throws -> [UInt8] {
            let path = try Fixtures.file("chain-\(title).\(suffix)") { path in
                if suffix == "opus" {
                    try Fixtures.run("/usr/bin/opusenc", ["--quiet", "--title", title, wave, path])
                } else {
                    try Fixtures.run("/usr/bin/oggenc", ["-Q", "-t", title, "-o", path, wave])
                }
            }
            return try Self.bytes(path)
        }
        let plugin: any FormatPlugin = suffix == "opus" ? OpusFormat() : VorbisFormat()
        let input = RewindInputStream(
            SizelessStream(try encoded("One") + encoded("Two"), uri: "stream.wv", isSeekable: false))
        var decoder = try plugin.makeDecoder(input: input)
        #expect(decoder.readTag() == [TagItem(.title, "One")])
        #expect(decoder.readTag() == nil)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
        defer { buffer.deallocate() }
        var later: [[TagItem]] = []
        while try decoder.decode(into: buffer) > 0 {
            if let tags = decoder.readTag() { later.append(tags) }
        }
        #expect(later == [[TagItem(.title, "Two")]])
    }

    /// With ReplayGain on, `mpd`'s decoder thread reads the ReplayGain of a remote stream's APE tag before the
    /// plugin decodes it (`MaybeLoadReplayGain`), where the stream seeks cheaply: an `smb://` or `nfs://` one, not
    /// an `http(s)://` one; the plugin then decodes from the start.
    @Test func aStreamsAPETagGivesTheReplayGainWhereItSeeksCheaply() throws {
        let mp3 = try Fixtures.lame(
            "stream_ape_gain.mp3", rate: 44100, channels: 2, seconds: "1", lameArguments: ["--noreplaygain"])
        let bytes = try Self.bytes(mp3) + TagBytes.ape([TagBytes.text("REPLAYGAIN_TRACK_GAIN", "-6.00 dB")])
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 16)
        defer { buffer.deallocate() }
        func open(_ uri: String, reads: Bool) throws -> (gain: ReplayGainInfo?, frames: Int) {
            var decoder = try FormatRegistry.standard.openStreamDecoder(
                input: MemoryInputStream(bytes, uri: uri), readsAPEReplayGain: reads)
            var frames = 0
            while case let count = try decoder.decode(into: buffer), count > 0 { frames += count }
            return (decoder.replayGain, frames)
        }
        let plain = try open("smb://h/s/a.mp3", reads: false)
        #expect(plain.gain == nil && plain.frames == 44100)
        for uri in ["smb://h/s/a.mp3", "nfs://h/e/a.mp3"] {
            let read = try open(uri, reads: true)
            #expect(read.gain == ReplayGainInfo(trackGain: -6) && read.frames == plain.frames)
        }
        for uri in ["http://h/a.mp3", "HTTPS://h/a.mp3"] { #expect(try open(uri, reads: true).gain == nil) }
    }
}
