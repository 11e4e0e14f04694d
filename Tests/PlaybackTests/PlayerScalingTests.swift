// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Model
import Synchronization
import TestSupport
import Testing

@testable import Playback

@Suite struct PlayerScalingTests {
    /// Plays a ramp from `base` and returns channel 0 as 16-bit samples.
    private func play(
        gain: ReplayGainInfo = ReplayGainInfo(), mode: ReplayGainMode,
        settings: ReplayGainSettings = ReplayGainSettings(),
        base: Int64 = 10_000, frames: Int = 6000
    ) throws -> [Int16] {
        let capture = CaptureOutput(sync: false)
        let harness = try PlayerHarness(outputs: [(nullConfiguration(), capture, nil)], replayGain: settings)
        harness.withPlayer { player in
            player.replayGainMode = mode
            player.play(fakeSong(1, base: base, frames: frames, gain: gain), atSeconds: 0)
        }
        #expect(harness.waitFor { $0.contains(.finished(token: 1)) })
        return capture.samples16()
    }

    /// Whether `samples` is the ramp from `base` scaled by `factor`, give or take mpd's dither (its noise and
    /// error feedback move a 16-bit sample by up to 3 steps).
    private func scaled(_ samples: [Int16], base: Int, by factor: Double) -> Bool {
        samples.enumerated().allSatisfy { abs(Double($0.element) - Double(base + $0.offset) * factor) <= 3 }
    }

    @Test func trackGainScalesTheSamples() throws {
        let samples = try self.play(gain: ReplayGainInfo(trackGain: -6.0206, trackPeak: 0.5), mode: .track)
        #expect(samples.count == 6000)
        #expect(self.scaled(samples, base: 10_000, by: 0.5))
    }

    @Test func albumModeFallsBackToTrackGainAndPreampAdds() throws {
        let samples = try self.play(
            gain: ReplayGainInfo(trackGain: -12.0412), mode: .album, settings: ReplayGainSettings(preampDB: 6.0206))
        #expect(self.scaled(samples, base: 10_000, by: 0.5))
    }

    @Test func limitKeepsThePeakBelowFullScale() throws {
        let samples = try self.play(gain: ReplayGainInfo(trackGain: 6, trackPeak: 0.8), mode: .track)
        #expect(self.scaled(samples, base: 10_000, by: 1.25))
        let unlimited = try self.play(
            gain: ReplayGainInfo(trackGain: 6, trackPeak: 0.8), mode: .track, settings: ReplayGainSettings(limit: false)
        )
        // mpd's volume step for +6 dB: 1.99526 × 1024 = 2043.2 -> 2043.
        #expect(self.scaled(unlimited, base: 10_000, by: 2043.0 / 1024))
    }

    @Test func missingPreampAppliesToSongsWithoutValuesAndOffIsBitExact() throws {
        let missing = try self.play(mode: .track, settings: ReplayGainSettings(missingPreampDB: -6.0206))
        #expect(self.scaled(missing, base: 10_000, by: 0.5))
        let off = try self.play(
            gain: ReplayGainInfo(trackGain: -6), mode: .off, settings: ReplayGainSettings(missingPreampDB: -6))
        #expect(isRamp(off, from: 10_000, count: 6000))
    }

    /// As in `mpd`, whose decoder submits the ReplayGain it read whatever the mode and whose outputs apply the
    /// mode: `replay_gain_mode track` sent while a song plays (here one the library has no ReplayGain for, as a
    /// song loaded from mpd's database) scales the rest of it by the gain its decoder read.
    @Test func aModeSetWhileTheSongPlaysAppliesToIt() throws {
        let capture = CaptureOutput(sync: false)
        capture.limit.store(4000 * 4, ordering: .relaxed)
        let harness = try PlayerHarness(outputs: [(nullConfiguration(), capture, nil)])
        harness.withPlayer { $0.play(fakeSong(1, base: 1000, frames: 30_000, format: "halfgain"), atSeconds: 0) }
        #expect(eventually { capture.stalled.load(ordering: .acquiring) })
        harness.withPlayer { $0.replayGainMode = .track }
        capture.limit.store(Int.max, ordering: .relaxed)
        #expect(harness.waitFor { $0.contains(.finished(token: 1)) })
        let samples = capture.samples16()
        #expect(samples.count == 30_000)
        #expect(isRamp(Array(samples[0..<4000]), from: 1000, count: 4000))
        // The chunk being played when the mode changed is played as it was converted; the ones after are halved.
        #expect(self.scaled(Array(samples[10_000...]), base: 11_000, by: 0.5))
    }

    /// The APE tag is read (`apeReplayGainReader`) only for a song whose decoder and library entry have no
    /// ReplayGain, while ReplayGain is on, as `mpd` reads it; the decoder's ReplayGain wins over the library's.
    @Test func theAPETagIsReadOnlyWhenNothingElseHasReplayGain() throws {
        func play(format: String = "", gain: ReplayGainInfo = ReplayGainInfo(), mode: ReplayGainMode) throws
            -> (samples: [Int16], reads: Int)
        {
            let reads = Atomic<Int>(0)
            let capture = CaptureOutput(sync: false)
            let harness = try PlayerHarness(
                outputs: [(nullConfiguration(), capture, nil)],
                apeReplayGainReader: { _ in
                    reads.add(1, ordering: .relaxed)
                    return ReplayGainInfo(trackGain: -6.0206)
                })
            harness.withPlayer { player in
                player.replayGainMode = mode
                player.play(fakeSong(1, base: 1000, frames: 6000, format: format, gain: gain), atSeconds: 0)
            }
            #expect(harness.waitFor { $0.contains(.finished(token: 1)) })
            return (capture.samples16(), reads.load(ordering: .relaxed))
        }
        let decoder = try play(format: "halfgain", gain: ReplayGainInfo(trackGain: 0), mode: .track)
        #expect(decoder.reads == 0 && self.scaled(decoder.samples, base: 1000, by: 0.5))
        let library = try play(gain: ReplayGainInfo(trackGain: -12.0412), mode: .track)
        #expect(library.reads == 0 && self.scaled(library.samples, base: 1000, by: 0.25))
        let off = try play(mode: .off)
        #expect(off.reads == 0 && isRamp(off.samples, from: 1000, count: 6000))
        let ape = try play(mode: .track)
        #expect(ape.reads == 1 && self.scaled(ape.samples, base: 1000, by: 0.5))
    }

    @Test func softwareVolumeUsesMPDsCurve() throws {
        let capture = CaptureOutput(sync: false)
        let harness = try PlayerHarness(outputs: [(nullConfiguration(mixer: .software), capture, nil)])
        #expect(harness.withPlayer { $0.volume } == 100)
        #expect(harness.withPlayer { $0.setVolume(50) } == .changed)
        #expect(harness.withPlayer { $0.volume } == 50)
        harness.withPlayer { $0.play(fakeSong(1, base: 10_000, frames: 6000), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.finished(token: 1)) })
        let factor = ((exp(2.0) - 1) / (exp(4.0) - 1) * 1024).rounded() / 1024
        // As mpd, a software mixer's output plays 16-bit songs as 24-bit (its ReplayGain filter widens them).
        #expect(capture.opens == [AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2)])
        let words = capture.samples24()
        #expect(words.count == 6000)
        let errors = words.enumerated().map { abs(Double($0.element) / 256 - Double(10_000 + $0.offset) * factor) }
        #expect(errors.allSatisfy { $0 <= 0.1 })
    }

    @Test func noMixerMeansNoVolume() throws {
        let harness = try PlayerHarness(outputs: [
            (nullConfiguration(mixer: MixerType.none), CaptureOutput(sync: false), nil)
        ])
        #expect(harness.withPlayer { $0.volume } == nil)
        #expect(harness.withPlayer { $0.setVolume(20) } == .noMixer)
    }

    /// A mixer that fails as a hardware mixer whose control cannot be reached, or takes the volume.
    private final class FailingMixer: Mixer, @unchecked Sendable {  // test double: used on the loop thread only
        let fails: Bool
        var value = 100
        init(fails: Bool) { self.fails = fails }
        func open() throws(OutputError) {}
        func close() {}
        func volume() throws(OutputError) -> Int { self.value }
        func setVolume(_ volume: Int) throws(OutputError) {
            if self.fails { throw OutputError("failed to attach to pulsemix: No such file or directory") }
            self.value = volume
        }
    }

    /// `setvol`'s outcome over several outputs, ranked as mpd's `SetVolumeResult` (probed on mpd 0.23.12 with
    /// a hardware mixer on PulseAudio's ALSA control plugin): a disabled output's hardware mixer is not asked, the
    /// first failure names its output, and a failure after a success still wins (mpd's order of checks).
    @Test func setVolumeRanksTheOutputsAsMPD() throws {
        func outcome(_ outputs: [(fails: Bool, enabled: Bool)]) throws -> (VolumeChange, [Int]) {
            let mixers = outputs.map { FailingMixer(fails: $0.fails) }
            let harness = try PlayerHarness(
                outputs: outputs.enumerated().map { index, output in
                    var configuration = nullConfiguration("o\(index)", mixer: .hardware)
                    configuration.enabled = output.enabled
                    return (configuration, CaptureOutput(sync: false), mixers[index])
                })
            return (harness.withPlayer { $0.setVolume(40) }, mixers.map(\.value))
        }
        #expect(try outcome([(false, false)]) == (.allDisabled, [100]))
        #expect(try outcome([(false, false), (false, true)]) == (.changed, [100, 40]))
        #expect(
            try outcome([(true, true), (true, true)]).0
                == .failed("Failed to set mixer for 'o0'; failed to attach to pulsemix: No such file or directory"))
        #expect(
            try outcome([(false, true), (true, true)]).0
                == .failed("Failed to set mixer for 'o1'; failed to attach to pulsemix: No such file or directory"))
        #expect(try outcome([(true, true), (false, true)]) == (.changed, [100, 40]))
        #expect(try outcome([(true, false)]) == (.allDisabled, [100]))
    }

    @Test func volumeChangesGlideWithoutSteps() throws {
        let clock = ManualClock()
        let capture = CaptureOutput(sync: true, clock: clock)
        let harness = try PlayerHarness(outputs: [(nullConfiguration(mixer: .software), capture, nil)], clock: clock)
        harness.withPlayer { $0.play(fakeSong(1, base: 20_000, frames: 441_000), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.songStarted(token: 1)) })
        harness.advance(seconds: 0.1)
        harness.withPlayer { _ = $0.setVolume(0) }
        harness.advance(seconds: 0.15)
        harness.withPlayer { $0.stop() }
        // 24-bit (the software mixer's widening), in 16-bit units.
        let samples = capture.samples24().map { Double($0) / 256 }
        let ratios = samples.enumerated().map { $0.element / Double(Int16(truncatingIfNeeded: 20_000 + $0.offset)) }
        #expect(ratios.first.map { abs($0 - 1) < 0.001 } == true)
        #expect(ratios.last.map { abs($0) < 0.001 } == true)
        // 20 000 → 0 over one chunk (2048 frames): no step larger than a few thousandths.
        let largestStep = zip(ratios, ratios.dropFirst()).map { abs($1 - $0) }.max() ?? 1
        #expect(largestStep < 0.005)
    }

    @Test func convertsToTheFormatTheDeviceAccepts() throws {
        // 16-bit stereo to 32-bit mono.
        let wide = CaptureOutput(sync: false, format: AudioFormat(sampleRate: 44100, sampleFormat: .s32, channels: 1))
        let harness = try PlayerHarness(outputs: [(nullConfiguration(), wide, nil)])
        harness.withPlayer { $0.play(fakeSong(1, base: 1000, frames: 3000), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.finished(token: 1)) })
        let words = wide.bytes.withUnsafeBytes { Array($0.bindMemory(to: Int32.self)) }
        #expect(words.count == 3000)
        #expect(words.enumerated().allSatisfy { $0.element == Int32(1000 + $0.offset) << 16 })

        // 24-bit mono to 16-bit stereo: mpd's dither first, then the mono sample on both sides.
        let narrow = CaptureOutput(sync: false, format: AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        let second = try PlayerHarness(outputs: [(nullConfiguration(), narrow, nil)])
        second.withPlayer { $0.play(fakeSong(1, base: 0x10000, frames: 3000, format: "44100:24:1"), atSeconds: 0) }
        #expect(second.waitFor { $0.contains(.finished(token: 1)) })
        let pairs = narrow.bytes.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        #expect(pairs.count == 6000)
        var dither = PCMDither()
        let want = (0..<3000).map { Int16(truncatingIfNeeded: dither.shift(Int64(0x10000 + $0), bits: 24, by: 8)) }
        let left = stride(from: 0, to: pairs.count, by: 2).map { pairs[$0] }
        let right = stride(from: 1, to: pairs.count, by: 2).map { pairs[$0] }
        #expect(left == want)
        #expect(right == want)
    }
}
