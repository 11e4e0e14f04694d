// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Testing

@testable import Formats

/// The adplug plugin on hand-built RdosPlay RAW captures.
@Suite struct AdPlugFormatTests {
    /// A RAW capture at 100 Hz: one note held for `ticks` ticks, then the end marker and, if given, tags.
    static func raw(ticks: UInt8, tags: [UInt8]? = nil) -> [UInt8] {
        var bytes = Array("RAWADATA".utf8) + [0, 0, 0x00, 0x02] + ChiptuneBytes.le16(11932)
        bytes += [0x01, 0x20, 0x10, 0x40, 0xF0, 0x60, 0x01, 0x23, 0x00, 0x43, 0xF0, 0x63, 0x98, 0xA0, 0x31, 0xB0]
        bytes += [ticks, 0x00, 0xFF, 0xFF]
        return bytes + (tags ?? [])
    }

    @Test func tagsDurationAndOneTickPer1024Frames() throws {
        let tags: [UInt8] = [0x1A] + Array("Song".utf8) + [0, 0x1B] + Array("Composer".utf8) + [0, 0x1C, 0]
        let dir = try TrackerFormatTests.directory(["a.raw": Self.raw(ticks: 50, tags: tags), "b.d00": [1, 2, 3]])
        let info = try FormatRegistry.standard.readInfo(path: dir + "/a.raw")
        #expect(info.tags == [TagItem(.title, "Song"), TagItem(.artist, "Composer")])
        let duration = try #require(info.durationMilliseconds)
        #expect(duration >= 490 && duration <= 520)
        #expect(throws: FormatError.self) { try FormatRegistry.standard.readInfo(path: dir + "/b.d00") }

        var decoder = try FormatRegistry.standard.openDecoder(path: dir + "/a.raw")
        #expect(decoder.format == AudioFormat(sampleRate: 48000, sampleFormat: .s16, channels: 2))
        #expect(decoder.totalFrames == duration * 48)
        #expect(!decoder.isSeekable)
        #expect(throws: FormatError.self) { try decoder.seek(toFrame: 0) }
        let bytes = try TrackerFormatTests.decodeAll(&decoder, bufferFrames: 700)
        #expect(bytes.count % (1024 * 4) == 0)
        let ticks = bytes.count / (1024 * 4)
        #expect(ticks >= 50 && ticks <= 53)
        #expect(bytes.contains { $0 != 0 })

        let slow = try AdPlugFormat(options: AdPlugOptions(sampleRate: 22050))
        #expect(try slow.makeDecoder(path: dir + "/a.raw").format.sampleRate == 22050)
        #expect(throws: FormatError.self) { try AdPlugFormat(options: AdPlugOptions(sampleRate: 0)) }
    }
}
