// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Testing

@testable import Formats

extension ChiptuneBytes {
    /// A PSID v2 of `songs` songs whose init routine gates a sawtooth on voice 1 (tools/fixtures/sidplay.py's).
    static func psid(songs: Int, name: String = "Three Songs", released: String = "1987 Test Group") -> [UInt8] {
        var code: [UInt8] = [
            0xAA, 0xA9, 0x0F, 0x8D, 0x18, 0xD4, 0xBD, 0x60, 0x10, 0x8D, 0x01, 0xD4, 0xA9, 0xF0, 0x8D, 0x06, 0xD4,
            0xA9, 0x21, 0x8D, 0x04, 0xD4, 0x60,
        ]
        let play = 0x1000 + code.count
        code.append(0x60)
        code += [UInt8](repeating: 0, count: 0x60 - code.count) + [0x10, 0x20, 0x30, 0x40]
        var header: [UInt8] = Array("PSID".utf8) + be16(2) + be16(0x7C) + be16(0) + be16(0x1000) + be16(play)
        header += be16(songs) + be16(1) + [0, 0, 0, 0]
        header += padded(name, 32) + padded("SID Person", 32) + padded(released, 32) + be16(0x14) + [0, 0, 0, 0]
        return header + le16(0x1000) + code
    }
}

/// The sidplay plugin on hand-built PSID files.
@Suite struct SidplayFormatTests {
    @Test func everyTuneIsAContainerOfSidSongs() throws {
        let dir = try TrackerFormatTests.directory([
            "three.sid": ChiptuneBytes.psid(songs: 3), "one.PRG": ChiptuneBytes.psid(songs: 1, name: "One"),
        ])
        let songs = try #require(FormatRegistry.standard.containerSongs(path: dir + "/three.sid"))
        #expect(songs.map(\.name) == ["tune_001.sid", "tune_002.sid", "tune_003.sid"])
        #expect(
            songs[1].info.tags == [
                TagItem(.album, "Three Songs"), TagItem(.title, "Three Songs (2/3)"), TagItem(.artist, "SID Person"),
                TagItem(.date, "1987"), TagItem(.track, "2"),
            ])
        #expect(songs[1].info.durationMilliseconds == nil)
        #expect(try FormatRegistry.standard.readInfo(path: dir + "/three.sid/tune_002.sid") == songs[1].info)
        // One song is a container too (all_files_are_containers), under any suffix case of mpd's list.
        let one = try #require(FormatRegistry.standard.containerSongs(path: dir + "/one.PRG"))
        #expect(one.map(\.name) == ["tune_001.sid"])
        #expect(one[0].info.tags.first { $0.type == .title }?.value == "One")
        let plain = try SidplayFormat(options: SidplayOptions(allFilesAreContainers: false))
        #expect(try plain.containerSongs(path: dir + "/one.PRG") == nil)
        #expect(try plain.containerSongs(path: dir + "/three.sid")?.count == 3)
    }

    @Test func genreAndBrokenFiles() throws {
        let dir = try TrackerFormatTests.directory([
            "a.sid": ChiptuneBytes.psid(songs: 1, released: "19??\tsomeone"), "bad.sid": Array("nothing".utf8),
        ])
        let plugin = try SidplayFormat(options: SidplayOptions(defaultGenre: "Chiptune"))
        let info = try plugin.readInfo(path: dir + "/a.sid")
        #expect(info.tags.contains(TagItem(.genre, "Chiptune")))
        #expect(info.tags.contains(TagItem(.date, "19??")))
        #expect(throws: FormatError.self) { try plugin.readInfo(path: dir + "/bad.sid") }
        #expect(throws: FormatError.self) { try plugin.containerSongs(path: dir + "/bad.sid") }
        #expect(throws: FormatError.self) { try plugin.makeDecoder(path: dir + "/bad.sid/tune_001.sid") }
        #expect(throws: FormatError.self) {
            try SidplayFormat(options: SidplayOptions(songlengthDatabase: dir + "/none.md5"))
        }
        #expect(throws: FormatError.self) { try SidplayFormat(options: SidplayOptions(kernal: dir + "/a.sid")) }
    }

    @Test func theDefaultSonglengthEndsTheSongAfterTheChunkThatReachesIt() throws {
        let dir = try TrackerFormatTests.directory(["three.sid": ChiptuneBytes.psid(songs: 3)])
        let plugin = try SidplayFormat(options: SidplayOptions(defaultSonglength: 1))
        var decoder = try plugin.makeDecoder(path: dir + "/three.sid/tune_003.sid")
        #expect(decoder.format == AudioFormat(sampleRate: 48000, sampleFormat: .s16, channels: 1))
        #expect(decoder.totalFrames == 48000)
        #expect(decoder.totalFramesOverrideLibrary)
        let bytes = try TrackerFormatTests.decodeAll(&decoder, bufferFrames: 1000)
        // Chunks of 4096 samples until the clock reaches 1 s: the first that ends at or past 48000 frames.
        #expect(bytes.count == 12 * 4096 * 2)
        #expect(bytes.contains { $0 != 0 })
        // Seeking back restarts the song, which then plays its whole length again; seeking past the end ends it.
        var second = try SidplayFormat(options: SidplayOptions(defaultSonglength: 2))
            .makeDecoder(path: dir + "/three.sid/tune_003.sid")
        let played = try TrackerFormatTests.decodeAll(&second, bufferFrames: 4096, limit: 14 * 4096 * 2).count
        #expect(played == 14 * 4096 * 2)
        #expect(try second.seek(toFrame: 0) == 0)
        // libsidplayfp's first play after a stop restarts the emulation: one chunk more than a plain start.
        let restarted = try TrackerFormatTests.decodeAll(&second, bufferFrames: 4096).count
        #expect(restarted == 25 * 4096 * 2)
        var third = try SidplayFormat(options: SidplayOptions(defaultSonglength: 2))
            .makeDecoder(path: dir + "/three.sid/tune_003.sid")
        try third.seek(toFrame: 96000)
        #expect(try TrackerFormatTests.decodeAll(&third, bufferFrames: 4096).isEmpty)
        // Without a length the song has none, and plays on.
        var endless = try SidplayFormat().makeDecoder(path: dir + "/three.sid")
        #expect(endless.totalFrames == nil)
        #expect(try TrackerFormatTests.decodeAll(&endless, bufferFrames: 4096, limit: 48000 * 4).count >= 48000 * 4)
    }

    /// A fuzzed stereo tune on which libsidplayfp renders while its clock stays at 0 s
    /// (fuzz/regressions/c64opl/stopped-clock-seek without its suffix byte).
    static let stoppedClock: [UInt8] = {
        let hex = [
            "505349440003007c000010001040000200020000000054776f20436869707300000000000000000000000000000000000000",
            "0000000053746572656f20506572736f6e0000000000000000000000000000000000000031393f3f20536f6d65626f647900",
            "0000000000000000000000000000000000000014000042000010aaa90f8d18d4bd60108d01d4a9008d00d4a9098d05d4a9f0",
            "8d06d4a9218d04d4a90f8d38d4bd61108d21d4a90078df2b56f672da2ba9f08d26d4a9218d24d46060000000000000000000",
            "00000000000000000000000000000000000000000000101820283038404850",
        ].joined()
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }()

    @Test func aSeekGivesUpWhenTheClockStops() throws {
        let dir = try TrackerFormatTests.directory(["stuck.sid": Self.stoppedClock])
        var decoder = try SidplayFormat().makeDecoder(path: dir + "/stuck.sid/tune_001.sid")
        #expect(decoder.format.channels == 2)
        #expect(try decoder.seek(toFrame: 3 * 48000) == 3 * 48000)
        // One stereo chunk of 4096 samples.
        #expect(try TrackerFormatTests.decodeAll(&decoder, bufferFrames: 4096, limit: 1).count == 2048 * 4)
    }
}
