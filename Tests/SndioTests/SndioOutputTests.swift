// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Playback
import Synchronization
import TestTools
import Testing

@testable import Sndio

/// The sndio output's keys, its format negotiation, its volume and its library, as `mpd`'s.
@Suite struct SndioOutputTests {
    /// A block whose keys are all on line 12.
    private static func configuration(_ parameters: [String: String]) -> OutputConfiguration {
        OutputConfiguration(
            name: "S", type: "sndio",
            parameters: BlockParameters(
                parameters.map { BlockParameters.Line(name: $0.key, value: $0.value, line: 12) }))
    }

    @Test func settingsDefaultsAndDeviceAsWritten() throws {
        let defaults = try SndioSettings(Self.configuration([:]))
        #expect(defaults.device == "default")
        #expect(defaults.bufferTime == 250)
        let given = try SndioSettings(Self.configuration(["device": "", "buffer_time": "0"]))
        #expect(given.device == "")
        #expect(given.bufferTime == 0)
        #expect(try SndioSettings(Self.configuration(["device": "snd/1", "buffer_time": "40"])).bufferTime == 40)
    }

    /// The message names the parameter's line, as `mpd`'s.
    @Test(arguments: [
        ("-1", "Error in setting \"buffer_time\" on line 12; Value must not be negative"),
        ("abc", "Error in setting \"buffer_time\" on line 12; Failed to parse number"),
        ("10ms", "Error in setting \"buffer_time\" on line 12; Failed to parse number"),
        ("", "Error in setting \"buffer_time\" on line 12; Failed to parse number"),
    ])
    func badBufferTimeInMpdsWords(value: String, message: String) {
        #expect(throws: OutputError(message)) { try SndioSettings(Self.configuration(["buffer_time": value])) }
    }

    @Test func requestKeepsSixteenTwentyFourAndThirtyTwoBitsAndConvertsTheRest() {
        for (format, bits) in [(SampleFormat.s16, UInt32(16)), (.s24, 24), (.s32, 32)] {
            let request = SndioRequest(
                AudioFormat(sampleRate: 48000, sampleFormat: format, channels: 2), bufferTime: 250)
            #expect(request.bits == bits)
            #expect(request.format == AudioFormat(sampleRate: 48000, sampleFormat: format, channels: 2))
        }
        for format in [SampleFormat.s8, .float, .dsd] {
            let request = SndioRequest(
                AudioFormat(sampleRate: 44100, sampleFormat: format, channels: 6), bufferTime: 250)
            #expect(request.bits == 16)
            #expect(request.format == AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 6))
            #expect(request.channels == 6 && request.rate == 44100)
        }
    }

    @Test func bufferIsBufferTimeInFramesComputedIn32Bits() {
        let format = AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2)
        #expect(SndioRequest(format, bufferTime: 250).bufferFrames == 11025)
        #expect(SndioRequest(format, bufferTime: 0).bufferFrames == 0)
        // 44100 * 100000 wraps in 32 bits, as mpd's unsigned product.
        #expect(
            SndioRequest(format, bufferTime: 100_000).bufferFrames == UInt32(truncatingIfNeeded: 4_410_000_000) / 1000)
    }

    @Test func acceptsTheSameParametersAndARateWithinHalfAPercent() {
        let request = SndioRequest(AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2), bufferTime: 250)
        func accepts(bits: UInt32 = 16, rate: UInt32 = 44100, channels: UInt32 = 2, signed: UInt32 = 1, le: UInt32 = 1)
            -> Bool
        {
            request.accepts(bits: bits, rate: rate, channels: channels, signed: signed, littleEndian: le, native: 1)
        }
        #expect(accepts())
        #expect(accepts(rate: 43879) && accepts(rate: 44320))
        #expect(!accepts(rate: 43878) && !accepts(rate: 44321) && !accepts(rate: 48000))
        #expect(!accepts(bits: 24) && !accepts(channels: 1) && !accepts(signed: 0) && !accepts(le: 0))
    }

    @Test func volumeMapsAsMpdsRawVolume() {
        #expect(SndioVolume.raw(percent: 50) == 63 && SndioVolume.percent(raw: 63) == 49)
        #expect(SndioVolume.raw(percent: 100) == 127 && SndioVolume.percent(raw: 127) == 100)
        #expect(SndioVolume.raw(percent: 0) == 0 && SndioVolume.percent(raw: -1) == 100)
    }

    /// Closed: no volume, and a volume set is ignored; open: 100 at first, then what was set (as raw), sent once.
    @Test func volumeFollowsTheStream() throws {
        let volume = SndioVolume()
        #expect(!volume.wasTried)
        #expect(throws: OutputError.self) { try volume.percent() }
        volume.trying()
        #expect(volume.wasTried)
        volume.set(percent: 10)
        #expect(volume.takeRequest() == nil)
        #expect(volume.initial == 127)
        volume.opened(hasKnob: true)
        #expect(try volume.percent() == 100)
        volume.set(percent: 50)
        #expect(try volume.percent() == 49)
        #expect(volume.takeRequest() == 63)
        #expect(volume.takeRequest() == nil)
        volume.closed()
        #expect(throws: OutputError.self) { try volume.percent() }
        // The next stream starts at the volume last set.
        #expect(volume.initial == 63)
        volume.opened(hasKnob: true)
        #expect(try volume.percent() == 49)
    }

    @Test func aDeviceWithoutKnobReads100() throws {
        let volume = SndioVolume()
        volume.opened(hasKnob: false)
        volume.set(percent: 30)
        #expect(try volume.percent() == 100)
        #expect(volume.takeRequest() == 38)
        volume.reported(10)
        #expect(try volume.percent() == 100)
        #expect(volume.initial == nil)
    }

    @Test func anotherProgramsChangeIsTold() throws {
        let volume = SndioVolume()
        let told = Atomic<Int>(0)
        volume.attach { told.add(1, ordering: .relaxed) }
        volume.opened(hasKnob: true)
        volume.reported(127)
        #expect(told.load(ordering: .relaxed) == 0)
        volume.reported(40)
        #expect(told.load(ordering: .relaxed) == 1)
        #expect(try volume.percent() == 31)
    }

    /// Each output's mixer shares its volume; none for an output the plugin did not make.
    @Test func pluginPairsOutputAndMixer() throws {
        let plugin = SndioOutputPlugin(library: SndioLibrary(soname: "/nonexistent/libsndio.so.7"))
        let output = try plugin.makeOutput(Self.configuration([:]))
        #expect(output.plugin == "sndio")
        let mixer = try #require(try plugin.makeHardwareMixer(Self.configuration([:]), onChange: {}))
        #expect(throws: OutputError.self) { try mixer.volume() }
        #expect(try plugin.makeHardwareMixer(Self.configuration([:]), onChange: {}) == nil)
        #expect(throws: OutputError.self) { try plugin.makeOutput(Self.configuration(["buffer_time": "x"])) }
    }

    /// A library that cannot be loaded fails every enable, reported once.
    @Test func missingLibraryFailsEveryEnableReportedOnce() throws {
        let reports = Reports()
        let library = SndioLibrary(soname: "/nonexistent/libsndio.so.7", reportFailure: reports.reporter)
        let output = try SndioOutputPlugin(library: library).makeOutput(Self.configuration([:]))
        for _ in 0..<2 {
            #expect(throws: OutputError("libsndio could not be loaded")) { try output.enable() }
        }
        output.disable()
        #expect(library.users == 0)
        #expect(reports.all.count == 1)
    }

    /// Not loaded until an output is enabled; a device that cannot be opened is refused in mpd's words (which name
    /// the default device whatever `device` says).
    @Test func loadedOnEnableAndADeviceThatDoesNotOpenRefused() throws {
        let library = SndioLibrary(soname: SndioLibrary.headerSoname)
        // A sndiod unit no server runs (its socket does not exist).
        let output = try SndioOutputPlugin(library: library).makeOutput(Self.configuration(["device": "snd,93/0"]))
        #expect(!library.isLoaded)
        try output.enable()
        #expect(library.users == 1)
        #expect(throws: OutputError("Failed to open default sndio device")) {
            try output.open(AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        }
        output.disable()
        #expect(library.users == 0)
    }
}
