// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Model
import Testing

@testable import Formats

/// The wildmidi plugin with Debian's freepats patches (package `freepats`); `mpd`'s default configuration,
/// /etc/timidity/timidity.cfg, is absent here, so the standard registry leaves the plugin out.
@Suite struct WildMidiFormatTests {
    static let plugin = WildMidiFormat(options: WildMidiOptions(configFile: "/etc/timidity/freepats.cfg"))

    @Test func scansTheFormatAndLength() throws {
        let plugin = try #require(Self.plugin)
        let dir = try TrackerFormatTests.directory([
            "tune.mid": FluidSynthFormatTests.midi, "riff.mid": Array("RIFF....".utf8),
        ])
        let info = try plugin.readInfo(path: dir + "/tune.mid")
        #expect(info.tags.isEmpty)
        #expect(info.audioFormat == AudioFormat(sampleRate: 48000, sampleFormat: .s16, channels: 2))
        // Two beats at 120 BPM, as libwildmidi estimates them.
        #expect((900...1100) ~= (info.durationMilliseconds ?? 0))
        #expect(throws: FormatError.self) { try plugin.readInfo(path: dir + "/riff.mid") }
        #expect(throws: FormatError.self) { try plugin.readInfo(path: dir + "/missing.mid") }
    }

    @Test func decodesToItsLengthAndSeeks() throws {
        let plugin = try #require(Self.plugin)
        var decoder = try plugin.makeDecoder(input: MemoryInputStream(FluidSynthFormatTests.midi, uri: "tune.mid"))
        #expect(decoder.isSeekable)
        let total = try #require(decoder.totalFrames)
        let pcm = try TrackerFormatTests.decodeAll(&decoder, bufferFrames: 333)
        #expect(UInt64(pcm.count / 4) == total)
        #expect(try decoder.seek(toFrame: total / 2) == total / 2)
        let rest = try TrackerFormatTests.decodeAll(&decoder, bufferFrames: 1024)
        #expect(UInt64(rest.count / 4) == total - total / 2)
    }

    @Test func isLeftOutWithoutItsConfiguration() {
        #expect(WildMidiFormat(options: WildMidiOptions(configFile: "/nonexistent/timidity.cfg")) == nil)
        #expect(WildMidiOptions().configFile == "/etc/timidity/timidity.cfg")
        #expect(!FormatRegistry.standard.plugins.contains { $0.name == "wildmidi" })
    }
}
