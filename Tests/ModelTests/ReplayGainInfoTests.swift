// SPDX-License-Identifier: GPL-3.0-or-later

import Testing

@testable import Model

struct ReplayGainInfoTests {
    @Test func eachValueIsKnownOrNotOnItsOwn() {
        var info = ReplayGainInfo(trackGain: -0.0, albumPeak: 0.5)
        #expect(info.trackGain == 0 && info.trackPeak == nil && info.albumGain == nil && info.albumPeak == 0.5)
        #expect(!info.isEmpty)
        info.albumGain = 3
        info.albumPeak = nil
        #expect(info == ReplayGainInfo(trackGain: 0, albumGain: 3))
        #expect(info != ReplayGainInfo(trackGain: 0, albumGain: 3, albumPeak: 0))
        #expect(Set([info, ReplayGainInfo(trackGain: 0, albumGain: 3)]).count == 1)
        info.trackGain = nil
        info.albumGain = nil
        #expect(info.isEmpty && info == ReplayGainInfo())
    }
}
