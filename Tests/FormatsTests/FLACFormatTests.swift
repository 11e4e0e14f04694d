// SPDX-License-Identifier: GPL-3.0-or-later

import FLAC
import Formats
import Foundation
import Input
import Model
import TestTools
import Testing

/// FLAC and Ogg FLAC files made with sox and flac.
enum FLACFixtures {
    /// A FLAC (or, with `--ogg`, Ogg FLAC) of a sweep, tagged with `-T` entries (UTF-8 as given).
    static func flac(
        _ name: String, rate: Int = 44100, channels: Int = 2, bits: Int = 16, seconds: String = "0.5",
        tags: [String] = [], flacArguments: [String] = []
    ) throws -> String {
        try Fixtures.file(name) { path in
            let wave = path + ".wav"
            var synth: [String] = []
            for channel in 0..<channels { synth += ["sine", "\(300 + 50 * channel)-\(2000 - 100 * channel)"] }
            try Fixtures.run(
                "/usr/bin/sox",
                ["-R", "-D", "-n", "-r", "\(rate)", "-c", "\(channels)", "-b", "\(bits)"]
                    + ["-e", bits == 8 ? "unsigned-integer" : "signed-integer", wave, "synth", seconds] + synth
                    + ["vol", "0.6"])
            defer { try? FileManager.default.removeItem(atPath: wave) }
            try Fixtures.run(
                "/usr/bin/flac",
                ["--silent", "--force", "--no-utf8-convert"] + tags.flatMap { ["-T", $0] } + flacArguments + [
                    "-o", path, wave,
                ])
        }
    }

    /// A FLAC of `bits` valid bits in wider WAV containers (flac keeps the odd depth).
    static func oddDepth(_ name: String, bits: Int) throws -> String {
        try Fixtures.file(name) { path in
            let container = bits <= 16 ? 16 : 24
            let channels = 2
            let rate = 44100
            let frames = 11025
            let block = channels * container / 8
            var data: [UInt8] = []
            for index in 0..<frames {
                for channel in 0..<channels {
                    let phase = 2 * Double.pi * 440 * Double(channel + 1) * Double(index) / Double(rate)
                    let value = Int32(sin(phase) * 0.5 * Double(1 << (bits - 1))) << Int32(container - bits)
                    withUnsafeBytes(of: value.littleEndian) { data += $0.prefix(container / 8) }
                }
            }
            var format: [UInt8] = []
            func le(_ value: Int, _ count: Int) -> [UInt8] { (0..<count).map { UInt8((value >> (8 * $0)) & 0xFF) } }
            format += le(0xFFFE, 2) + le(channels, 2) + le(rate, 4) + le(rate * block, 4) + le(block, 2)
            format += le(container, 2) + le(22, 2) + le(bits, 2) + le(0, 4)
            format += [1, 0, 0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0xAA, 0, 0x38, 0x9B, 0x71]
            var body = Array("WAVEfmt ".utf8) + le(format.count, 4) + format
            body += Array("data".utf8) + le(data.count, 4) + data
            let wave = path + ".wav"
            try Data(Array("RIFF".utf8) + le(body.count, 4) + body).write(to: URL(fileURLWithPath: wave))
            defer { try? FileManager.default.removeItem(atPath: wave) }
            try Fixtures.run("/usr/bin/flac", ["--silent", "--force", "-o", path, wave])
        }
    }

    /// A copy of a FLAC whose VORBIS_COMMENT block holds exactly `entries` (raw bytes: invalid UTF-8 and
    /// entries without `=` allowed).
    static func withComments(_ name: String, from source: String, entries: [[UInt8]]) throws -> String {
        let bytes = try Fixtures.contents(source)
        var blocks: [(type: UInt8, payload: ArraySlice<UInt8>)] = []
        var position = 4
        while true {
            let header = bytes[position]
            let length = Int(bytes[position + 1]) << 16 | Int(bytes[position + 2]) << 8 | Int(bytes[position + 3])
            blocks.append((header & 0x7F, bytes[(position + 4)..<(position + 4 + length)]))
            position += 4 + length
            if header & 0x80 != 0 { break }
        }
        func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }
        var comment = le32(6) + Array("vendor".utf8) + le32(entries.count)
        for entry in entries { comment += le32(entry.count) + entry }
        var out = Array("fLaC".utf8)
        for (index, block) in blocks.enumerated() {
            let payload = block.type == 4 ? comment[...] : block.payload
            out.append(block.type | (index == blocks.count - 1 ? 0x80 : 0))
            out += [UInt8(payload.count >> 16), UInt8((payload.count >> 8) & 0xFF), UInt8(payload.count & 0xFF)]
            out += payload
        }
        return try Fixtures.bytes(name, out + bytes[position...])
    }

    /// A copy with STREAMINFO's total sample count set to 0 (unknown).
    static func withoutTotalSamples(_ name: String, from source: String) throws -> String {
        var bytes = try Fixtures.contents(source)
        // STREAMINFO starts at 8; its bytes 13…17 end with the 36-bit total: keep the top 4 bits of byte 13.
        bytes[8 + 13] &= 0xF0
        for index in (8 + 14)...(8 + 17) { bytes[index] = 0 }
        return try Fixtures.bytes(name, bytes)
    }
}

extension Fixtures {
    /// A tool's standard output as text.
    static func output(_ tool: String, _ arguments: [String]) throws -> String {
        String(decoding: try runTool(tool, arguments), as: UTF8.self)
    }
}

/// Decodes everything a decoder delivers.
func decodeAll(_ decoder: inout any Formats.Decoder, chunkFrames: Int = 1024) throws -> [UInt8] {
    let frameSize = decoder.format.frameSize
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkFrames * frameSize, alignment: 16)
    defer { buffer.deallocate() }
    var out: [UInt8] = []
    while true {
        let frames = try decoder.decode(into: buffer)
        if frames == 0 { break }
        out += buffer[0..<(frames * frameSize)]
    }
    return out
}

@Suite struct FLACFormatTests {
    /// The decoder reports the ReplayGain of the comments it read (as `mpd`'s FLAC plugin submits it), whatever
    /// the library knows; none for a file without.
    @Test func decoderReportsTheCommentsReplayGain() throws {
        let tagged = try FLACFixtures.flac(
            "gain.flac", tags: ["TITLE=x", "REPLAYGAIN_TRACK_GAIN=-6.5 dB", "REPLAYGAIN_TRACK_PEAK=0.5"])
        let gain = try FormatRegistry.standard.openDecoder(path: tagged).replayGain
        #expect(gain?.trackGain == -6.5 && gain?.trackPeak == 0.5 && gain?.albumGain == nil)
        let plain = try FLACFixtures.flac("plain.flac", tags: ["TITLE=x"])
        #expect(try FormatRegistry.standard.openDecoder(path: plain).replayGain == nil)
    }

    @Test func tagsInFileOrderWithMPDsMappings() throws {
        let path = try FLACFixtures.flac(
            "tags.flac",
            tags: [
                "TITLE=Title", "ARTIST=First", "ARTIST=Second", "TRACKNUMBER=03/12", "DISCNUMBER=2/3",
                "DESCRIPTION=described", "COMMENT=commented", "MOVEMENTNAME=Allegro", "MOVEMENT=1",
                "ALBUMARTISTSORT=Band, The", "MUSICBRAINZ_TRACKID=abc-123", "UNKNOWN=not a tag",
                "REPLAYGAIN_TRACK_GAIN=-7.5 dB", "REPLAYGAIN_ALBUM_PEAK=0.9", "ALBUM=Ünïcödé 日本",
            ])
        let info = try FLACFormat().readInfo(path: path)
        #expect(
            info.tags == [
                TagItem(.title, "Title"), TagItem(.artist, "First"), TagItem(.artist, "Second"), TagItem(.track, "3"),
                TagItem(.disc, "2"), TagItem(.comment, "described"), TagItem(.comment, "commented"),
                TagItem(.movement, "Allegro"), TagItem(.movementNumber, "1"), TagItem(.albumArtistSort, "Band, The"),
                TagItem(.musicBrainzTrackID, "abc-123"), TagItem(.album, "Ünïcödé 日本"),
            ])
        #expect(info.replayGain.trackGain == -7.5)
        #expect(info.replayGain.albumPeak.map { abs($0 - 0.9) < 1e-6 } == true)
        #expect(info.replayGain.trackPeak == nil)
        #expect(info.audioFormat == AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        #expect(info.durationMilliseconds == 500)
        #expect(!info.hasPicture && !info.hasPlaylist)
        let sheet = try FLACFixtures.flac("sheet.flac", tags: ["TITLE=x", "cueSheet=FILE \"a.wav\" WAVE"])
        #expect(try FLACFormat().readInfo(path: sheet).hasPlaylist)
        let comments = try FLACFormat().readComments(path: path)
        #expect(comments.count == 15)
        #expect(comments[11].name == "UNKNOWN" && comments[11].value == "not a tag")
        #expect(comments[3].name == "TRACKNUMBER" && comments[3].value == "03/12")
    }

    @Test func invalidUTF8AndEntriesWithoutEqualsSign() throws {
        let source = try FLACFixtures.flac("plain.flac")
        let path = try FLACFixtures.withComments(
            "raw_comments.flac", from: source,
            entries: [
                Array("TITLE=ok".utf8), [0x41, 0x52, 0x54, 0x49, 0x53, 0x54, 0x3D, 0x63, 0xE9, 0x20, 0xFF],
                Array("NOEQUALS".utf8), Array("=empty name".utf8), Array("GENRE=".utf8), Array("ALBUM=a\u{1}b".utf8),
            ])
        let info = try FLACFormat().readInfo(path: path)
        #expect(info.tags == [TagItem(.title, "ok"), TagItem(.artist, "c? ?"), TagItem(.album, "a b")])
        let comments = try FLACFormat().readComments(path: path)
        #expect(comments.map(\.name) == ["TITLE", "ARTIST", "GENRE", "ALBUM"])
        #expect(comments[2].value == "")
    }

    @Test(arguments: [
        (8, SampleFormat?.some(.s8)), (16, .s16), (24, .s24), (32, .s32),
    ])
    func formatsFollowTheDepth(_ bits: Int, _ expected: SampleFormat?) throws {
        let path = try FLACFixtures.flac("depth\(bits).flac", rate: 48000, channels: 1, bits: bits, seconds: "0.25")
        let info = try FLACFormat().readInfo(path: path)
        #expect(info.audioFormat == expected.map { AudioFormat(sampleRate: 48000, sampleFormat: $0, channels: 1) })
        #expect(info.durationMilliseconds == 250)
        var decoder = try FLACFormat().makeDecoder(path: path)
        #expect(decoder.format == info.audioFormat)
        #expect(decoder.totalFrames == 12000)
        let pcm = try decodeAll(&decoder)
        #expect(pcm.count == 12000 * decoder.format.frameSize)
    }

    @Test(arguments: [12, 20])
    func oddDepthsHaveNoFormatAndDoNotPlay(_ bits: Int) throws {
        let path = try FLACFixtures.oddDepth("odd\(bits).flac", bits: bits)
        let info = try FLACFormat().readInfo(path: path)
        #expect(info.audioFormat == nil)
        #expect(info.durationMilliseconds == 250)
        #expect(throws: FormatError.self) { _ = try FLACFormat().makeDecoder(path: path) }
    }

    @Test func twentyFourBitHighRateIsDeliveredUntouched() throws {
        let path = try FLACFixtures.flac("hires.flac", rate: 96000, bits: 24, seconds: "0.3")
        var decoder = try FLACFormat().makeDecoder(path: path)
        #expect(decoder.format == AudioFormat(sampleRate: 96000, sampleFormat: .s24, channels: 2))
        let pcm = try decodeAll(&decoder, chunkFrames: 777)
        let raw = path + ".raw"
        try Fixtures.run(
            "/usr/bin/flac",
            ["--silent", "--force", "-d", "--force-raw-format", "--endian=little", "--sign=signed", "-o", raw, path])
        let reference = try Fixtures.contents(raw)
        #expect(pcm.count / 4 == reference.count / 3)
        var same = true
        for index in 0..<(reference.count / 3) {
            let value =
                Int32(
                    bitPattern: UInt32(reference[3 * index]) << 8 | UInt32(reference[3 * index + 1]) << 16
                        | UInt32(reference[3 * index + 2]) << 24) >> 8
            let decoded = pcm.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 4 * index, as: Int32.self) }
            if value != decoded {
                same = false
                break
            }
        }
        #expect(same)
    }

    @Test func durationIsTruncatedAndZeroTotalMeansZero() throws {
        let path = try FLACFixtures.flac("odd_length.flac", rate: 22050, channels: 1, seconds: "0.61237")
        // The sample count as metaflac reads it; its milliseconds have a fraction, which mpd truncates.
        let samples = try Fixtures.output("/usr/bin/metaflac", ["--show-total-samples", path])
        let total = try #require(UInt64(samples.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(total * 1000 % 22050 != 0)
        #expect(try FLACFormat().readInfo(path: path).durationMilliseconds == total * 1000 / 22050)
        let zero = try FLACFixtures.withoutTotalSamples("zero_total.flac", from: path)
        let info = try FLACFormat().readInfo(path: zero)
        #expect(info.durationMilliseconds == 0)
        #expect(info.audioFormat == AudioFormat(sampleRate: 22050, sampleFormat: .s16, channels: 1))
        var decoder = try FLACFormat().makeDecoder(path: zero)
        #expect(decoder.totalFrames == nil)
        #expect(try decodeAll(&decoder).count == Int(total) * 2)
    }

    @Test func seekingMatchesAFullDecode() throws {
        let path = try FLACFixtures.flac("seekable.flac", rate: 48000, channels: 2, bits: 24, seconds: "0.8")
        var decoder = try FLACFormat().makeDecoder(path: path)
        let whole = try decodeAll(&decoder)
        let frameSize = decoder.format.frameSize
        for target in [38399, 0, 17, 4608, 20000] {
            #expect(try decoder.seek(toFrame: UInt64(target)) == UInt64(target))
            #expect(try decodeAll(&decoder, chunkFrames: 500) == Array(whole[(target * frameSize)...]))
        }
        #expect(throws: FormatError.self) { try decoder.seek(toFrame: 38400) }
    }

    @Test func mixRampAndBitRate() throws {
        let path = try FLACFixtures.flac(
            "mixramp.flac", seconds: "1", tags: ["MIXRAMP_START=-17.0 0.0;", "MIXRAMP_END=-20 0.5;", "MIXRAMP_END=x"])
        var decoder = try FLACFormat().makeDecoder(path: path)
        #expect(decoder.mixRampStart == "-17.0 0.0;")
        #expect(decoder.mixRampEnd == "x")
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096 * 4, alignment: 16)
        defer { buffer.deallocate() }
        _ = try decoder.decode(into: buffer)
        #expect(decoder.bitRate == 0)
        _ = try decoder.decode(into: buffer)
        #expect(decoder.bitRate > 50 && decoder.bitRate < 1411)
    }

    @Test func picturesSkipURLs() throws {
        let image = try Fixtures.bytes("tiny.png", Array("PNGDATA-PNGDATA".utf8))
        let path = try FLACFixtures.flac(
            "pictures.flac",
            flacArguments: [
                "--picture=3|-->|link|1x1x24|http://example.com/x.png", "--picture=4|image/png|back|1x1x24|\(image)",
            ]
        )
        #expect(
            try FLACFormat().readPicture(path: path)
                == Picture(data: Array("PNGDATA-PNGDATA".utf8), mimeType: "image/png"))
        #expect(try FLACFormat().readInfo(path: path).hasPicture)
        let linkOnly = try FLACFixtures.flac(
            "link_only.flac", flacArguments: ["--picture=3|-->|link|1x1x24|http://example.com/"])
        #expect(try FLACFormat().readPicture(path: linkOnly) == nil)
        #expect(try !FLACFormat().readInfo(path: linkOnly).hasPicture)
    }

    @Test func oggFLACIsReadAndOtherOggIsNot() throws {
        let path = try FLACFixtures.flac(
            "ogg_flac.oga", rate: 48000, tags: ["TITLE=In Ogg", "ARTIST=A"], flacArguments: ["--ogg"])
        let info = try OggFLACFormat().readInfo(path: path)
        #expect(info.tags == [TagItem(.title, "In Ogg"), TagItem(.artist, "A")])
        #expect(info.audioFormat == AudioFormat(sampleRate: 48000, sampleFormat: .s16, channels: 2))
        #expect(info.durationMilliseconds == 500)
        var decoder = try OggFLACFormat().makeDecoder(path: path)
        #expect(try decodeAll(&decoder).count == 24000 * 4)
        #expect(decoder.bitRate == 0)

        let vorbis = try Fixtures.file("vorbis.ogg") { out in
            try Fixtures.run(
                "/usr/bin/sox", ["-R", "-n", "-r", "44100", "-c", "2", "-t", "ogg", out, "synth", "0.3", "sine", "440"])
        }
        #expect(throws: FormatError.notRecognized(path: vorbis)) { _ = try OggFLACFormat().readInfo(path: vorbis) }
        #expect(throws: FormatError.notRecognized(path: vorbis)) { _ = try OggFLACFormat().readComments(path: vorbis) }
        #expect(throws: FormatError.self) { _ = try OggFLACFormat().makeDecoder(path: vorbis) }
        // Native FLAC named .ogg is not Ogg FLAC either.
        let native = try Fixtures.bytes("native.ogg", try Fixtures.contents(try FLACFixtures.flac("plain.flac")))
        #expect(throws: FormatError.self) { _ = try OggFLACFormat().readInfo(path: native) }
        #expect(throws: FormatError.self) { _ = try OggFLACFormat().makeDecoder(path: native) }
    }

    @Test func id3v2InFrontIsSkippedAndUsedWhenThereAreNoComments() throws {
        let source = try FLACFixtures.flac("plain.flac")
        // An ID3v2.3 tag with one TIT2 frame.
        let title = [UInt8](Array("\u{0}ID3 title".utf8))
        var frame = Array("TIT2".utf8) + [0, 0, 0, UInt8(title.count), 0, 0] + title
        frame += [UInt8](repeating: 0, count: 10)
        let size = frame.count
        let id3 = Array("ID3".utf8) + [3, 0, 0, 0, 0, UInt8(size >> 7), UInt8(size & 0x7F)] + frame
        let noComments = try Fixtures.bytes(
            "id3_no_comments.flac",
            id3 + (try Fixtures.contents(try FLACFixtures.withComments("empty_vc.flac", from: source, entries: []))))
        let withComments = try Fixtures.bytes(
            "id3_with_comments.flac",
            id3
                + (try Fixtures.contents(
                    try FLACFixtures.withComments("vc.flac", from: source, entries: [Array("TITLE=Vorbis".utf8)]))))
        #expect(try FormatRegistry.standard.readInfo(path: withComments).tags == [TagItem(.title, "Vorbis")])
        let info = try FormatRegistry.standard.readInfo(path: noComments)
        #expect(info.tags == [TagItem(.title, "ID3 title")])
        #expect(info.audioFormat == AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        var decoder = try FormatRegistry.standard.openDecoder(path: noComments)
        #expect(try decodeAll(&decoder).count == 22050 * 4)
    }

    @Test func brokenFilesThrowAndTruncatedAudioPlaysWhatIsThere() throws {
        let source = try FLACFixtures.flac("plain.flac")
        let bytes = try Fixtures.contents(source)
        for (name, content) in [
            ("empty.flac", [UInt8]()), ("magic.flac", Array("fLaC".utf8)), ("head.flac", Array(bytes.prefix(30))),
            ("garbage.flac", (0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }),
        ] {
            let path = try Fixtures.bytes(name, content)
            #expect(throws: FormatError.self) { _ = try FLACFormat().readInfo(path: path) }
            #expect(throws: FormatError.self) { _ = try FLACFormat().readPicture(path: path) }
            #expect(throws: FormatError.self) { _ = try FLACFormat().makeDecoder(path: path) }
        }
        let truncated = try Fixtures.bytes("truncated.flac", Array(bytes.prefix(bytes.count / 2)))
        let info = try FLACFormat().readInfo(path: truncated)
        #expect(info.durationMilliseconds == 500)
        var decoder = try FLACFormat().makeDecoder(path: truncated)
        let pcm = try decodeAll(&decoder)
        #expect(pcm.count > 0 && pcm.count < 22050 * 4)
        #expect(throws: FormatError.self) { _ = try FLACFormat().readInfo(path: "/nonexistent/x.flac") }
    }

    @Test func registryOrderAndSuffixes() {
        let names = FormatRegistry.standard.plugins.map(\.name)
        let oggflac = names.firstIndex(of: "oggflac")
        let flac = names.firstIndex(of: "flac")
        #expect(oggflac != nil && flac != nil && oggflac! < flac!)
        #expect(names.firstIndex(of: "mad")! < oggflac!)
        #expect(FormatRegistry.standard.plugin(forPath: "a/B.FLAC")?.name == "flac")
        #expect(FormatRegistry.standard.plugins(forPath: "x.oga").map(\.name).contains("oggflac"))
        #expect(FormatRegistry.standard.plugin(forMimeType: "audio/x-flac")?.name == "flac")
        #expect(FormatRegistry.standard.plugins(forMimeType: "audio/x-flac+ogg").map(\.name) == ["oggflac"])
    }
}
