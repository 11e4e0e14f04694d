// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Model
import Testing

@testable import Formats

/// The fluidsynth plugin, with Debian's TimGM6mb SoundFont (package `timgm6mb-soundfont`).
@Suite struct FluidSynthFormatTests {
    static let plugin = FluidSynthFormat(options: FluidSynthOptions(soundFont: "/usr/share/sounds/sf2/TimGM6mb.sf2"))

    /// A format-0 MIDI file: 120 BPM, two piano notes of a beat each.
    static let midi: [UInt8] = {
        let track: [UInt8] = [
            0x00, 0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20, 0x00, 0xC0, 0x00, 0x00, 0x90, 60, 100, 0x83, 0x60, 0x80, 60, 0,
            0x00, 0x90, 67, 100, 0x83, 0x60, 0x80, 67, 0, 0x00, 0xFF, 0x2F, 0x00,
        ]
        return Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0] + Array("MTrk".utf8)
            + [0, 0, 0, UInt8(track.count)] + track
    }()

    @Test func aMIDIFileIsASongWithNothingToSay() throws {
        let dir = try TrackerFormatTests.directory([
            "tune.mid": Self.midi, "header.mid": Array(Self.midi.prefix(14)), "riff.mid": Array("RIFF....".utf8),
        ])
        #expect(try Self.plugin.readInfo(path: dir + "/tune.mid") == SongInfo())
        // Only the first four bytes count.
        #expect(try Self.plugin.readInfo(path: dir + "/header.mid") == SongInfo())
        #expect(throws: FormatError.self) { try Self.plugin.readInfo(path: dir + "/riff.mid") }
        #expect(throws: FormatError.self) { try Self.plugin.readInfo(path: dir + "/missing.mid") }
        #expect(try FormatRegistry.standard.readInfo(path: dir + "/tune.mid") == SongInfo())
        #expect(FormatRegistry.standard.plugins(forSuffix: "MID").map(\.name) == ["fluidsynth"])
    }

    @Test func decodesWholeChunksWithoutLengthOrSeeking() throws {
        var decoder = try Self.plugin.makeDecoder(input: MemoryInputStream(Self.midi, uri: "tune.mid"))
        #expect(decoder.format == AudioFormat(sampleRate: 48000, sampleFormat: .s16, channels: 2))
        #expect(decoder.totalFrames == nil)
        #expect(!decoder.isSeekable)
        #expect(throws: FormatError.self) { try decoder.seek(toFrame: 48000) }
        let pcm = try TrackerFormatTests.decodeAll(&decoder, bufferFrames: 333)
        #expect(pcm.count % 4096 == 0)
        // Two beats, then the notes' release.
        #expect(((48000 * 4)..<(48000 * 4 * 8)) ~= pcm.count)
        let other = FluidSynthFormat(
            options: FluidSynthOptions(sampleRate: 22050, soundFont: "/usr/share/sounds/sf2/TimGM6mb.sf2"))
        #expect(try other.makeDecoder(input: MemoryInputStream(Self.midi)).format.sampleRate == 22050)
    }

    @Test func aSoundFontThatCannotBeLoadedFailsEverySong() {
        let plugin = FluidSynthFormat(options: FluidSynthOptions(soundFont: "/nonexistent/FluidR3_GM.sf2"))
        #expect(throws: FormatError.self) { _ = try plugin.makeDecoder(input: MemoryInputStream(Self.midi)) }
        let defaults = FluidSynthOptions(sampleRate: 48000, soundFont: "/usr/share/sounds/sf2/FluidR3_GM.sf2")
        #expect(FluidSynthOptions() == defaults)
    }
}
