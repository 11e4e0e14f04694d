// SPDX-License-Identifier: GPL-3.0-or-later

import Testing

@testable import GME

@Suite struct GMEEmulatorTests {
    /// A 2-song NSF whose init routine starts a square wave.
    static let nsf: [UInt8] = {
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func pad(_ s: String) -> [UInt8] { Array(s.utf8) + [UInt8](repeating: 0, count: 32 - s.utf8.count) }
        var code: [UInt8] = [
            0xA9, 0x0F, 0x8D, 0x15, 0x40, 0xA9, 0xBF, 0x8D, 0x00, 0x40, 0xA9, 0xFD, 0x8D, 0x02, 0x40, 0xA9, 0x01,
            0x8D, 0x03, 0x40, 0x60,
        ]
        let play = 0x8000 + code.count
        code.append(0x60)
        return Array("NESM".utf8) + [0x1A, 1, 2, 1] + le16(0x8000) + le16(0x8000) + le16(play) + pad("Game")
            + pad("Author") + pad("") + le16(16639) + [UInt8](repeating: 0, count: 8) + le16(19997)
            + [0, 0, 0, 0, 0, 0] + code
    }()

    @Test func loadsByHeaderOrSuffixAndReportsTracks() throws {
        let emulator = try GMEEmulator(data: Self.nsf, suffix: nil, sampleRate: 44100)
        #expect(emulator.trackCount == 2)
        #expect(emulator.systemName == "Nintendo NES")
        let info = try emulator.trackInfo(1)
        #expect(info.game == Array("Game".utf8))
        #expect(info.author == Array("Author".utf8))
        #expect(info.song.isEmpty)
        #expect(info.length == -1)
        #expect(info.playLength == 150_000)
        #expect(throws: GMEError.self) { try emulator.trackInfo(2) }
        // The suffix decides first, as gme_open_file does: an NSF named .spc is refused.
        #expect(throws: GMEError.self) { try GMEEmulator(data: Self.nsf, suffix: "spc", sampleRate: 44100) }
        #expect(throws: GMEError.self) { try GMEEmulator(data: [1, 2, 3, 4, 5], suffix: nil, sampleRate: 44100) }
        #expect(throws: GMEError.self) { try GMEEmulator(data: [], suffix: "nsf", sampleRate: 44100) }
    }

    @Test func playsFadesAndSeeks() throws {
        let emulator = try GMEEmulator(data: Self.nsf, suffix: "nsf", sampleRate: 44100)
        try emulator.startTrack(0)
        emulator.setFade(startMilliseconds: 100)
        var buffer = [Int16](repeating: 0, count: 4096)
        try buffer.withUnsafeMutableBufferPointer { try emulator.play(into: $0) }
        #expect(buffer.contains { $0 != 0 })
        var chunks = 1
        while !emulator.isTrackEnded && chunks < 1000 {
            try buffer.withUnsafeMutableBufferPointer { try emulator.play(into: $0) }
            chunks += 1
        }
        #expect(emulator.isTrackEnded)
        #expect(chunks < 1000)
        try emulator.startTrack(1)
        try emulator.seek(milliseconds: 2000)
        #expect(emulator.positionMilliseconds == 2000)
        #expect(!emulator.isTrackEnded)
    }

    @Test func m3uPlaylistsNameTracks() throws {
        let emulator = try GMEEmulator(data: Self.nsf, suffix: "nsf", sampleRate: 44100)
        try emulator.loadM3U(data: Array("game.nsf::NSF,2,Second Song,0:05,,\n".utf8))
        #expect(emulator.trackCount == 1)
        let info = try emulator.trackInfo(0)
        #expect(info.song == Array("Second Song".utf8))
        #expect(info.length == 5000)
    }
}
