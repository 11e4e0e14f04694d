// SPDX-License-Identifier: GPL-3.0-or-later

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
            }
        }
        harness.waitForOutputs()
        let disables = seen.disables.load(ordering: .acquiring)
        #expect(disables == 1)
    }

    private final class Seen: Sendable {
        let disables = Atomic<Int>(-1)
    }
}
