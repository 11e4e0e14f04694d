// SPDX-License-Identifier: GPL-3.0-or-later

import Curl
import Formats
import Input
import Model
import TestTools
import Testing

/// An MP3 served as a file and as an endless ICY radio stream, decoded through the format plugins as the
/// decoder thread will (mpd's `decoder_run_stream`: by MIME type, then suffix, over a rewindable stream).
@Suite(.serialized) struct CurlDecodingTests {
    private static let files = MadeFiles("curl-decoding")
    private static let server: StreamServer = {
        do {
            _ = try files.file("tone.mp3") { path in
                let wave = path + ".wav"
                try makeSweep(at: wave, rate: 44100, channels: 2, seconds: "3")
                try runTool("/usr/bin/lame", ["--quiet", "-b", "128", wave, path])
                removeFile(wave)
            }
            return try StreamServer(root: files.directory)
        } catch {
            fatalError("cannot make the MP3 or start tools/streamserver.py: \(error)")
        }
    }()

    /// Decodes up to `limit` frames; returns the frames and the tags read between decodes.
    private func decode(_ input: any InputStream, limit: Int) throws -> (
        format: AudioFormat, frames: Int, tags: [[TagItem]]
    ) {
        var decoder = try FormatRegistry.standard.openDecoder(input: input)
        var buffer = [UInt8](repeating: 0, count: 65536)
        var frames = 0
        var tags: [[TagItem]] = []
        while frames < limit {
            let count = try buffer.withUnsafeMutableBytes { try decoder.decode(into: $0) }
            if count == 0 { break }
            frames += count
            if let tag = input.readTag() { tags.append(tag) }
        }
        return (decoder.format, frames, tags)
    }

    @Test func aRadioStreamDecodesWithItsTitles() throws {
        let url = Self.server.url("/radio/tone.mp3?metaint=8192&every=2")
        let radio = try CurlInputStream(url: url)
        defer { radio.cancellation.cancel() }
        #expect(radio.mimeType == "audio/mpeg")
        let (format, frames, tags) = try self.decode(RewindInputStream(radio), limit: 44100 * 10)
        #expect(format.sampleRate == 44100)
        #expect(format.channels == 2)
        // Ten seconds of an endless stream: the three-second file looped, and titles changing on the way.
        #expect(frames >= 44100 * 10)
        // The mad plugin reads up to 40 KiB at a time, as mpd's: by the first tag read, a title may have come.
        #expect(tags.first?.contains(TagItem(.name, "Fermata Test Radio")) == true)
        // Only the newest title is read after each decode (as mpd's input tag): which ones is up to the reads.
        let titles = Set(tags.compactMap { tag in tag.first { $0.type == .title }?.value })
        #expect(titles.count >= 2 && titles.allSatisfy { $0.hasPrefix("Title ") })
        #expect(tags.allSatisfy { $0.contains(TagItem(.name, "Fermata Test Radio")) })
    }

    @Test func aFileDecodesWhole() throws {
        let stream = try CurlInputStream(url: Self.server.url("/type/audio~mpeg/tone.mp3"))
        #expect(stream.isSeekable)
        let (format, frames, tags) = try self.decode(stream, limit: .max)
        #expect(format.sampleRate == 44100)
        // lame pads the start and the end; the decoder trims what its header says.
        #expect(abs(frames - 3 * 44100) < 2 * 1152)
        #expect(tags.isEmpty)
    }
}
