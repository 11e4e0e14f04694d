// SPDX-License-Identifier: GPL-3.0-or-later

import Configuration
import Foundation
import Input
import Model
import Testing

@testable import ALSA

/// `alsa://` URLs read as `mpd`'s alsa input plugin reads them.
@Suite struct ALSAInputURLTests {
    func url(_ text: String) throws(AudioFormatParseError) -> ALSAInputURL {
        try ALSAInputURL(text, defaultDevice: "default", defaultFormat: "48000:16:2")
    }

    @Test func deviceAndFormat() throws {
        let source = try self.url("alsa://hw:1,0?format=44100:24:2")
        #expect(source.device == "hw:1,0")
        #expect(source.formatText == "44100:24:2")
        #expect(source.format == AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2))
        #expect(source.mimeType == "audio/x-mpd-alsa-pcm;format=44100:24:2")
    }

    @Test func defaults() throws {
        let bare = try self.url("alsa://")
        #expect(bare.device == "default")
        #expect(bare.formatText == "48000:16:2")
        #expect(bare.format == AudioFormat(sampleRate: 48000, sampleFormat: .s16, channels: 2))
        #expect(try self.url("alsa://plughw:0").device == "plughw:0")
        // An empty device with a format: the default device.
        let noDevice = try self.url("alsa://?format=22050:8:1")
        #expect(noDevice.device == "default")
        #expect(noDevice.format == AudioFormat(sampleRate: 22050, sampleFormat: .s8, channels: 1))
        // Configured defaults.
        let configured = try ALSAInputURL("alsa://", defaultDevice: "hw:2", defaultFormat: "96000:32:2")
        #expect(configured.device == "hw:2")
        #expect(configured.format == AudioFormat(sampleRate: 96000, sampleFormat: .s32, channels: 2))
    }

    @Test func caseOfSchemeAndKey() throws {
        #expect(ALSAInputURL.canOpen("ALSA://x"))
        #expect(ALSAInputURL.canOpen("alsa://"))
        #expect(!ALSAInputURL.canOpen("alsa:/x"))
        #expect(!ALSAInputURL.canOpen("http://alsa://"))
        let source = try self.url("ALSA://cap?FORMAT=44100:16:1")
        #expect(source.device == "cap")
        #expect(source.formatText == "44100:16:1")
        #expect(source.format.channels == 1)
    }

    @Test func queryWithoutFormatTakesTheDefault() throws {
        let source = try self.url("alsa://cap?rate=44100")
        #expect(source.device == "cap")
        #expect(source.formatText == "48000:16:2")
    }

    @Test func badFormatsGiveMPDsMessages() {
        let cases: [(String, String)] = [
            ("alsa://cap?format=44100:17:2", "Invalid sample format: 17"),
            ("alsa://cap?format=foo", "Failed to parse the sample rate"),
            ("alsa://cap?format=*:16:2", "Failed to parse the sample rate"),
            ("alsa://cap?format=44100:16:9", "Invalid channel count: 9"),
            ("alsa://cap?format=44100:16:2&x=1", "Extra data after channel count: &x=1"),
            ("alsa://cap?format=44100:16:2?x", "Extra data after channel count: ?x"),
            ("alsa://cap?format=44100:16:2:3", "Extra data after channel count: :3"),
        ]
        for (text, message) in cases {
            #expect(throws: AudioFormatParseError(message), "\(text)") { try self.url(text) }
        }
    }

    @Test func settingsFromTheInputBlock() throws {
        #expect(try ALSAInputSettings.configured(.none)?.settings == ALSAInputSettings())
        let file = try ConfigFile(
            parsing: """
                input {
                    plugin "alsa"
                    default_device "hw:1"
                    default_format "44100:16:2"
                    auto_resample "no"
                    auto_format "no"
                }
                """, path: "/etc/mpd.conf")
        let blocks = try InputBlocks(file.blocks(named: "input"))
        let settings = try #require(try ALSAInputSettings.configured(blocks)).settings
        #expect(settings.defaultDevice == "hw:1")
        #expect(settings.defaultFormat == "44100:16:2")
        #expect(!settings.autoResample && settings.autoChannels && !settings.autoFormat)
        #expect(settings.openMode == ALSAOutput.openMode(autoResample: false, autoChannels: true, autoFormat: false))
        let disabled = try ConfigFile(parsing: "input {\n    plugin \"alsa\"\n    enabled \"no\"\n}\n", path: "/m.conf")
        #expect(try ALSAInputSettings.configured(InputBlocks(disabled.blocks(named: "input"))) == nil)
    }
}

/// Capture through alsa-lib's `file` plugin, whose `infile` is what the device "records".
@Suite(.serialized) struct ALSAInputStreamTests {
    /// A PCM `cap` that captures `infile` (over `null`, which delivers as fast as it is read).
    func configuration(infile: String) throws -> ALSALocalConfiguration {
        try ALSALocalConfiguration(
            text: """
                pcm.cap {
                    type file
                    slave.pcm { type null }
                    file "/dev/null"
                    infile "\(infile)"
                    format "raw"
                }
                """)
    }

    func open(_ url: String, _ configuration: ALSALocalConfiguration) throws(InputError) -> ALSAInputStream {
        try ALSAInputStream(
            url: url, settings: ALSAInputSettings(), cancellation: nil, localConfiguration: configuration)
    }

    /// 2.5 s of 8 kHz 16-bit stereo: more than the stream's one-second buffer, so the capture thread pauses
    /// and is resumed while the test reads.
    static let frames = 20_000
    static let bytes: [UInt8] = (0..<(frames * 4)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }

    @Test func readsWhatTheDeviceCaptures() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let infile = scratch.file("in.raw")
        try Data(Self.bytes).write(to: URL(fileURLWithPath: infile))
        let stream = try self.open("alsa://cap?format=8000:16:2", self.configuration(infile: infile))
        #expect(stream.mimeType == "audio/x-mpd-alsa-pcm;format=8000:16:2")
        #expect(!stream.isSeekable)
        #expect(stream.size == nil)
        var got: [UInt8] = []
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1000, alignment: 4)
        defer { chunk.deallocate() }
        while got.count < Self.bytes.count {
            let count = try stream.read(into: chunk)
            #expect(count > 0)
            got.append(contentsOf: chunk[0..<count])
        }
        #expect(Array(got[0..<Self.bytes.count]) == Self.bytes)
        #expect(stream.offset == UInt64(got.count))
        #expect(throws: InputError.notSeekable(uri: stream.uri)) { try stream.seek(to: 0) }
    }

    @Test func cancellingEndsReads() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let infile = scratch.file("in.raw")
        try Data(Self.bytes).write(to: URL(fileURLWithPath: infile))
        let cancellation = InputCancellation()
        let stream = try ALSAInputStream(
            url: "alsa://cap?format=8000:16:2", settings: ALSAInputSettings(), cancellation: cancellation,
            localConfiguration: self.configuration(infile: infile))
        cancellation.cancel()
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 4)
        defer { chunk.deallocate() }
        #expect(throws: InputError.cancelled(uri: stream.uri)) { try stream.read(into: chunk) }
    }

    @Test func openErrorsInMPDsWords() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let mark = ALSATestLog.start()
        let configuration = try self.configuration(infile: scratch.file("none.raw"))
        #expect(
            throws: InputError.plugin(
                message: "Failed to open device nosuch: No such file or directory", uri: "alsa://nosuch")
        ) { try self.open("alsa://nosuch", configuration) }
        // alsa-lib's own words go to the log, not to standard error.
        #expect(ALSATestLog.lines(since: mark).contains { $0.contains("Unknown PCM nosuch") })
        #expect(
            throws: InputError.plugin(message: "Invalid sample format: 17", uri: "alsa://cap?format=44100:17:2")
        ) { try self.open("alsa://cap?format=44100:17:2", configuration) }
    }
}
