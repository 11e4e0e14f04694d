// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Model
import Playback
import Testing

@testable import OSS

/// The oss output's format negotiation, against fake devices: what it asks, in `mpd`'s order, and what it takes.
@Suite struct OSSNegotiationTests {
    /// A device that answers each ioctl with `answer(setting, value)`: the value it settles on, or a negated errno
    /// (`failure`). Records every request.
    final class FakeDevice {
        enum Answer {
            case value(Int32)
            case failure(Int32)
        }

        var requests: [(OSSSetting, Int32)] = []
        let answer: (OSSSetting, Int32) -> Answer

        init(_ answer: @escaping (OSSSetting, Int32) -> Answer) { self.answer = answer }

        func set(_ setting: OSSSetting, _ value: inout Int32) -> Int32 {
            self.requests.append((setting, value))
            switch self.answer(setting, value) {
            case .value(let settled):
                value = settled
                return 0
            case .failure(let code):
                return code
            }
        }

        func negotiate(_ format: AudioFormat) throws(OutputError) -> (AudioFormat, OSSParameters) {
            try OSSNegotiation.negotiate(format) { self.set($0, &$1) }
        }

        var asked: [String] { self.requests.map { "\($0.0) \($0.1)" } }
    }

    static let s16 = OSSSampleFormat.s16
    static let s8 = OSSSampleFormat.s8

    @Test func formatsAsTheyAre() throws {
        let device = FakeDevice { .value($1) }
        let (format, parameters) = try device.negotiate(AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        #expect(format == AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        #expect(parameters == OSSParameters(channels: 2, speed: 44100, format: Self.s16))
        #expect(device.asked == ["channels 2", "speed 44100", "format \(Self.s16)"])
    }

    /// 24-bit, 32-bit and float samples have no OSS format on Linux: 16 bits is the first asked.
    @Test(arguments: [SampleFormat.s24, .s32, .float, .dsd])
    func widerSamplesBecome16Bits(sampleFormat: SampleFormat) throws {
        let device = FakeDevice { .value($1) }
        let (format, _) = try device.negotiate(AudioFormat(sampleRate: 48000, sampleFormat: sampleFormat, channels: 1))
        #expect(format == AudioFormat(sampleRate: 48000, sampleFormat: .s16, channels: 1))
        #expect(device.asked == ["channels 1", "speed 48000", "format \(Self.s16)"])
    }

    @Test func eightBitsAsTheyAre() throws {
        let device = FakeDevice { .value($1) }
        let (format, _) = try device.negotiate(AudioFormat(sampleRate: 8000, sampleFormat: .s8, channels: 2))
        #expect(format.sampleFormat == .s8)
        #expect(device.asked.last == "format \(Self.s8)")
    }

    /// A device that refuses 16 bits (EINVAL) gets 8 bits.
    @Test func refused16BitsFallsBackTo8() throws {
        let device = FakeDevice { setting, value in
            setting == .format && value == Self.s16 ? .failure(-EINVAL) : .value(value)
        }
        let (format, parameters) = try device.negotiate(
            AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        #expect(format.sampleFormat == .s8)
        #expect(parameters.format == Self.s8)
        #expect(device.asked.suffix(2) == ["format \(Self.s16)", "format \(Self.s8)"])
    }

    /// The device's own answer wins: asked 16 bits, it says 8.
    @Test func deviceAnswerTaken() throws {
        let device = FakeDevice { setting, value in setting == .format ? .value(Self.s8) : .value(value) }
        let (format, _) = try device.negotiate(AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        #expect(format.sampleFormat == .s8)
        #expect(device.asked.count == 3)
    }

    /// An answer Fermata does not write (unsigned 8 bits, 0x8) is a refusal: the next format is asked.
    @Test func unknownAnswerIsARefusal() throws {
        let device = FakeDevice { setting, value in
            setting == .format && value == Self.s16 ? .value(0x8) : .value(value)
        }
        let (format, _) = try device.negotiate(AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        #expect(format.sampleFormat == .s8)
    }

    @Test func noFormatAtAll() {
        let device = FakeDevice { setting, value in setting == .format ? .failure(-EINVAL) : .value(value) }
        #expect(throws: OutputError("Failed to set sample format")) {
            try device.negotiate(AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        }
        #expect(device.asked.suffix(2) == ["format \(Self.s16)", "format \(Self.s8)"])
    }

    /// Channels: the song's, then one; an answer outside 1…8 counts as a refusal.
    @Test func channelsFallBackToMono() throws {
        let device = FakeDevice { setting, value in
            setting == .channels && value != 1 ? .failure(-EINVAL) : .value(value)
        }
        let (format, _) = try device.negotiate(AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 6))
        #expect(format.channels == 1)
        #expect(device.asked.prefix(2) == ["channels 6", "channels 1"])
    }

    @Test func channelCountAnsweredIsTaken() throws {
        let device = FakeDevice { setting, value in setting == .channels ? .value(2) : .value(value) }
        let (format, _) = try device.negotiate(AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 6))
        #expect(format.channels == 2)
    }

    @Test func invalidChannelAnswers() {
        let device = FakeDevice { setting, value in setting == .channels ? .value(9) : .value(value) }
        #expect(throws: OutputError("Failed to set channel count")) {
            try device.negotiate(AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        }
        #expect(device.asked == ["channels 2", "channels 1"])
    }

    /// Mono refused: no other count is tried.
    @Test func monoRefused() {
        let device = FakeDevice { setting, value in setting == .channels ? .failure(-EINVAL) : .value(value) }
        #expect(throws: OutputError("Failed to set channel count")) {
            try device.negotiate(AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 1))
        }
        #expect(device.asked == ["channels 1"])
    }

    /// Rates: the song's, then 48000, then 44100 (never the song's twice).
    @Test(arguments: [
        (22050, ["speed 22050", "speed 48000", "speed 44100"]), (48000, ["speed 48000", "speed 44100"]),
    ])
    func ratesFallBack(rate: Int, asked: [String]) {
        let device = FakeDevice { setting, value in setting == .speed ? .failure(-EINVAL) : .value(value) }
        #expect(throws: OutputError("Failed to set sample rate")) {
            try device.negotiate(AudioFormat(sampleRate: rate, sampleFormat: .s16, channels: 2))
        }
        #expect(device.asked.filter { $0.hasPrefix("speed") } == asked)
    }

    @Test func rateAnsweredIsTaken() throws {
        let device = FakeDevice { setting, value in setting == .speed ? .value(47999) : .value(value) }
        let (format, parameters) = try device.negotiate(
            AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        #expect(format.sampleRate == 47999)
        #expect(parameters.speed == 47999)
    }

    @Test func zeroRateIsARefusal() throws {
        let device = FakeDevice { setting, value in
            setting == .speed && value == 96000 ? .value(0) : .value(value)
        }
        let (format, _) = try device.negotiate(AudioFormat(sampleRate: 96000, sampleFormat: .s16, channels: 2))
        #expect(format.sampleRate == 48000)
    }

    /// Any error but EINVAL ends it, with the error's text.
    @Test(arguments: [
        (OSSSetting.channels, "Failed to set channel count: Input/output error"),
        (.speed, "Failed to set sample rate: Input/output error"),
        (.format, "Failed to set sample format: Input/output error"),
    ])
    func otherErrorsEndIt(failing: OSSSetting, message: String) {
        let device = FakeDevice { setting, value in setting == failing ? .failure(-EIO) : .value(value) }
        #expect(throws: OutputError(message)) {
            try device.negotiate(AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        }
        #expect(device.asked.last?.hasPrefix("\(failing)") == true)
    }

    /// After a cancel the device is set again exactly: another answer is an error.
    @Test func restoreIsExact() throws {
        let parameters = OSSParameters(channels: 2, speed: 44100, format: Self.s16)
        let exact = FakeDevice { .value($1) }
        try OSSNegotiation.restore(parameters) { exact.set($0, &$1) }
        #expect(exact.asked == ["channels 2", "speed 44100", "format \(Self.s16)"])
        let other = FakeDevice { setting, value in setting == .speed ? .value(48000) : .value(value) }
        #expect(throws: OutputError("Failed to set sample rate")) {
            try OSSNegotiation.restore(parameters) { other.set($0, &$1) }
        }
        let failing = FakeDevice { setting, value in setting == .channels ? .failure(-EINVAL) : .value(value) }
        #expect(throws: OutputError("Failed to set channel count: Invalid argument")) {
            try OSSNegotiation.restore(parameters) { failing.set($0, &$1) }
        }
    }
}

/// The oss mixer's control names and the plugin's default devices, as `mpd`'s.
@Suite struct OSSMixerTests {
    @Test(arguments: [
        ("PCM", 4), ("pcm", 4), ("Vol", 0), ("VOL", 0), ("Bass", 1), ("Trebl", 2), ("Line", 6), ("Line1", 14),
    ])
    func controlsByLabel(name: String, index: Int32) {
        #expect(OSSMixer.control(named: name) == index)
    }

    /// A prefix of a label that stops before its padding, or a longer name, names nothing.
    @Test(arguments: ["Pc", "Volume", "Treble", "", "Bogus"])
    func unknownControls(name: String) {
        #expect(OSSMixer.control(named: name) == nil)
    }

    @Test func unknownControlInMpdsWords() {
        #expect(throws: OutputError("no such mixer control: Bogus")) {
            try OSSMixer(device: "/dev/mixer", control: "Bogus", logger: .discarding)
        }
    }

    @Test func missingMixerDevice() throws {
        let mixer = try OSSMixer(device: "/no/such/mixer", control: nil, logger: .discarding)
        #expect(throws: OutputError("failed to open /no/such/mixer: No such file or directory")) {
            try mixer.open()
        }
    }

    /// A device that is not a mixer: it opens (no control configured), and the ioctls fail with their errors; with a
    /// control configured, the open fails. The failure is not kept here (the player's mixer control keeps it).
    @Test func notAMixer() throws {
        let mixer = try OSSMixer(device: "/dev/null", control: nil, logger: .discarding)
        try mixer.open()
        #expect(throws: OutputError("failed to set OSS volume: Inappropriate ioctl for device")) {
            try mixer.setVolume(50)
        }
        #expect(throws: OutputError("failed to read OSS volume: Inappropriate ioctl for device")) {
            try mixer.volume()
        }
        mixer.close()
        #expect(throws: OutputError("mixer is not open")) { try mixer.volume() }
        let named = try OSSMixer(device: "/dev/null", control: "Vol", logger: .discarding)
        #expect(throws: OutputError("READ_DEVMASK failed: Inappropriate ioctl for device")) { try named.open() }
        #expect(throws: OutputError("mixer is not open")) { try named.setVolume(10) }
    }

    @Test func outputOnMissingDevice() {
        let output = OSSOutput(path: "/no/such/dsp")
        #expect(throws: OutputError("Error opening OSS device \"/no/such/dsp\": No such file or directory")) {
            try output.open(AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        }
    }

    /// A device that takes no DSP ioctl (a regular file's EINVAL-free ENOTTY): the first ioctl's error.
    @Test func outputOnAFileThatIsNoDevice() {
        let output = OSSOutput(path: "/dev/null")
        #expect(throws: OutputError("Failed to set channel count: Inappropriate ioctl for device")) {
            try output.open(AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        }
    }
}
