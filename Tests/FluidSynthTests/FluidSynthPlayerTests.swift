// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import TestTools
import Testing

@testable import FluidSynth

/// libfluidsynth with Debian's TimGM6mb SoundFont (package `timgm6mb-soundfont`).
@Suite struct FluidSynthPlayerTests {
    static let soundFont = "/usr/share/sounds/sf2/TimGM6mb.sf2"

    /// A format-0 Standard MIDI File: 120 BPM, a piano playing middle C for one beat (0.5 s), then the end.
    static let midi: [UInt8] = {
        let track: [UInt8] = [
            0x00, 0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20,  // tempo: 500000 µs a beat
            0x00, 0xC0, 0x00,  // program: piano
            0x00, 0x90, 60, 100,  // note on
            0x83, 0x60, 0x80, 60, 0,  // 480 ticks later: note off
            0x00, 0xFF, 0x2F, 0x00,  // end of track
        ]
        let length = UInt32(track.count)
        return Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0] + Array("MTrk".utf8)
            + [UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)]
            + track
    }()

    /// Renders until the player stops, in chunks of `frames`; the frames and the largest sample magnitude.
    static func renderAll(_ player: FluidSynthPlayer, frames: Int = 1024) -> (frames: Int, peak: Int) {
        var buffer = [Int16](repeating: 0, count: frames * 2)
        var total = 0
        var peak = 0
        while player.isPlaying, total < 48000 * 60 {
            let rendered = buffer.withUnsafeMutableBytes { player.render(into: $0) }
            if rendered == 0 { break }
            peak = max(peak, buffer.map { abs(Int($0)) }.max() ?? 0)
            total += rendered
        }
        return (total, peak)
    }

    @Test func playsTheFileToItsEnd() throws {
        let player = try FluidSynthPlayer(midi: Self.midi, sampleRate: 48000, soundFont: Self.soundFont)
        let (frames, peak) = Self.renderAll(player)
        #expect(peak > 100)
        // The note's half second, then its release: the player ends once no voice sounds.
        #expect((24000..<(48000 * 6)) ~= frames)
        #expect(!player.isPlaying)
        let again = try FluidSynthPlayer(midi: Self.midi, sampleRate: 48000, soundFont: Self.soundFont)
        #expect(Self.renderAll(again, frames: 1024).frames == frames)
    }

    @Test func rendersAtTheGivenRate() throws {
        let fast = try FluidSynthPlayer(midi: Self.midi, sampleRate: 48000, soundFont: Self.soundFont)
        let slow = try FluidSynthPlayer(midi: Self.midi, sampleRate: 24000, soundFont: Self.soundFont)
        let (fastFrames, slowFrames) = (Self.renderAll(fast).frames, Self.renderAll(slow).frames)
        // The same song length in seconds, to a few chunks.
        #expect(abs(fastFrames - 2 * slowFrames) <= 4 * 1024)
    }

    /// libfluidsynth's player reads the file when it starts rendering: one chunk of dither, then the end.
    @Test func aFileThatIsNotMIDIPlaysOneChunkOfNothing() throws {
        let player = try FluidSynthPlayer(
            midi: Array("RIFF".utf8) + [UInt8](repeating: 0, count: 60), sampleRate: 48000, soundFont: Self.soundFont)
        let (frames, peak) = Self.renderAll(player)
        #expect(frames == 1024)
        #expect(peak <= 1)
    }

    @Test func namesTheStepThatFailed() {
        #expect(throws: FluidSynthError(function: "fluid_synth_sfload")) {
            try FluidSynthPlayer(midi: Self.midi, sampleRate: 48000, soundFont: "/nonexistent/none.sf2")
        }
        #expect(throws: FluidSynthError(function: "fluid_player_add")) {
            try FluidSynthPlayer(midi: [], sampleRate: 48000, soundFont: Self.soundFont)
        }
    }

    @Test func recognisesMIDIFilesByTheirHeader() throws {
        let path = "/tmp/fermata-fluidsynth-\(getpid()).mid"
        defer { unlink(path) }
        for (bytes, expected) in [(Self.midi, true), (Array("RIFF....".utf8), false), ([], false)] {
            let file = try #require(fopen(path, "wb"))
            _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
            fclose(file)
            #expect(FluidSynthPlayer.isMIDIFile(path: Array(path.utf8)) == expected)
        }
        #expect(!FluidSynthPlayer.isMIDIFile(path: Array("/nonexistent/file.mid".utf8)))
    }
}

/// libfluidsynth loaded on first use.
@Suite struct FluidSynthLibraryTests {
    /// Debian's soname loads (the one the header's package links).
    @Test func loadedByTheFirstPlayerAndKept() throws {
        let library = FluidSynthLibrary(soname: FluidSynthLibrary.headerSoname)
        #expect(!library.isLoaded)
        do {
            let player = try FluidSynthPlayer(
                midi: FluidSynthPlayerTests.midi, sampleRate: 48000, soundFont: FluidSynthPlayerTests.soundFont,
                library: library)
            #expect(player.isPlaying)
            #expect(library.users == 1)
        }
        #expect(library.users == 0)
        #expect(library.isLoaded)
        #expect(!FluidSynthPlayer.isMIDIFile(path: Array("/nonexistent/file.mid".utf8), library: library))
        #expect(library.loadCount == 1)
    }

    /// A library that cannot be loaded fails every player as `new_fluid_settings` failing would, recognises no
    /// file, and is reported once with dlopen's reason.
    @Test func missingLibraryFailsEveryUseReportedOnce() {
        let reports = Reports()
        let library = FluidSynthLibrary(soname: "/nonexistent/libfluidsynth.so.3", reportFailure: reports.reporter)
        for _ in 0..<3 {
            #expect(throws: FluidSynthError(function: "new_fluid_settings")) {
                try FluidSynthPlayer(
                    midi: FluidSynthPlayerTests.midi, sampleRate: 48000, soundFont: FluidSynthPlayerTests.soundFont,
                    library: library)
            }
            #expect(!FluidSynthPlayer.isMIDIFile(path: Array("/tmp".utf8), library: library))
        }
        #expect(!library.isLoaded)
        #expect(library.users == 0)
        #expect(reports.all.count == 1)
        #expect(reports.all.first?.contains("/nonexistent/libfluidsynth.so.3") == true)
    }
}
