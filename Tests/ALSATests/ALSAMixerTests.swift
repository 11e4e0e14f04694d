// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Playback
import Testing

@testable import ALSA

/// A model of a hardware mixer element: raw register steps, each worth a fixed number of hundredths of a dB
/// (`nil`: no dB information), setting dB by rounding to a step the way alsa-lib does for a TLV dB scale.
final class ModelControl: VolumeControl {
    let steps: Int
    let hundredthsPerStep: Int?
    var rawValue: Int
    /// A control whose lowest step is "mute" and whose dB value is continuous (set exactly).
    let muteMinimum: Bool
    var exactDB = 0

    init(steps: Int, hundredthsPerStep: Int?, muteMinimum: Bool = false) {
        self.steps = steps
        self.hundredthsPerStep = hundredthsPerStep
        self.rawValue = steps
        self.muteMinimum = muteMinimum
    }

    func dBRange() -> (min: Int, max: Int)? {
        if self.muteMinimum { return (VolumeMapping.muteDB, 0) }
        return self.hundredthsPerStep.map { (-self.steps * $0, 0) }
    }
    func rawRange() -> (min: Int, max: Int)? { (0, self.steps) }
    func dB() -> Int? {
        if self.muteMinimum { return self.exactDB }
        return self.hundredthsPerStep.map { (self.rawValue - self.steps) * $0 }
    }
    func raw() -> Int? { self.rawValue }
    func setDB(_ value: Int, direction: Int) -> Int32 {
        if self.muteMinimum {
            self.exactDB = value
            return 0
        }
        guard let step = self.hundredthsPerStep else { return -22 }
        let exact = Double(value) / Double(step) + Double(self.steps)
        self.rawValue = min(self.steps, max(0, Int(direction > 0 ? exact.rounded(.up) : exact.rounded(.down))))
        return 0
    }
    func setRaw(_ value: Int) -> Int32 {
        self.rawValue = value
        return 0
    }

    /// What `getvol` shows right after reading the control.
    var percent: Int { VolumeMapping.percent(VolumeMapping.normalizedVolume(of: self)) }

    /// `setvol` as ``ALSAMixer`` does it (rounding up).
    func setPercent(_ volume: Int) {
        _ = VolumeMapping.setNormalizedVolume(0.01 * Double(volume), on: self, direction: 1)
    }
}

/// The numbers below were worked out by hand from `mpd`'s volume mapping (cubic above 24 dB of range, linear in dB
/// below, linear in steps without dB), not read back from this implementation.
struct VolumeMappingTests {
    /// 256 steps of 0.5 dB: -127.5…0 dB, a wide range, so the cubic curve applies.
    @Test(arguments: [(50, 220, 51), (25, 184, 25), (1, 44, 1), (99, 255, 100), (0, 0, 0), (100, 255, 100)])
    func wideDBRangeUsesTheCubicCurve(volume: Int, raw: Int, readBack: Int) {
        let control = ModelControl(steps: 255, hundredthsPerStep: 50)
        control.setPercent(volume)
        #expect(control.rawValue == raw)
        #expect(control.percent == readBack)
    }

    @Test func narrowDBRangeIsLinearInDB() {
        // 48 steps of 0.5 dB: -24…0 dB. 37 % → -15.12 dB, rounded up to the step at -15 dB (raw 18) → reads 37.5 %.
        let control = ModelControl(steps: 48, hundredthsPerStep: 50)
        control.setPercent(37)
        #expect(control.rawValue == 18)
        #expect(control.percent == 38)
    }

    @Test func withoutDBItIsLinearInSteps() {
        let control = ModelControl(steps: 31, hundredthsPerStep: nil)
        control.setPercent(50)
        #expect(control.rawValue == 16)
        #expect(control.percent == 52)
        control.setPercent(0)
        #expect(control.rawValue == 0)
        control.setPercent(100)
        #expect(control.rawValue == 31)
    }

    @Test func aMuteMinimumIsNotUsedAsTheFloor() {
        let control = ModelControl(steps: 100, hundredthsPerStep: nil, muteMinimum: true)
        control.setPercent(50)
        // 20·log10(0.5³)… in mpd's terms 6000·log10(0.5) = -1806.18, rounded up.
        #expect(control.exactDB == -1806)
        #expect(control.percent == 50)
    }

    @Test func roundingFollowsTheDirection() {
        #expect(VolumeMapping.round(2.5, 1) == 3)
        #expect(VolumeMapping.round(2.5, -1) == 2)
        #expect(VolumeMapping.round(2.5, 0) == 2)
        #expect(VolumeMapping.round(3.5, 0) == 4)
        #expect(VolumeMapping.round(-2.5, 1) == -2)
        #expect(VolumeMapping.percent(0.375) == 38)
        #expect(VolumeMapping.percent(0.365) == 37)
    }
}

struct VolumeMemoTests {
    @Test func theValueSetIsReportedWhileTheControlStaysWhereItWasLeft() {
        var memo = VolumeMemo()
        #expect(memo.report(51) == 51)
        memo.didSet(desired: 50, resulting: 51)
        #expect(memo.report(51) == 50)
        #expect(memo.report(60) == 60)
        // Our own change echoed back by the control keeps the memo.
        #expect(memo.observe(51) == 50)
        #expect(memo.report(51) == 50)
        // Someone else moved the control: forget what we set.
        #expect(memo.observe(60) == 60)
        #expect(memo.report(51) == 51)
        #expect(memo == VolumeMemo())
    }
}

@Suite(.serialized) struct ALSAMixerTests {
    @Test func aMissingControlDeviceGivesMPDsMessageAndNothingOnStandardError() throws {
        let mark = ALSATestLog.start()
        let mixer = try ALSAMixer(device: "fermata_no_such_ctl", logger: .discarding, onChange: {})
        var thrown: OutputError?
        let stderrText = capturingStandardError {
            do throws(OutputError) { try mixer.open() } catch { thrown = error }
        }
        #expect(thrown?.message == "failed to attach to fermata_no_such_ctl: No such file or directory")
        #expect(!stderrText.contains("ALSA lib"))
        #expect(!stderrText.contains("fermata_no_such"))
        #expect(ALSATestLog.lines(since: mark).contains { $0.contains("fermata_no_such_ctl") })
    }

    @Test func aClosedMixerRefusesToReadOrSet() throws {
        let mixer = try ALSAMixer(logger: .discarding, onChange: {})
        #expect(throws: OutputError.self) { try mixer.volume() }
        #expect(throws: OutputError.self) { try mixer.setVolume(50) }
        mixer.close()
    }

    @Test func thePluginReadsTheMixerSettingsWithMPDsDefaults() throws {
        let plugin = ALSAOutputPlugin(logger: ALSATestLog.logger)
        let plain = OutputConfiguration(name: "a", type: "alsa", parameters: ["device": "hw:1"])
        let mixer = try #require(try plugin.makeHardwareMixer(plain, onChange: {}) as? ALSAMixer)
        // mpd 0.23 attaches to "default" whatever the output's device is.
        #expect(mixer.device == "default")
        #expect(mixer.control == "PCM")
        #expect(mixer.index == 0)

        let custom = OutputConfiguration(
            name: "b", type: "alsa",
            parameters: ["mixer_device": "hw:2", "mixer_control": "Master", "mixer_index": "1"])
        let mixer2 = try #require(try plugin.makeHardwareMixer(custom, onChange: {}) as? ALSAMixer)
        #expect(mixer2.device == "hw:2")
        #expect(mixer2.control == "Master")
        #expect(mixer2.index == 1)

        let bad = OutputConfiguration(name: "c", type: "alsa", parameters: ["mixer_index": "x"])
        #expect(throws: OutputError.self) { try plugin.makeHardwareMixer(bad, onChange: {}) }
    }

    @Test func thePluginReadsTheOutputSettings() throws {
        let plugin = ALSAOutputPlugin(logger: ALSATestLog.logger)
        let output = try #require(
            try plugin.makeOutput(
                OutputConfiguration(
                    name: "a", type: "alsa", parameters: ["device": "hw:0,1", "buffer_time": "200000", "dop": "yes"]))
                as? ALSAOutput)
        #expect(output.device == "hw:0,1")
        #expect(output.bufferTime == 200_000)
        #expect(output.periodTime == 0)
        #expect(output.attributes.map(\.value) == ["", "1"])
        let defaults = try #require(
            try plugin.makeOutput(OutputConfiguration(name: "b", type: "alsa")) as? ALSAOutput)
        #expect(defaults.device == "default")
        #expect(defaults.bufferTime == 500_000)

        for (key, value, message) in [
            ("buffer_time", "abc", "Error in setting \"buffer_time\" on line 0; Failed to parse number"),
            ("period_time", "0", "Error in setting \"period_time\" on line 0; Value must be positive"),
            (
                "auto_format", "maybe",
                "Error in setting \"auto_format\" on line 0; Not a valid boolean (\"yes\" or \"no\"): \"maybe\""
            ),
        ] {
            #expect {
                _ = try plugin.makeOutput(OutputConfiguration(name: "x", type: "alsa", parameters: [key: value]))
            } throws: { error in
                (error as? OutputError)?.message == message
            }
        }
    }
}
