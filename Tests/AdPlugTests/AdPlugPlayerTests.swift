// SPDX-License-Identifier: GPL-3.0-or-later

import Testing

@testable import AdPlug

/// RdosPlay RAW captures built like tools/fixtures/adplug.py's.
enum RAW {
    static func capture(speed: Int?, ticks: UInt8 = 70, tags: (String, String, String)? = nil) -> [UInt8] {
        var bytes = Array("RAWADATA".utf8) + [0x34, 0x12]
        if let speed { bytes += [0x00, 0x02, UInt8(speed & 0xFF), UInt8(speed >> 8)] }
        bytes += [0x20, 0x01, 0x01, 0x20, 0x10, 0x40, 0xF0, 0x60, 0x77, 0x80, 0x01, 0x23, 0x00, 0x43, 0xF0, 0x63]
        bytes += [0x77, 0x83, 0x98, 0xA0, 0x31, 0xB0, ticks, 0x00, 0x11, 0xB0, 0xFF, 0xFF]
        if let (title, author, description) = tags {
            bytes += [0x1A] + Array(title.utf8) + [0, 0x1B] + Array(author.utf8) + [0, 0x1C]
            bytes += Array(description.utf8) + [0]
        }
        return bytes
    }
}

@Suite struct AdPlugPlayerTests {
    @Test func loadsTagsAndLength() throws {
        let file = RAW.capture(speed: 1_193_180 / 70, tags: ("Title", "Author", "Words"))
        var asked: [String] = []
        let player = try AdPlugPlayer(path: "/m/song.raw", sampleRate: 48000) { name in
            asked.append(name)
            return file
        }
        #expect(asked == ["/m/song.raw"])
        #expect(player.title == Array("Title".utf8))
        #expect(player.author == Array("Author".utf8))
        #expect(player.type == Array("Raw AdLib Capture".utf8))
        // 70 ticks at 70 Hz (and the tick that reaches the end marker).
        let length = player.songLengthMilliseconds()
        #expect(length >= 990 && length <= 1020)
    }

    /// Ticks only: rendering is tested once, in FormatsTests' AdPlugFormatTests (AdPlug's OPL emulator renders
    /// one chip at a time per process, and test suites run in parallel).
    @Test func ticksUntilTheEnd() throws {
        let file = RAW.capture(speed: 1000, ticks: 5)
        let player = try AdPlugPlayer(path: "/m/song.raw", sampleRate: 48000) { _ in file }
        var ticks = 0
        while player.update() && ticks < 100 { ticks += 1 }
        #expect(ticks >= 5 && ticks < 10)
        #expect(!player.update())
    }

    @Test func refusesWhatNoPlayerLoads() {
        #expect(throws: AdPlugError.self) {
            try AdPlugPlayer(path: "/m/song.raw", sampleRate: 48000) { _ in nil }
        }
        #expect(throws: AdPlugError.self) {
            try AdPlugPlayer(path: "/m/song.hsc", sampleRate: 48000) { _ in Array("garbage".utf8) }
        }
        #expect(throws: AdPlugError.self) {
            try AdPlugPlayer(path: "/m/big.raw", sampleRate: 48000) { _ in
                Array("RAWADATA".utf8) + [UInt8](repeating: 0, count: AdPlugPlayer.fileLimit)
            }
        }
    }
}
