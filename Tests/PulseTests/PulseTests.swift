// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Playback
import Pulse
import Synchronization
import Testing

/// The pure parts of the pulse output: the stream format chosen for a song, the mixer's volume scale, the block's
/// keys; and the failures that need no server (playing to a server: conformance/test_pulse.py).
@Suite struct PulseTests {
    private func format(_ rate: Int, _ sample: SampleFormat, _ channels: Int) -> AudioFormat {
        AudioFormat(sampleRate: rate, sampleFormat: sample, channels: channels)
    }

    @Test func floatThirtyTwoAndTwentyFourBitSongsPlayAsTheyAre() {
        let cases: [(SampleFormat, PulseSampleSpec.Format)] = [
            (.s16, .s16), (.s24, .s24In32), (.s32, .s32), (.float, .float32),
        ]
        for (sample, expected) in cases {
            let (spec, output) = PulseSampleSpec.forInput(self.format(48_000, sample, 6))
            #expect(spec == PulseSampleSpec(format: expected, rate: 48_000, channels: 6))
            #expect(output == self.format(48_000, sample, 6))
        }
    }

    @Test func eightBitAndDSDSongsAreConvertedTo16BitFirst() {
        for sample in [SampleFormat.s8, .dsd] {
            let (spec, output) = PulseSampleSpec.forInput(self.format(44_100, sample, 1))
            #expect(spec == PulseSampleSpec(format: .s16, rate: 44_100, channels: 1))
            #expect(output == self.format(44_100, .s16, 1))
        }
    }

    @Test func theRateIsCappedAtPulseAudiosHighest() {
        let (spec, output) = PulseSampleSpec.forInput(self.format(768_000, .s32, 2))
        #expect(spec.rate == 384_000)
        #expect(output.sampleRate == 384_000)
    }

    @Test func volumeScaleOfOneMapsPercentToPulseAudiosNorm() {
        let scale = PulseVolumeScale()
        #expect(scale.maximum == 0x10000)
        #expect(scale.volume(forPercent: 100) == 0x10000)
        #expect(scale.volume(forPercent: 0) == 0)
        // (40 * 65536 + 50) / 100, and back: (100 * (v + 1)) / 65536.
        #expect(scale.volume(forPercent: 40) == 26_214)
        #expect(scale.percent(ofAverage: 26_214) == 40)
        #expect(scale.percent(ofAverage: 0x10000) == 100)
        #expect(scale.percent(ofAverage: 0) == 0)
        // Another program raised the stream above 100 %.
        #expect(scale.percent(ofAverage: 0x18000) == 150)
        for percent in 0...100 { #expect(scale.percent(ofAverage: scale.volume(forPercent: percent)) == percent) }
    }

    @Test func scaleVolumeStretchesTheRange() throws {
        let scale = try PulseVolumeScale(parsing: "0.7")
        #expect(scale.maximum == UInt32(Float(0.7) * 65_536))
        #expect(scale.volume(forPercent: 100) == scale.maximum)
        #expect(scale.percent(ofAverage: 0x10000) == 142)
        let loud = try PulseVolumeScale(parsing: "3.5")
        #expect(loud.volume(forPercent: 100) == 229_376)
        #expect(try PulseVolumeScale(parsing: nil) == PulseVolumeScale())
        #expect(try PulseVolumeScale(parsing: "5") == PulseVolumeScale(factor: 5))
    }

    @Test func scaleVolumeOutsideItsRangeIsRefusedInMpdsWords() {
        for text in ["0.4", "5.1", "abc", "", "1x", "-1"] {
            #expect(throws: OutputError("\"\(text)\" is not a number in the range 0.5 to 5.0")) {
                try PulseVolumeScale(parsing: text)
            }
        }
    }

    @Test func theHardwareMixerFollowsItsOutputAndReadsNothingUntilItPlays() throws {
        let plugin = PulseOutputPlugin(library: PulseLibrary(soname: "libfermata-no-such-pulse.so.0") { _ in })
        let configuration = OutputConfiguration(name: "Desk", type: "pulse", parameters: ["scale_volume": "2"])
        let output = try plugin.makeOutput(configuration)
        #expect(output.plugin == "pulse")
        let mixer = try #require(try plugin.makeHardwareMixer(configuration, onChange: {}))
        #expect(try mixer.volume() == -1)
        // Not usable by setvol before the output first plays (mpd: not really enabled yet).
        #expect(!mixer.acceptsVolume)
        // As mpd's closed mixer: setting does nothing and does not fail.
        try mixer.setVolume(50)
        #expect(try mixer.volume() == -1)
        // A mixer for an output the plugin did not make: none.
        let other = OutputConfiguration(name: "Other", type: "pulse")
        #expect(try plugin.makeHardwareMixer(other, onChange: {}) == nil)
    }

    @Test func aLibpulseThatCannotBeLoadedFailsEnablingOnlyAndIsReportedOnce() {
        let reports = ReportLog()
        let library = PulseLibrary(soname: "libfermata-no-such-pulse.so.0") { reports.add($0) }
        let plugin = PulseOutputPlugin(library: library)
        for name in ["A", "B"] {
            let output = try? plugin.makeOutput(OutputConfiguration(name: name, type: "pulse"))
            #expect(throws: OutputError("pa_threaded_mainloop_new() has failed")) { try output?.enable() }
        }
        #expect(reports.count == 1)
        #expect(!library.isLoaded)
    }

    @Test func aServerThatRefusesTheConnectionFailsEnablingAsInMpd() throws {
        let library = PulseLibrary(soname: PulseLibrary.headerSoname)
        let output = try PulseOutputPlugin(library: library).makeOutput(
            OutputConfiguration(
                name: "Dead", type: "pulse", parameters: ["server": "unix:/nonexistent/fermata-test/native"]))
        #expect(throws: OutputError("pa_context_connect() has failed: Connection refused")) { try output.enable() }
        #expect(library.users == 0)
    }
}

/// Counts reports from any thread.
private final class ReportLog: Sendable {
    private let reports = Mutex<[String]>([])
    func add(_ report: String) { self.reports.withLock { $0.append(report) } }
    var count: Int { self.reports.withLock { $0.count } }
}
