// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Model
import Playback
import Synchronization
import Testing

/// An output's `format`, `audio_output_format`, and conversion to what the device accepts (resampling with
/// libsoxr).
@Suite struct PlayerOutputFormatTests {
    private func configuration(format: String?) throws -> OutputConfiguration {
        OutputConfiguration(
            name: "out", type: "null", format: try format.map { try AudioFormatMask.parse($0, mask: true) })
    }

    /// The left channel of captured stereo floats.
    private func leftFloats(_ capture: CaptureOutput) -> [Float] {
        let bytes = capture.bytes
        return stride(from: 0, to: bytes.count - 7, by: 8).map { offset in
            bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: Float.self) }
        }
    }

    private func risingZeroCrossings(_ samples: ArraySlice<Float>) -> Int {
        zip(samples, samples.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
    }

    @Test func theOutputsFormatMaskConvertsSampleFormatAndChannels() throws {
        let capture = CaptureOutput(sync: false)
        let harness = try PlayerHarness(outputs: [(try self.configuration(format: "*:16:1"), capture, nil)])
        harness.withPlayer { $0.play(fakeSong(1, base: 100, frames: 5000, format: "44100:24:2"), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.finished(token: 1)) })
        #expect(capture.opens == [AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 1)])
        // 24-bit ramp values 100… become 16-bit values about 100/256 (mpd's dither, then the two sides averaged):
        // check the length and that they follow the ramp within the dither's step.
        let samples = capture.samples16(channels: 1)
        #expect(samples.count == 5000)
        #expect(zip(samples, samples.dropFirst()).allSatisfy { abs(Int($1) - Int($0)) <= 2 })
        #expect(samples.first.map { abs(Int($0)) <= 2 } == true)
    }

    @Test(arguments: [true, false])
    func aSongAt44100IsResampledTo48000(globally: Bool) throws {
        let global: String? = globally ? "48000:*:*" : nil
        let output: String? = globally ? nil : "48000:f:2"
        let capture = CaptureOutput(sync: false)
        let harness = try PlayerHarness(
            outputs: [(try self.configuration(format: output), capture, nil)], audioOutputFormat: global)
        // One second of a 1 kHz sine at 44.1 kHz.
        harness.withPlayer { $0.play(PlayableSong(token: 1, uri: "sine", path: "sine:1000:44100:44100"), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.finished(token: 1)) })
        #expect(capture.opens == [AudioFormat(sampleRate: 48000, sampleFormat: .float, channels: 2)])
        let left = self.leftFloats(capture)
        // One second in, one second out, less what libsamplerate still holds at the end (the default resampler,
        // as in Debian's mpd, which never ends its input): its filter's delay, under a millisecond.
        #expect(left.count <= 48000 && left.count >= 48000 - 48, "\(left.count) frames")
        #expect(abs(self.risingZeroCrossings(left[4800..<43200]) - 800) <= 1)
        #expect(abs((left[4800..<43200].max() ?? 0) - 0.5) < 0.01)
    }

    @Test func aDeviceInsistingOnAnotherRateGetsResampledAudio() throws {
        let capture = CaptureOutput(
            sync: false, format: AudioFormat(sampleRate: 22050, sampleFormat: .float, channels: 2))
        let harness = try PlayerHarness(outputs: [(nullConfiguration(), capture, nil)])
        harness.withPlayer { $0.play(PlayableSong(token: 1, uri: "sine", path: "sine:1000:44100:44100"), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.finished(token: 1)) })
        let left = self.leftFloats(capture)
        #expect(left.count <= 22050 && left.count >= 22050 - 48, "\(left.count) frames")
        #expect(abs(self.risingZeroCrossings(left[2205..<19845]) - 800) <= 1)
    }

    @Test func elapsedCountsSongTimeWhileResampling() throws {
        // The output stands still after one second of its 96 kHz stream (float stereo: 768,000 bytes), so elapsed
        // is read at a known point of the song whatever the machine's load: one second of song time, not the 2.18 s
        // that the output's frames counted at the song's rate would give.
        let oneSecond = 96000 * 8
        let capture = CaptureOutput(sync: false)
        capture.limit.store(oneSecond, ordering: .relaxed)
        let harness = try PlayerHarness(outputs: [(try self.configuration(format: "96000:*:*"), capture, nil)])
        harness.withPlayer {
            $0.play(PlayableSong(token: 1, uri: "sine", path: "sine:1000:441000:44100"), atSeconds: 0)
        }
        #expect(harness.waitFor { $0.contains(.songStarted(token: 1)) })
        var reached = false
        for _ in 0..<5000 where !reached {
            reached = capture.bytes.count >= oneSecond && capture.stalled.load(ordering: .acquiring)
            if !reached { usleep(1000) }
        }
        #expect(reached)
        let snapshot = harness.withPlayer { $0.snapshot }
        #expect(abs(snapshot.elapsedSeconds - 1) < 0.05, "elapsed \(snapshot.elapsedSeconds) after 1 s of audio")
        // `audio:` shows the decoder's format, as in mpd.
        #expect(snapshot.audioFormat == AudioFormat(sampleRate: 44100, sampleFormat: .float, channels: 2))
        // The output goes on before the harness stops the player (it waits for the output thread).
        capture.limit.store(Int.max, ordering: .relaxed)
        withExtendedLifetime(harness) {}
    }
}
