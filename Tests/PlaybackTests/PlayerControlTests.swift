// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Model
import Playback
import Synchronization
import TestSupport
import Testing

@Suite struct PlayerControlTests {
    /// One chunk of the pipe at 44.1 kHz, 16-bit stereo (2048 frames): how far a published position may lag.
    static let chunkSeconds = 2048.0 / 44100

    @Test func seekStartsExactlyAtTheRequestedFrame() throws {
        let clock = ManualClock()
        let capture = CaptureOutput(sync: true, clock: clock)
        let harness = try PlayerHarness(outputs: [(nullConfiguration(), capture, nil)], clock: clock)
        harness.withPlayer { $0.play(fakeSong(1, base: 0, frames: 441_000), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.songStarted(token: 1)) })
        harness.advance(seconds: 0.1)
        #expect(harness.withPlayer { $0.seek(token: 1, toSeconds: 5.0) })
        #expect(harness.withPlayer { $0.seek(token: 99, toSeconds: 1.0) } == false)
        let right = harness.withPlayer { $0.snapshot }
        #expect(abs(right.elapsedSeconds - 5.0) < 0.001)
        harness.advance(seconds: 0.15)
        let after = harness.withPlayer { $0.snapshot }
        #expect(after.elapsedSeconds > 5.15 - Self.chunkSeconds && after.elapsedSeconds < 5.1501, "\(after)")
        harness.withPlayer { $0.stop() }
        let cut = try #require(capture.cancels.first)
        let samples = capture.samples16()
        let afterSeek = Array(samples[(cut / 4)...])
        #expect(!afterSeek.isEmpty)
        #expect(isRamp(afterSeek, from: 220_500, count: afterSeek.count))
        #expect(isRamp(Array(samples[..<(cut / 4)]), from: 0, count: cut / 4))
        // Only songStarted: a seek announces nothing, a stop neither.
        #expect(harness.received == [.songStarted(token: 1)])
        // The decoder started once: a seek within the song it decodes does not open it again.
        #expect(harness.startedDecoders == [1])
    }

    @Test func theDecodersFormatShowsWhilePausedBeforeAnyOutputPlayedIt() throws {
        let capture = CaptureOutput(sync: true)
        let harness = try PlayerHarness(outputs: [(nullConfiguration(), capture, nil)])
        harness.withPlayer { player in
            player.play(fakeSong(1, base: 0, frames: 441_000), atSeconds: 0)
            player.setPaused(true)
        }
        let deadline = Date(timeIntervalSinceNow: 5)
        while harness.startedDecoders.isEmpty && Date() < deadline { usleep(2000) }
        #expect(harness.startedDecoders == [1])
        // As mpd's `audio:` after its decoder's start-up: known while paused, and over a seek within the song.
        let paused = harness.withPlayer { $0.snapshot }
        #expect(paused.state == .pause && paused.audioFormat != nil)
        #expect(harness.withPlayer { $0.seek(token: 1, toSeconds: 2.0) })
        let sought = harness.withPlayer { $0.snapshot }
        #expect(sought.audioFormat == paused.audioFormat && sought.elapsedSeconds == 2.0)
        #expect(!harness.received.contains(.songStarted(token: 1)))
        harness.withPlayer { $0.stop() }
    }

    @Test func aSongWhoseDecoderCannotSeekRefusesSeeksAndStartsFromItsBeginning() throws {
        let clock = ManualClock()
        let capture = CaptureOutput(sync: true, clock: clock)
        let harness = try PlayerHarness(outputs: [(nullConfiguration(), capture, nil)], clock: clock)
        harness.withPlayer { $0.play(fakeSong(1, base: 0, frames: 441_000, format: "unseekable"), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.songStarted(token: 1)) })
        harness.advance(seconds: 0.1)
        // As mpd: a seek past the start fails while the decoder is at the song; the song plays on.
        #expect(harness.withPlayer { $0.seek(token: 1, toSeconds: 5.0) } == false)
        #expect(harness.withPlayer { $0.snapshot.state } == .play)
        harness.withPlayer { $0.stop() }
        // The write the stop interrupted ends before the output drops the stream.
        #expect(eventually { !capture.cancels.isEmpty })
        let first = try #require(capture.cancels.first) / 4
        // Started at 3 s (mpd skips the initial seek of such a decoder): from the beginning, without a failure.
        harness.withPlayer { $0.play(fakeSong(2, base: 1000, frames: 441_000, format: "unseekable"), atSeconds: 3) }
        #expect(harness.waitFor { $0.contains(.songStarted(token: 2)) })
        harness.advance(seconds: 0.1)
        let snapshot = harness.withPlayer { $0.snapshot }
        #expect(snapshot.state == .play && snapshot.elapsedSeconds > 0.1 - Self.chunkSeconds)
        #expect(snapshot.elapsedSeconds < 0.1001)
        harness.withPlayer { $0.stop() }
        let second = Array(capture.samples16()[first...])
        #expect(second.count > 4410)
        #expect(isRamp(second, from: 1000, count: second.count))
        #expect(!harness.received.contains { if case .songFailed = $0 { true } else { false } })
    }

    @Test func elapsedFollowsWhatWasPlayedAndPauseFreezesIt() throws {
        let clock = ManualClock()
        let capture = CaptureOutput(sync: true, clock: clock)
        let harness = try PlayerHarness(outputs: [(nullConfiguration(), capture, nil)], clock: clock)
        harness.withPlayer { $0.play(fakeSong(1, base: 0, frames: 441_000), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.songStarted(token: 1)) })
        harness.advance(seconds: 0.3)
        harness.withPlayer { $0.setPaused(true) }
        // As the `pause` command answers: once the output stopped writing.
        harness.waitForOutputs()
        let paused = harness.withPlayer { $0.snapshot }
        #expect(paused.state == .pause)
        #expect(paused.elapsedSeconds > 0.3 - Self.chunkSeconds && paused.elapsedSeconds < 0.3001, "\(paused)")
        #expect(paused.durationSeconds == 10)
        #expect(paused.audioFormat == AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        let heardWhilePaused = capture.bytes.count
        harness.advance(seconds: 0.3)
        let stillPaused = harness.withPlayer { $0.snapshot }
        #expect(stillPaused.elapsedSeconds == paused.elapsedSeconds)
        #expect(capture.bytes.count == heardWhilePaused)
        harness.withPlayer { $0.setPaused(false) }
        #expect(eventually { !capture.pausing.load(ordering: .acquiring) })
        harness.advance(seconds: 0.3)
        let resumed = harness.withPlayer { $0.snapshot }
        #expect(resumed.state == .play)
        let played = resumed.elapsedSeconds - paused.elapsedSeconds
        // The null output forgets at the pause what it had not played yet (at most a chunk): it counts as heard.
        #expect(played > 0.3 - Self.chunkSeconds && played < 0.3 + 2 * Self.chunkSeconds, "\(resumed)")
        harness.withPlayer { $0.stop() }
        let samples = capture.samples16()
        #expect(isRamp(samples, from: 0, count: samples.count))
    }

    @Test func stopEndsPlaybackWithoutEvents() throws {
        let clock = ManualClock()
        let capture = CaptureOutput(sync: true, clock: clock)
        let harness = try PlayerHarness(outputs: [(nullConfiguration(), capture, nil)], clock: clock)
        harness.withPlayer { player in
            player.play(fakeSong(1, base: 0, frames: 441_000), atSeconds: 0)
            player.queue(fakeSong(2, base: 0, frames: 441_000))
        }
        #expect(harness.waitFor { $0.contains(.songStarted(token: 1)) })
        let cancelled = capture.cancels.count
        harness.withPlayer { $0.stop() }
        #expect(harness.withPlayer { $0.snapshot } == PlayerSnapshot())
        // `stop()` does not wait for the output thread (the loop never waits on a device): a write already in
        // flight may still land. Count once the output thread has taken the stop (it cancels the device).
        #expect(eventually { capture.cancels.count > cancelled })
        let stopped = capture.bytes.count
        clock.advance(seconds: 0.2)
        #expect(capture.bytes.count == stopped)
        #expect(harness.received == [.songStarted(token: 1)])
        // Playing again after a stop works.
        harness.withPlayer { $0.play(fakeSong(3, base: 0, frames: 4410), atSeconds: 0) }
        #expect(harness.waitFor(advancing: true) { $0.contains(.finished(token: 3)) })
    }

    @Test func playStartsAtAnOffsetAndHonoursTheRange() throws {
        let capture = CaptureOutput(sync: false)
        let harness = try PlayerHarness(outputs: [(nullConfiguration(), capture, nil)])
        var song = fakeSong(1, base: 0, frames: 44_100)
        song.rangeStartMilliseconds = 100
        song.rangeEndMilliseconds = 500
        harness.withPlayer { $0.play(song, atSeconds: 0.1) }
        #expect(harness.waitFor { $0.contains(.finished(token: 1)) })
        // Range 4410..<22050, started 0.1 s into it.
        #expect(isRamp(capture.samples16(), from: 8820, count: 22_050 - 8820))
    }

    @Test func aFailingOutputIsReportedWhileTheOtherKeepsPlaying() throws {
        let good = CaptureOutput(sync: false)
        let bad = CaptureOutput(sync: false)
        bad.failOpen.store(true, ordering: .relaxed)
        let harness = try PlayerHarness(outputs: [
            (nullConfiguration("good"), good, nil), (nullConfiguration("bad"), bad, nil),
        ])
        harness.withPlayer { $0.play(fakeSong(1, base: 0, frames: 20_000), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.finished(token: 1)) })
        #expect(harness.received.contains(.outputsChanged))
        #expect(!harness.received.contains { if case .outputFailed = $0 { true } else { false } })
        #expect(isRamp(good.samples16(), from: 0, count: 20_000))
    }

    @Test func allOutputsFailingPausesThePlayer() throws {
        let bad = CaptureOutput(sync: false)
        bad.failOpen.store(true, ordering: .relaxed)
        let harness = try PlayerHarness(outputs: [(nullConfiguration("bad"), bad, nil)])
        harness.withPlayer { $0.play(fakeSong(1, base: 0, frames: 20_000), atSeconds: 0) }
        // Named as mpd names the output in its errors.
        #expect(
            harness.waitFor {
                $0.contains(.outputFailed(message: "Failed to open \"bad\" (capture); cannot open capture"))
            })
        let snapshot = harness.withPlayer { $0.snapshot }
        #expect(snapshot.state == .pause)
        #expect(snapshot.token == 1)
        // Once the device works again (the output retries after 0.2 s here), resuming plays the song from its start.
        bad.failOpen.store(false, ordering: .relaxed)
        harness.clock.advance(seconds: 0.2)
        harness.withPlayer { $0.setPaused(false) }
        #expect(harness.waitFor { $0.contains(.finished(token: 1)) })
        #expect(isRamp(bad.samples16(), from: 0, count: 20_000))
    }

    @Test func playingWithEveryOutputDisabledPauses() throws {
        let capture = CaptureOutput(sync: false)
        let harness = try PlayerHarness(outputs: [
            (OutputConfiguration(name: "off", type: "null", enabled: false), capture, nil)
        ])
        harness.withPlayer { $0.play(fakeSong(1, base: 0, frames: 5000), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.outputFailed(message: "All audio outputs are disabled")) })
        #expect(harness.withPlayer { $0.snapshot.state } == .pause)
        // Resuming with still nothing enabled fails the same way.
        harness.withPlayer { $0.setPaused(false) }
        #expect(
            harness.waitFor { $0.filter { $0 == .outputFailed(message: "All audio outputs are disabled") }.count == 2 })
        #expect(harness.withPlayer { $0.snapshot.state } == .pause)
        harness.withPlayer { player in
            _ = player.setOutput(id: 0, enabled: true)
            player.setPaused(false)
        }
        #expect(harness.waitFor { $0.contains(.finished(token: 1)) })
        #expect(isRamp(capture.samples16(), from: 0, count: 5000))
    }

    @Test func disablingTheLastOutputWhilePlayingPausesAndTheDecoderWaits() throws {
        // Ten seconds: far more than the 1 MiB pipe holds, so a decoder running on would overwrite what is unheard.
        let frames = 441_000
        let capture = CaptureOutput(sync: false)
        capture.held.store(true, ordering: .relaxed)
        let harness = try PlayerHarness(outputs: [(nullConfiguration(), capture, nil)])
        harness.withPlayer { $0.play(fakeSong(1, base: 0, frames: frames), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.songStarted(token: 1)) })
        harness.withPlayer { _ = $0.setOutput(id: 0, enabled: false) }
        capture.held.store(false, ordering: .relaxed)
        #expect(harness.waitFor { $0.contains(.outputFailed(message: "Failed to open audio output")) })
        #expect(harness.withPlayer { $0.snapshot.state } == .pause)
        usleep(300_000)
        harness.withPlayer { player in
            _ = player.setOutput(id: 0, enabled: true)
            player.setPaused(false)
        }
        #expect(harness.waitFor(timeout: 10) { $0.contains(.finished(token: 1)) })
        // Playback went on where it stopped: a ramp to the song's end with at most the chunk that was being
        // written when the output went away missing.
        let samples = capture.samples16().map { Int(UInt16(bitPattern: $0)) }
        let jumps = zip(samples, samples.dropFirst()).filter { ($1 - $0 + 65536) % 65536 != 1 }
        #expect(jumps.count <= 1)
        #expect(jumps.allSatisfy { ($0.1 - $0.0 + 65536) % 65536 <= 2048 }, "\(jumps)")
        #expect(samples.count >= frames - 2048 && samples.last == (frames - 1) % 65536)
    }

    @Test func outputsAreListedAndCanBeDisabled() throws {
        let first = CaptureOutput(sync: false)
        let second = CaptureOutput(sync: false)
        let harness = try PlayerHarness(outputs: [
            (nullConfiguration("one"), first, nil),
            (OutputConfiguration(name: "two", type: "null", enabled: false), second, nil),
        ])
        let listed = harness.withPlayer { $0.outputs }
        #expect(listed.map(\.name) == ["one", "two"])
        #expect(listed.map(\.enabled) == [true, false])
        #expect(harness.withPlayer { $0.setOutput(id: 1, enabled: true) })
        #expect(harness.withPlayer { $0.setOutput(id: 0, enabled: false) })
        #expect(harness.withPlayer { $0.setOutput(id: 5, enabled: false) } == false)
        harness.withPlayer { $0.play(fakeSong(1, base: 0, frames: 5000), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.finished(token: 1)) })
        #expect(first.bytes.isEmpty)
        #expect(isRamp(second.samples16(), from: 0, count: 5000))
    }
}
