// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Model
import Testing

@testable import Formats

/// The `pcm` plugin: raw streams chosen by MIME type, laid out as `mpd` 0.23.12's `pcm_stream_decode` reads them.
struct PCMStreamTests {
    private func layout(_ mime: String?) throws -> PCMStreamFormat.Layout {
        try PCMStreamFormat.layout(mimeType: mime)
    }

    private func message(_ mime: String) -> String? {
        do {
            _ = try self.layout(mime)
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func isListedLastWithMpdsMimeTypesAndNoSuffix() {
        let pcm = FormatRegistry.standard.plugins.last
        #expect(pcm?.name == "pcm")
        #expect(pcm?.suffixes == [])
        #expect(
            pcm?.mimeTypes == [
                "audio/L16", "audio/L24", "audio/x-mpd-float", "audio/x-mpd-cdda-pcm", "audio/x-mpd-cdda-pcm-reverse",
                "audio/x-mpd-alsa-pcm",
            ])
        #expect(throws: FormatError.self) { try PCMStreamFormat().readInfo(path: "/m/a.pcm") }
    }

    @Test func mimeTypesAndParametersGiveTheFormat() throws {
        let l16 = try self.layout("audio/L16; rate=8000; channels=2")
        #expect(l16.format == AudioFormat(sampleRate: 8000, sampleFormat: .s16, channels: 2))
        #expect(l16.swapsBytes && !l16.packed24)
        let l24 = try self.layout("audio/L24;rate=96000")
        #expect(l24.format == AudioFormat(sampleRate: 96000, sampleFormat: .s24, channels: 1))
        #expect(l24.packed24 && l24.inputFrameSize == 3)
        #expect(try self.layout("audio/x-mpd-float;rate=48000").format.description == "48000:f:1")
        let cdda = try self.layout("audio/x-mpd-cdda-pcm")
        #expect(cdda.format.description == "44100:16:2" && !cdda.swapsBytes)
        #expect(try self.layout("audio/x-mpd-cdda-pcm-reverse").swapsBytes)
        #expect(try self.layout(nil).format.description == "44100:16:2")
        #expect(try self.layout("audio/x-mpd-alsa-pcm;format=48000:24:2").format.description == "48000:24:2")
        #expect(try self.layout("audio/x-mpd-alsa-pcm; rate=8000").format.description == "8000:16:2")
        // The first of a repeated parameter counts; white space inside a segment is kept (mpd strips its ends).
        #expect(try self.layout("audio/L16;rate=8000;rate=16000").format.sampleRate == 8000)
        // mpd compares the base type exactly: with a space before the `;` it is no L16 stream any more.
        let spaced = try self.layout("audio/L16 ;rate=8000")
        #expect(spaced.format.description == "8000:16:2" && !spaced.swapsBytes)
    }

    @Test func badParametersAreRefusedWithMpdsMessages() {
        #expect(self.message("audio/L16") == "unsupported format: Missing 'rate' parameter: audio/L16")
        #expect(self.message("audio/L16;rate=8k") == "unsupported format: Failed to parse sample rate: 8k")
        #expect(self.message("audio/L16;rate=0") == "unsupported format: Invalid sample rate: 0")
        #expect(self.message("audio/L16;rate=1073741824") == "unsupported format: Invalid sample rate: 1073741824")
        #expect(self.message("audio/L16;rate=8000;channels=9") == "unsupported format: Invalid channel count: 9")
        #expect(self.message("audio/L16;rate=8000;channels=") == "unsupported format: Failed to parse sample rate: ")
        #expect(self.message("audio/x-mpd-alsa-pcm;format=48000:*:2") != nil)
    }

    @Test func l16IsBigEndianAndAPartialFrameAtTheEndIsDropped() throws {
        let input = MemoryInputStream(
            [0x12, 0x34, 0xAB, 0xCD, 0x01], uri: "http://radio/raw", mimeType: "audio/L16;rate=8000")
        var decoder = try FormatRegistry.standard.openDecoder(input: input)
        #expect(decoder.format == AudioFormat(sampleRate: 8000, sampleFormat: .s16, channels: 1))
        #expect(decoder.totalFrames == 2)
        #expect(try TrackerFormatTests.decodeAll(&decoder, bufferFrames: 1) == [0x34, 0x12, 0xCD, 0xAB])
    }

    @Test func l24IsUnpackedToSignExtended32BitWords() throws {
        let bytes: [UInt8] = [0x80, 0x00, 0x01, 0x7F, 0xFF, 0xFF, 0x00, 0x00, 0x10]
        var decoder = try FormatRegistry.standard.openDecoder(
            input: MemoryInputStream(bytes, uri: "s", mimeType: "audio/L24;rate=48000"))
        #expect(decoder.format.sampleFormat == .s24)
        #expect(decoder.totalFrames == 3)
        let out = try TrackerFormatTests.decodeAll(&decoder, bufferFrames: 2)
        let words = stride(from: 0, to: out.count, by: 4).map {
            Int32(
                bitPattern: UInt32(out[$0]) | UInt32(out[$0 + 1]) << 8 | UInt32(out[$0 + 2]) << 16
                    | UInt32(out[$0 + 3]) << 24)
        }
        #expect(words == [-8_388_607, 8_388_607, 16])
    }

    @Test func nativeStreamsPassThroughAndSeekByFrames() throws {
        let bytes: [UInt8] = Array(0..<16)
        var decoder = try FormatRegistry.standard.openDecoder(
            input: MemoryInputStream(bytes, uri: "cdda://1", mimeType: "audio/x-mpd-cdda-pcm"))
        #expect(decoder.totalFrames == 4)
        #expect(try TrackerFormatTests.decodeAll(&decoder, bufferFrames: 3) == bytes)
        #expect(try decoder.seek(toFrame: 2) == 2)
        #expect(try TrackerFormatTests.decodeAll(&decoder, bufferFrames: 8) == Array(8..<16))
        var reverse = try FormatRegistry.standard.openDecoder(
            input: MemoryInputStream(bytes, uri: "cdda://1", mimeType: "audio/x-mpd-cdda-pcm-reverse"))
        #expect(try TrackerFormatTests.decodeAll(&reverse, bufferFrames: 8).prefix(4) == [1, 0, 3, 2])
    }

    @Test func aStreamOfAnotherTypeIsNotTakenByPcm() {
        let input = MemoryInputStream([0, 1, 2, 3], uri: "http://radio/x", mimeType: "audio/x-unknown")
        #expect(throws: FormatError.self) { try FormatRegistry.standard.openDecoder(input: input) }
        #expect(FormatRegistry.standard.plugins(forMimeType: "AUDIO/l16; rate=8000").map(\.name) == ["pcm"])
    }
}
