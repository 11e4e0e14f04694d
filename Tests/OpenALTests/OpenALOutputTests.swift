// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Playback
import TestTools
import Testing

@testable import OpenAL

/// The openal output's formats and its library, as `mpd`'s.
@Suite struct OpenALOutputTests {
    @Test func formatsAre16BitMonoOrStereo() {
        let stereo = OpenALOutput.alFormat(for: AudioFormat(sampleRate: 48000, sampleFormat: .s24, channels: 2))
        #expect(stereo.1 == AudioFormat(sampleRate: 48000, sampleFormat: .s16, channels: 2))
        let mono = OpenALOutput.alFormat(for: AudioFormat(sampleRate: 8000, sampleFormat: .s8, channels: 1))
        #expect(mono.1 == AudioFormat(sampleRate: 8000, sampleFormat: .s16, channels: 1))
        // Any other channel count to mono, as mpd.
        let surround = OpenALOutput.alFormat(for: AudioFormat(sampleRate: 44100, sampleFormat: .float, channels: 6))
        #expect(surround.1 == AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 1))
        #expect(stereo.0 != mono.0 && mono.0 == surround.0)
    }

    /// A library that cannot be loaded fails every enable, reported once.
    @Test func missingLibraryFailsEveryEnableReportedOnce() throws {
        let reports = Reports()
        let library = OpenALLibrary(soname: "/nonexistent/libopenal.so.1", reportFailure: reports.reporter)
        let output = try OpenALOutputPlugin(library: library).makeOutput(
            OutputConfiguration(name: "A", type: "openal", parameters: [:]))
        #expect(output.plugin == "openal")
        for _ in 0..<2 {
            #expect(throws: OutputError("libopenal could not be loaded")) { try output.enable() }
        }
        output.disable()
        #expect(library.users == 0)
        #expect(reports.all.count == 1)
    }

    /// Not loaded until an output is enabled; a device that does not exist is refused in mpd's words.
    @Test func loadedOnEnableAndAMissingDeviceRefused() throws {
        let library = OpenALLibrary(soname: OpenALLibrary.headerSoname)
        let output = try OpenALOutputPlugin(library: library).makeOutput(
            OutputConfiguration(name: "A", type: "openal", parameters: ["device": "fermata no such device"]))
        #expect(!library.isLoaded)
        try output.enable()
        #expect(library.users == 1)
        #expect(throws: OutputError("Error opening OpenAL device \"fermata no such device\"")) {
            try output.open(AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        }
        output.disable()
        #expect(library.users == 0)
    }
}
