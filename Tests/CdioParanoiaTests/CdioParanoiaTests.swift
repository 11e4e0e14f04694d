// SPDX-License-Identifier: GPL-3.0-or-later

import Configuration
import Foundation
import Input
import Testing

@testable import CdioParanoia

/// `cdda://` URLs split as `mpd` splits them.
@Suite struct CdioParanoiaURLTests {
    @Test func deviceAndTrack() throws {
        #expect(try CdioParanoiaInputStream.parse("cdda://") == ("", nil))
        #expect(try CdioParanoiaInputStream.parse("cdda:///dev/sr0/3") == ("/dev/sr0", 3))
        #expect(try CdioParanoiaInputStream.parse("cdda:///dev/sr0/") == ("/dev/sr0", nil))
        #expect(try CdioParanoiaInputStream.parse("cdda://sr0") == ("sr0", nil))
        #expect(try CdioParanoiaInputStream.parse("cdda:///2") == ("", 2))
        #expect(try CdioParanoiaInputStream.parse("cdda:///tmp/a.cue/ 12") == ("/tmp/a.cue", 12))
        let long = String(repeating: "d", count: 80)
        #expect(try CdioParanoiaInputStream.parse("cdda://\(long)/1").device.utf8.count == 63)
    }

    @Test func malformedTrack() {
        for url in ["cdda:///tmp/disc.cue", "cdda:///dev/sr0/1x", "cdda:///dev/sr0/+", "cdda:///dev/sr0/ "] {
            #expect(throws: CdioParanoiaError(message: "Malformed track number"), "\(url)") {
                try CdioParanoiaInputStream.parse(url)
            }
        }
    }

    @Test func settings() throws {
        #expect(try CdioParanoiaSettings.configured(.none)?.settings == CdioParanoiaSettings())
        let text = """
            input {
                plugin "cdio_paranoia"
                default_byte_order "big_endian"
                speed "4"
                mode "overlap"
                skip "no"
            }
            """
        let blocks = try InputBlocks(ConfigFile(parsing: text, path: "/etc/mpd.conf").blocks(named: "input"))
        let settings = try #require(try CdioParanoiaSettings.configured(blocks)).settings
        #expect(settings.defaultReverseEndian)
        #expect(settings.speed == 4)
        // PARANOIA_MODE_OVERLAP | PARANOIA_MODE_NEVERSKIP.
        #expect(settings.modeFlags == 0x04 | 0x20)
        let bad = "input {\n    plugin \"cdio_paranoia\"\n    mode \"fast\"\n}\n"
        // As mpd: the mode is read in its `With`, which names the setting and its line.
        #expect(
            throws: ConfigError(
                location: ConfigLocation(file: "/etc/mpd.conf", line: 3),
                message: "Failed to initialize input plugin 'cdio_paranoia'; Error in setting \"mode\" on line 3; "
                    + "Invalid paranoia mode")
        ) {
            try CdioParanoiaSettings.configured(
                InputBlocks(ConfigFile(parsing: bad, path: "/etc/mpd.conf").blocks(named: "input")))
        }
    }
}

/// A two-track disc image (`.bin` and `.cue`) read through libcdio's image driver.
@Suite struct CdioParanoiaImageTests {
    /// Track 1: 150 sectors (2 s), track 2: 113 sectors; each byte a function of its offset.
    static let sectors = [150, 113]

    static func image() throws -> (directory: String, bytes: [UInt8]) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fermata-cdda-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let count = Self.sectors.reduce(0, +) * CdioParanoiaInputStream.sectorSize
        // A 16-bit little-endian tone, so that libcdio takes the samples for little-endian ones.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        for sample in 0..<(count / 2) {
            let value = Int16(sin(Double(sample / 2) * 0.031) * 12000) &+ Int16(sample % 2)
            bytes.append(UInt8(truncatingIfNeeded: value))
            bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        }
        try Data(bytes).write(to: URL(fileURLWithPath: "\(directory)/disc.bin"))
        let cue = """
            FILE "disc.bin" BINARY
              TRACK 01 AUDIO
                INDEX 01 00:00:00
              TRACK 02 AUDIO
                INDEX 01 00:02:00

            """
        try cue.write(toFile: "\(directory)/disc.cue", atomically: true, encoding: .utf8)
        return (directory, bytes)
    }

    @Test func readsAndSeeksTracks() throws {
        let (directory, bytes) = try Self.image()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let sectorSize = CdioParanoiaInputStream.sectorSize
        let second = try CdioParanoiaInputStream(url: "cdda://\(directory)/disc.cue/2")
        #expect(second.size == UInt64(113 * sectorSize))
        #expect(second.mimeType == "audio/x-mpd-cdda-pcm")
        #expect(second.isSeekable)
        let all = try second.readToEnd(limit: 1 << 20)
        #expect(all == Array(bytes[(150 * sectorSize)...]))
        try second.seek(to: UInt64(100 * sectorSize + 7))
        let tail = try second.readToEnd(limit: 1 << 20)
        #expect(tail == Array(bytes[(250 * sectorSize + 7)...]))
        #expect(throws: InputError.notSeekable(uri: second.uri)) { try second.seek(to: UInt64(114 * sectorSize)) }

        // The whole disc runs to the lead-out's sector, one past the last track's, as in mpd.
        let disc = try CdioParanoiaInputStream(url: "cdda://\(directory)/disc.cue/")
        #expect(disc.size == UInt64(bytes.count + sectorSize))
        let read = try disc.readToEnd(limit: 1 << 20)
        #expect(read.count == bytes.count + sectorSize)
        #expect(Array(read.prefix(bytes.count)) == bytes)
    }

    @Test func errorsInMPDsWords() throws {
        let (directory, _) = try Self.image()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(throws: InputError.plugin(message: "Failed to open CD drive", uri: "cdda:///nonexistent/x.cue/1")) {
            try CdioParanoiaInputStream(url: "cdda:///nonexistent/x.cue/1")
        }
        let bad = "cdda://\(directory)/disc.cue"
        #expect(throws: InputError.plugin(message: "Malformed track number", uri: bad)) {
            try CdioParanoiaInputStream(url: bad)
        }
        let missing = "cdda://\(directory)/disc.cue/3"
        #expect(throws: InputError.plugin(message: "Invalid track number", uri: missing)) {
            try CdioParanoiaInputStream(url: missing)
        }
    }
}
