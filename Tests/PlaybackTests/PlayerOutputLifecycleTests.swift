// SPDX-License-Identifier: GPL-3.0-or-later

import Dispatch
import Model
import Playback
import Synchronization
import TestSupport
import Testing

/// When the outputs' devices are enabled and disabled: as `mpd`'s, not at start-up but when the player first
/// opens them, and on `enableoutput`/`disableoutput` only once the player ran.
@Suite struct PlayerOutputLifecycleTests {
    private func counts(_ outputs: [CaptureOutput]) -> [[Int]] {
        outputs.map { [$0.enables.load(ordering: .relaxed), $0.disables.load(ordering: .relaxed)] }
    }

    @Test func devicesAreEnabledWhenTheyFirstPlayThenFollowTheirFlags() throws {
        let first = CaptureOutput(sync: false)
        let second = CaptureOutput(sync: false)
        let harness = try PlayerHarness(outputs: [
            (nullConfiguration("one"), first, nil),
            (OutputConfiguration(name: "two", type: "null", enabled: false), second, nil),
        ])
        harness.waitForOutputs()
        #expect(self.counts([first, second]) == [[0, 0], [0, 0]])
        // Before anything played, the flags change and nothing else.
        harness.withPlayer { _ = $0.setOutput(id: 1, enabled: true) }
        harness.withPlayer { _ = $0.setOutput(id: 1, enabled: false) }
        harness.waitForOutputs()
        #expect(self.counts([first, second]) == [[0, 0], [0, 0]])
        harness.withPlayer { $0.play(fakeSong(1, base: 0, frames: 5000), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.finished(token: 1)) })
        #expect(self.counts([first, second]) == [[1, 0], [0, 0]])
        // Stopped, the devices follow the flags from now on.
        harness.withPlayer { _ = $0.setOutput(id: 0, enabled: false) }
        harness.waitForOutputs()
        #expect(self.counts([first, second]) == [[1, 1], [0, 0]])
        harness.withPlayer { _ = $0.setOutput(id: 0, enabled: true) }
        harness.withPlayer { _ = $0.setOutput(id: 1, enabled: true) }
        harness.waitForOutputs()
        #expect(self.counts([first, second]) == [[2, 1], [1, 0]])
        // Playing again enables nothing anew.
        harness.withPlayer { $0.play(fakeSong(2, base: 0, frames: 5000), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.finished(token: 2)) })
        #expect(self.counts([first, second]) == [[2, 1], [1, 0]])
        #expect(isRamp(second.samples16(), from: 0, count: 5000))
    }

    @Test func aFirstSongThatFailsEnablesNothingUntilAFlagChanges() throws {
        let first = CaptureOutput(sync: false)
        let second = CaptureOutput(sync: false)
        let third = CaptureOutput(sync: false)
        let harness = try PlayerHarness(outputs: [
            (nullConfiguration("one"), first, nil),
            (OutputConfiguration(name: "two", type: "null", enabled: false), second, nil),
            (nullConfiguration("three"), third, nil),
        ])
        harness.withPlayer { $0.play(PlayableSong(token: 1, uri: "x.mp3", path: "broken"), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains { if case .songFailed = $0 { true } else { false } } })
        harness.waitForOutputs()
        #expect(self.counts([first, second, third]) == [[0, 0], [0, 0], [0, 0]])
        // The player ran: a change of one output's flag enables every enabled output.
        harness.withPlayer { _ = $0.setOutput(id: 1, enabled: true) }
        harness.waitForOutputs()
        #expect(self.counts([first, second, third]) == [[1, 0], [1, 0], [1, 0]])
    }

    @Test func aDeviceThatCannotBeEnabledFailsTheFirstPlay() throws {
        let output = CaptureOutput(sync: false)
        output.failEnable.store(true, ordering: .relaxed)
        let harness = try PlayerHarness(outputs: [(nullConfiguration("one"), output, nil)])
        harness.waitForOutputs()
        #expect(harness.received.isEmpty)
        harness.withPlayer { $0.play(fakeSong(1, base: 0, frames: 5000), atSeconds: 0) }
        let message = "Failed to enable output \"one\" (capture); cannot enable capture"
        #expect(harness.waitFor { $0.contains(.outputFailed(message: message)) })
        #expect(harness.withPlayer { $0.snapshot.state } == .pause)
        #expect(self.counts([output]) == [[0, 0]])
    }

    @Test func aDeviceThatFailedToEnableIsTriedAgainAtOnceWhenASongStarts() throws {
        let output = CaptureOutput(sync: false)
        output.failEnable.store(true, ordering: .relaxed)
        let harness = try PlayerHarness(outputs: [(nullConfiguration("one"), output, nil)])
        harness.withPlayer { $0.play(fakeSong(1, base: 0, frames: 5000), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains { if case .outputFailed = $0 { true } else { false } } })
        harness.withPlayer { $0.stop() }
        output.failEnable.store(false, ordering: .relaxed)
        // As mpd, which opens its outputs with force when a song starts: not when the retry is due (the harness's
        // clock, which times it, never moves here).
        harness.withPlayer { $0.play(fakeSong(2, base: 0, frames: 5000), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.finished(token: 2)) })
        #expect(self.counts([output]) == [[1, 0]])
        #expect(isRamp(output.samples16(), from: 0, count: 5000))
    }

    @Test func aDeviceThatFailedToEnableIsEnabledAgainWhenAnOutputsFlagChanges() throws {
        let clock = ManualClock()
        let failing = CaptureOutput(sync: false)
        failing.failEnable.store(true, ordering: .relaxed)
        let playing = CaptureOutput(sync: true, clock: clock)
        let other = CaptureOutput(sync: false)
        let harness = try PlayerHarness(
            outputs: [
                (nullConfiguration("one"), failing, nil), (nullConfiguration("two"), playing, nil),
                (OutputConfiguration(name: "three", type: "null", enabled: false), other, nil),
            ], clock: clock)
        harness.withPlayer { $0.play(fakeSong(1, base: 0, frames: 441_000), atSeconds: 0) }
        // Another output plays: the failure changes the outputs' list (its error is not the player's).
        #expect(harness.waitFor { $0.contains(.outputsChanged) && $0.contains(.songStarted(token: 1)) })
        failing.failEnable.store(false, ordering: .relaxed)
        harness.waitForOutputs()
        #expect(self.counts([failing, playing, other]) == [[0, 0], [1, 0], [0, 0]])
        // As mpd's player, which enables every enabled output that is not yet when any output's flag changes: the
        // device is enabled before the change is answered, though its retry is not due (the clock never moves).
        harness.withPlayer { _ = $0.setOutput(id: 2, enabled: true) }
        harness.waitForOutputs()
        #expect(self.counts([failing, playing, other]) == [[1, 0], [1, 0], [1, 0]])
        // Its stream waits for the retry, or for a pause's end (mpd opens its outputs with force then).
        #expect(failing.opens.isEmpty)
        harness.withPlayer { $0.setPaused(true) }
        harness.waitForOutputs()
        #expect(failing.opens.isEmpty)
        harness.withPlayer { $0.setPaused(false) }
        #expect(eventually { !failing.opens.isEmpty })
        // (Not the samples: the device has most of the 10 s song in a moment, too many to poll.)
        #expect(eventually { !failing.bytes.isEmpty })
        #expect(self.counts([failing]) == [[1, 0]])
    }

    @Test func whenOutputsAppliedWaitsForTheDeviceToBeDisabled() throws {
        let output = CaptureOutput(sync: false)
        let harness = try PlayerHarness(outputs: [(nullConfiguration("one"), output, nil)])
        harness.withPlayer { $0.play(fakeSong(1, base: 0, frames: 5000), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.finished(token: 1)) })
        // What the device had done when the wait ended (-1: it has not ended).
        let seen = Seen()
        harness.withPlayer { player in
            _ = player.setOutput(id: 0, enabled: false)
            player.whenOutputsApplied {
                seen.disables.store(output.disables.load(ordering: .relaxed), ordering: .releasing)
                seen.called.signal()
            }
        }
        seen.waitForCall()
        let disables = seen.disables.load(ordering: .acquiring)
        #expect(disables == 1)
    }

    /// A player with `output` alone, playing a 10 s song.
    private func playing(_ output: CaptureOutput) throws -> PlayerHarness {
        let harness = try PlayerHarness(outputs: [(nullConfiguration("one"), output, nil)])
        harness.withPlayer { $0.play(fakeSong(1, base: 0, frames: 441_000), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.songStarted(token: 1)) })
        return harness
    }

    /// What a device had done when `whenOutputsApplied` called back (-1: it has not).
    private func applied(_ harness: PlayerHarness, _ output: CaptureOutput, after change: @escaping (Player) -> Void)
        -> (closes: Int, opens: Int)
    {
        let seen = Seen()
        harness.withPlayer { player in
            change(player)
            player.whenOutputsApplied {
                seen.closes.store(output.closes.load(ordering: .relaxed), ordering: .releasing)
                seen.opens.store(output.opens.count, ordering: .releasing)
                seen.called.signal()
            }
        }
        seen.waitForCall()
        return (seen.closes.load(ordering: .acquiring), seen.opens.load(ordering: .acquiring))
    }

    @Test func aDeviceWithoutPauseModeIsClosedWhenThePauseIsAppliedAndOpenWhenTheResumeIs() throws {
        let output = CaptureOutput(sync: true, hasPauseMode: false)
        let harness = try self.playing(output)
        // As mpd, which closes the mixer of such an output before it answers `pause`: the stream is closed by then.
        #expect(self.applied(harness, output) { $0.setPaused(true) } == (1, 1))
        // A resume is applied once the stream is open again (mpd answers it once its outputs opened).
        #expect(self.applied(harness, output) { $0.setPaused(false) } == (1, 2))
        // Stopping is applied once the stream is closed.
        #expect(self.applied(harness, output) { $0.stop() } == (2, 2))
        #expect(isRamp(output.samples16(), from: 0, count: output.samples16().count))
    }

    @Test func aDeviceWithPauseModeStaysOpenThroughAPause() throws {
        let output = CaptureOutput(sync: true)
        let harness = try self.playing(output)
        #expect(self.applied(harness, output) { $0.setPaused(true) } == (0, 1))
        // Paused in the device, which was written nothing more.
        let written = output.bytes.count
        #expect(eventually { output.pausing.load(ordering: .acquiring) })
        #expect(output.bytes.count == written)
        #expect(self.applied(harness, output) { $0.setPaused(false) } == (0, 1))
        #expect(self.applied(harness, output) { $0.stop() } == (1, 1))
    }

    @Test func aResumeWhoseDeviceFailsToOpenIsAppliedWithTheFailure() throws {
        let output = CaptureOutput(sync: true, hasPauseMode: false)
        let harness = try self.playing(output)
        #expect(self.applied(harness, output) { $0.setPaused(true) } == (1, 1))
        output.failOpen.store(true, ordering: .relaxed)
        // The open was tried and failed: the resume is answered all the same.
        #expect(self.applied(harness, output) { $0.setPaused(false) } == (1, 1))
        #expect(harness.waitFor { $0.contains { if case .outputFailed = $0 { true } else { false } } })
    }

    @Test func whenOutputsAppliedCallsBackInTheOrderItWasAsked() throws {
        let output = CaptureOutput(sync: true)
        let harness = try self.playing(output)
        // The output thread stands in `play`, so the pause cannot be applied before the first caller asks.
        output.held.store(true, ordering: .relaxed)
        #expect(eventually { output.stalled.load(ordering: .acquiring) })
        let order = Mutex<[String]>([])
        let firstEntered = DispatchSemaphore(value: 0)
        let firstMayEnd = DispatchSemaphore(value: 0)
        let secondCalled = DispatchSemaphore(value: 0)
        harness.withPlayer { player in
            player.setPaused(true)
            player.whenOutputsApplied {
                firstEntered.signal()
                _ = firstMayEnd.wait(timeout: .now() + 10)
                order.withLock { $0.append("first") }
            }
        }
        output.held.store(false, ordering: .relaxed)
        // The pause is applied, and the first callback is running on the output thread: a second caller, whose
        // request (none newer) is applied too, is answered after it, not at once.
        #expect(firstEntered.wait(timeout: .now() + 10) == .success)
        harness.withPlayer { player in
            player.whenOutputsApplied {
                order.withLock { $0.append("second") }
                secondCalled.signal()
            }
        }
        #expect(order.withLock { $0 }.isEmpty)
        firstMayEnd.signal()
        #expect(secondCalled.wait(timeout: .now() + 10) == .success)
        #expect(order.withLock { $0 } == ["first", "second"])
    }

    private final class Seen: Sendable {
        let disables = Atomic<Int>(-1)
        let closes = Atomic<Int>(-1)
        let opens = Atomic<Int>(-1)
        /// Signalled by the callback itself, which is what the test waits for (`whenOutputsApplied` answers callers
        /// in the order they asked, `whenOutputsAppliedCallsBackInTheOrderItWasAsked`, but this needs no other call).
        let called = DispatchSemaphore(value: 0)

        /// Waits up to 10 s of real time for the callback (the figures stay -1 if it never comes).
        func waitForCall() { _ = self.called.wait(timeout: .now() + 10) }
    }
}
