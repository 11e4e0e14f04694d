// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import PipeWire
import Playback
import Testing

/// The pure parts of the pipewire output: the stream format offered for a song, the block's keys, the mixer's
/// volume curve and the ring buffer (playing to a daemon: conformance/test_pipewire.py).
@Suite struct PipeWireTests {
    private func format(_ rate: Int, _ sample: SampleFormat, _ channels: Int) -> AudioFormat {
        AudioFormat(sampleRate: rate, sampleFormat: sample, channels: channels)
    }

    @Test func pcmSongsPlayAsTheyAreAtTheirRate() {
        let cases: [(SampleFormat, PipeWireStreamFormat.Sample)] = [
            (.s8, .s8), (.s16, .s16), (.s24, .s24In32), (.s32, .s32), (.float, .float32),
        ]
        for (sample, expected) in cases {
            let (stream, output) = PipeWireStreamFormat.forInput(self.format(768_000, sample, 2))
            #expect(stream.sample == expected)
            #expect(stream.rate == 768_000)
            #expect(output == self.format(768_000, sample, 2))
        }
    }

    @Test func dsdSongsAreConvertedTo16Bit() {
        let (stream, output) = PipeWireStreamFormat.forInput(self.format(352_800, .dsd, 2))
        #expect(stream.sample == .s16)
        #expect(output == self.format(352_800, .s16, 2))
    }

    @Test func channelsAreInFLACsOrderUpToEight() {
        #expect(PipeWireStreamFormat.positions(channels: 1) == [.mono])
        #expect(PipeWireStreamFormat.positions(channels: 2) == [.frontLeft, .frontRight])
        #expect(PipeWireStreamFormat.positions(channels: 4) == [.frontLeft, .frontRight, .rearLeft, .rearRight])
        #expect(
            PipeWireStreamFormat.positions(channels: 6) == [
                .frontLeft, .frontRight, .frontCenter, .lowFrequency, .rearLeft, .rearRight,
            ])
        #expect(
            PipeWireStreamFormat.positions(channels: 7) == [
                .frontLeft, .frontRight, .frontCenter, .lowFrequency, .rearCenter, .sideLeft, .sideRight,
            ])
        #expect(PipeWireStreamFormat.positions(channels: 8)?.suffix(2) == [.sideLeft, .sideRight])
        #expect(PipeWireStreamFormat.forInput(self.format(44_100, .s16, 9)).format.positions == nil)
        for channels in 1...8 { #expect(PipeWireStreamFormat.positions(channels: channels)?.count == channels) }
    }

    @Test func theRingHoldsHalfASecond() {
        #expect(PipeWireStreamFormat.ringBytes(self.format(44_100, .s16, 2)) == 22_050 * 4)
        #expect(PipeWireStreamFormat.ringBytes(self.format(48_000, .s24, 6)) == 24_000 * 24)
    }

    private func configuration(_ parameters: [String: String]) -> OutputConfiguration {
        OutputConfiguration(name: "Desk", type: "pipewire", parameters: BlockParameters(parameters))
    }

    @Test func aNumericTargetIsANodeID() throws {
        let settings = try PipeWireSettings(self.configuration(["target": "42", "remote": "other"]))
        #expect(settings.targetID == 42)
        #expect(settings.targetName == nil)
        // As mpd: the remote is not used with a numeric target.
        #expect(settings.remoteProperty == nil)
    }

    @Test func anotherTargetIsANodeName() throws {
        for text in ["alsa_output.usb", "42x", "x42", "4 2"] {
            let settings = try PipeWireSettings(self.configuration(["target": text, "remote": "other"]))
            #expect(settings.targetID == PipeWireSettings.anyID)
            #expect(settings.targetName == text)
            #expect(settings.remoteProperty == "other")
        }
    }

    @Test func noTargetConnectsAnywhere() throws {
        let settings = try PipeWireSettings(self.configuration([:]))
        #expect(settings.targetID == PipeWireSettings.anyID)
        #expect(settings.targetName == nil)
        #expect(settings.remote == nil)
        #expect(settings.dsd == false)
        #expect(settings.name == "Desk")
    }

    @Test func anEmptyTargetOrABadDSDIsRefused() {
        #expect(throws: OutputError("target must not be empty")) {
            try PipeWireSettings(self.configuration(["target": ""]))
        }
        #expect(
            throws: OutputError(
                "Error in setting \"dsd\" on line 0; Not a valid boolean (\"yes\" or \"no\"): \"maybe\"")
        ) {
            try PipeWireSettings(self.configuration(["dsd": "maybe"]))
        }
        #expect((try? PipeWireSettings(self.configuration(["dsd": "yes"])))?.dsd == true)
    }

    @Test func theVolumeIsTheCubeOfTheFraction() {
        #expect(PipeWireVolume.channelVolume(forPercent: 100) == 1)
        #expect(PipeWireVolume.channelVolume(forPercent: 0) == 0)
        #expect(abs(PipeWireVolume.channelVolume(forPercent: 50) - 0.125) < 1e-6)
        for percent in 0...100 {
            let value = [PipeWireVolume.channelVolume(forPercent: percent)]
            let fraction = value.withUnsafeBufferPointer { PipeWireVolume.fraction(ofChannelVolumes: $0) }
            #expect(fraction.map(PipeWireVolume.percent(ofFraction:)) == percent)
        }
        // The average of the channels, then its cube root: (0.125 + 1) / 2 = 0.5625 → 0.8255.
        let mixed: [Float] = [0.125, 1]
        #expect(
            mixed.withUnsafeBufferPointer { PipeWireVolume.fraction(ofChannelVolumes: $0) }.map {
                PipeWireVolume.percent(ofFraction: $0)
            } == 83)
        #expect([Float]().withUnsafeBufferPointer { PipeWireVolume.fraction(ofChannelVolumes: $0) } == nil)
    }

    @Test func theRingMovesWholeFramesInOrderAcrossItsEnd() {
        let ring = PipeWireRing(capacity: 10, frameSize: 4)
        #expect(ring.capacity == 8)
        let data: [UInt8] = Array(0..<12)
        #expect(data.withUnsafeBytes { ring.push($0) } == 8)
        #expect(data.withUnsafeBytes { ring.push($0) } == 0)
        var out = [UInt8](repeating: 0xFF, count: 8)
        #expect(out.withUnsafeMutableBytes { ring.pop(into: $0.baseAddress!, limit: 7) } == 4)
        #expect(out.prefix(4) == [0, 1, 2, 3])
        // Wraps: 4 bytes at the end, 4 at the start (the second push writes 8…11 after 4…7).
        #expect(data[8...].withUnsafeBytes { ring.push($0) } == 4)
        #expect(ring.readable == 8)
        #expect(out.withUnsafeMutableBytes { ring.pop(into: $0.baseAddress!, limit: 8) } == 8)
        #expect(out == [4, 5, 6, 7, 8, 9, 10, 11])
        #expect(out.withUnsafeMutableBytes { ring.pop(into: $0.baseAddress!, limit: 8) } == 0)
    }

    @Test func discardDropsWhatWasNotRead() {
        let ring = PipeWireRing(capacity: 8, frameSize: 2)
        let data: [UInt8] = [1, 2, 3, 4, 5, 6]
        #expect(data.withUnsafeBytes { ring.push($0) } == 6)
        ring.discard()
        #expect(ring.readable == 0)
        #expect(data.withUnsafeBytes { ring.push($0) } == 6)
        var out = [UInt8](repeating: 0, count: 8)
        #expect(out.withUnsafeMutableBytes { ring.pop(into: $0.baseAddress!, limit: 8) } == 6)
        #expect(out.prefix(6) == [1, 2, 3, 4, 5, 6])
    }
}
