// SPDX-License-Identifier: GPL-3.0-or-later

import Playback
import TestSupport
import Testing

@Suite struct PlayerSnapshotTests {
    @Test func stoppedByDefault() {
        let snapshot = PlayerSnapshot()
        #expect(snapshot.state == .stop)
        #expect(snapshot.token == nil)
    }

    @Test func bitRateIsThatOfTheChunkBeingHeardNotTheNewestDecoded() throws {
        // The fake decoder's bit rate is 100 + the tenth of a second a chunk starts at; it decodes far ahead.
        let clock = ManualClock()
        let harness = try PlayerHarness(
            outputs: [(nullConfiguration(), CaptureOutput(sync: true, clock: clock), nil)], clock: clock)
        harness.withPlayer { $0.play(fakeSong(1, base: 0, frames: 44100 * 3), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.songStarted(token: 1)) })
        for _ in 0..<3 {
            harness.advance(seconds: 0.15)
            let snapshot = harness.withPlayer { $0.snapshot }
            let tenths = Int(snapshot.elapsedSeconds * 10)
            #expect(snapshot.bitRate >= 100 + tenths - 1 && snapshot.bitRate <= 100 + tenths + 1, "\(snapshot)")
        }
        harness.withPlayer { $0.stop() }
        #expect(harness.withPlayer { $0.snapshot.bitRate } == 0)
    }

    @Test func replayGainModesInMPDOrder() {
        #expect(ReplayGainMode.allCases.map(\.rawValue) == ["off", "track", "album", "auto"])
    }
}
