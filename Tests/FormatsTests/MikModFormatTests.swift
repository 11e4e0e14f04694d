// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Model
import Testing

@testable import Formats

/// The mikmod plugin, asked directly (openmpt and modplug come first for every suffix but `stx` and `uni`).
/// libmikmod's player is process-wide: the cases that decode run one after another.
@Suite(.serialized) struct MikModFormatTests {
    static let plugin = MikModFormat()

    @Test func readsTheTitleOnly() throws {
        let plugin = try #require(Self.plugin)
        let dir = try TrackerFormatTests.directory([
            "tune.stx": ChiptuneBytes.protracker(), "untitled.uni": ChiptuneBytes.protracker(title: ""),
            "noise.stx": Array(repeating: 0, count: 600), "empty.uni": [],
            "cut.stx": Array(ChiptuneBytes.protracker().prefix(1500)),
        ])
        let info = try plugin.readInfo(path: dir + "/tune.stx")
        #expect(info == SongInfo(tags: [TagItem(.title, "fermata tune")]))
        #expect(try plugin.readInfo(path: dir + "/untitled.uni") == SongInfo())
        for name in ["noise.stx", "empty.uni", "cut.stx", "missing.stx"] {
            #expect(throws: FormatError.self) { try plugin.readInfo(path: dir + "/" + name) }
        }
        #expect(try FormatRegistry.standard.readInfo(path: dir + "/tune.stx") == info)
        #expect(try plugin.readComments(path: dir + "/tune.stx").isEmpty)
        #expect(try plugin.readPicture(path: dir + "/tune.stx") == nil)
    }

    @Test func decodesWholeChunksWithoutLengthOrSeeking() throws {
        let plugin = try #require(Self.plugin)
        var decoder = try plugin.makeDecoder(input: MemoryInputStream(ChiptuneBytes.protracker(), uri: "tune.stx"))
        #expect(decoder.format == AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        #expect(decoder.totalFrames == nil)
        #expect(!decoder.isSeekable)
        #expect(throws: FormatError.self) { try decoder.seek(toFrame: 44100) }
        let pcm = try TrackerFormatTests.decodeAll(&decoder, bufferFrames: 333)
        #expect(pcm.contains { $0 != 0 })
        // 7.68 s, rounded up to mpd's 4096-byte chunks.
        #expect(pcm.count % 4096 == 0)
        #expect((7680 * 441 / 10 * 4)...(7680 * 441 / 10 * 4 + 4096) ~= pcm.count)
        // A second decoder of the same module mixes the same bytes, whatever the buffer size.
        var again = try plugin.makeDecoder(input: MemoryInputStream(ChiptuneBytes.protracker(), uri: "tune.stx"))
        #expect(try TrackerFormatTests.decodeAll(&again, bufferFrames: 1024) == pcm)
        #expect(throws: FormatError.self) {
            _ = try plugin.makeDecoder(input: MemoryInputStream([UInt8](repeating: 0, count: 600), uri: "noise.stx"))
        }
    }

    /// `ChiptuneBytes.protracker()` whose last row jumps back to the start (effect B00).
    static let jumpBack: [UInt8] = {
        var bytes = ChiptuneBytes.protracker(title: "jump back")
        let at = 1084 + (63 * 4 + 3) * 4
        bytes.replaceSubrange(at..<(at + 4), with: [0, 0, 0x0B, 0])
        return bytes
    }()

    static func decoder(_ plugin: MikModFormat, _ bytes: [UInt8]) throws -> any Decoder {
        try plugin.makeDecoder(input: MemoryInputStream(bytes, uri: "tune.uni"))
    }

    @Test func loopsOnlyWhenTheOptionSaysSo() throws {
        let minute = 60 * 44100 * 4
        var once = try Self.decoder(try #require(Self.plugin), Self.jumpBack)
        #expect(try TrackerFormatTests.decodeAll(&once, bufferFrames: 1024, limit: minute).count < minute)
        let looping = try #require(MikModFormat(options: MikModOptions(loop: true)))
        var forever = try Self.decoder(looping, Self.jumpBack)
        #expect(try TrackerFormatTests.decodeAll(&forever, bufferFrames: 1024, limit: minute).count >= minute)
        // Without a jump back, a looping module ends too (libmikmod's `wrap` stays off, as in mpd).
        var plain = try Self.decoder(looping, ChiptuneBytes.protracker())
        #expect(try TrackerFormatTests.decodeAll(&plain, bufferFrames: 1024, limit: minute).count < minute)
    }

    @Test func aDecoderThatStartsEndsTheOneBefore() throws {
        let plugin = try #require(Self.plugin)
        var first = try Self.decoder(plugin, ChiptuneBytes.protracker())
        var second = try Self.decoder(plugin, ChiptuneBytes.protracker())
        var buffer = [UInt8](repeating: 0, count: 4096)
        #expect(try buffer.withUnsafeMutableBytes { try first.decode(into: $0) } == 1024)
        #expect(try buffer.withUnsafeMutableBytes { try second.decode(into: $0) } == 1024)
        #expect(try buffer.withUnsafeMutableBytes { try first.decode(into: $0) } == 0)
        #expect(try buffer.withUnsafeMutableBytes { try second.decode(into: $0) } == 1024)
    }

    @Test func mixesAtTheOptionsRate() throws {
        let slow = try #require(MikModFormat(options: MikModOptions(sampleRate: 22050)))
        defer { _ = MikModFormat() }
        var decoder = try Self.decoder(slow, ChiptuneBytes.protracker())
        #expect(decoder.format == AudioFormat(sampleRate: 22050, sampleFormat: .s16, channels: 2))
        let pcm = try TrackerFormatTests.decodeAll(&decoder, bufferFrames: 1024)
        #expect((7680 * 2205 / 100 * 4)...(7680 * 2205 / 100 * 4 + 4096) ~= pcm.count)
    }

    @Test func comesAfterModPlugAndOwnsTwoSuffixes() {
        #expect(FormatRegistry.standard.plugins(forSuffix: "stx").map(\.name) == ["mikmod"])
        #expect(FormatRegistry.standard.plugins(forSuffix: "UNI").map(\.name) == ["mikmod"])
        #expect(FormatRegistry.standard.plugins(forSuffix: "gdm").map(\.name) == ["openmpt", "mikmod"])
        let names = FormatRegistry.standard.plugins.map(\.name)
        #expect(names.firstIndex(of: "mikmod") == names.firstIndex(of: "modplug").map { $0 + 1 })
        #expect(MikModFormat(options: MikModOptions(sampleRate: 0)) == nil)
        #expect(MikModOptions() == MikModOptions(loop: false, sampleRate: 44100))
    }
}
