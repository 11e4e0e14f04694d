// SPDX-License-Identifier: GPL-3.0-or-later

import Playback
import Testing

@Suite struct PlayerSnapshotTests {
    @Test func stoppedByDefault() {
        let snapshot = PlayerSnapshot()
        #expect(snapshot.state == .stop)
        #expect(snapshot.token == nil)
    }

    @Test func replayGainModesInMPDOrder() {
        #expect(ReplayGainMode.allCases.map(\.rawValue) == ["off", "track", "album", "auto"])
    }
}
