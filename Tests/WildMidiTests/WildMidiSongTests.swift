// SPDX-License-Identifier: GPL-3.0-or-later

import Testing

@testable import WildMidi

/// libwildmidi with Debian's freepats GUS patches (package `freepats`). libwildmidi's set-up is process-wide:
/// every test sets it up with the same configuration.
@Suite struct WildMidiSongTests {
    static let config = "/etc/timidity/freepats.cfg"

    /// A format-0 MIDI file: 120 BPM, a piano playing middle C for one beat (0.5 s).
    static let midi: [UInt8] = {
        let track: [UInt8] = [
            0x00, 0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20, 0x00, 0xC0, 0x00, 0x00, 0x90, 60, 100, 0x83, 0x60, 0x80, 60, 0,
            0x00, 0xFF, 0x2F, 0x00,
        ]
        return Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0] + Array("MTrk".utf8)
            + [0, 0, 0, UInt8(track.count)] + track
    }()

    init() throws { try WildMidiLibrary.setUp(configFile: Self.config, sampleRate: 48000) }

    @Test func opensEstimatesAndRendersToTheEnd() throws {
        let song = try #require(WildMidiSong(data: Self.midi))
        // Half a second, as libwildmidi estimates it.
        #expect((23000..<(48000 * 3)) ~= song.approximateTotalSamples)
        var buffer = [Int16](repeating: 0, count: 2048)
        var frames = 0
        var peak = 0
        while true {
            let bytes = buffer.withUnsafeMutableBytes { song.render(into: $0) }
            if bytes == 0 { break }
            peak = max(peak, buffer[0..<(bytes / 2)].map { abs(Int($0)) }.max() ?? 0)
            frames += bytes / 4
        }
        #expect(peak > 100)
        #expect(UInt64(frames) == song.approximateTotalSamples)
    }

    @Test func seeksBySample() throws {
        let song = try #require(WildMidiSong(data: Self.midi))
        #expect(song.seek(toSample: 12000) == 12000)
        var buffer = [UInt8](repeating: 0, count: 4096)
        #expect(buffer.withUnsafeMutableBytes { song.render(into: $0) } > 0)
    }

    @Test func refusesWhatIsNotMIDIAndAnotherSetUp() {
        #expect(WildMidiSong(data: []) == nil)
        #expect(WildMidiSong(data: Array("RIFF".utf8) + [UInt8](repeating: 0, count: 60)) == nil)
        #expect(WildMidiSong(data: Array(Self.midi.prefix(20))) == nil)
        #expect(throws: WildMidiError.self) { try WildMidiLibrary.setUp(configFile: Self.config, sampleRate: 44100) }
        #expect(throws: WildMidiError.self) {
            try WildMidiLibrary.setUp(configFile: "/nonexistent/timidity.cfg", sampleRate: 48000)
        }
    }
}
