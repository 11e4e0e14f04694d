// SPDX-License-Identifier: GPL-3.0-or-later

import Testing

@testable import Server

/// `mpd`'s mixer memento: a volume read from the mixers is shown again until its clock has run a second, and the
/// clock moves only when a kept volume is found out of date.
@Suite struct HardwareVolumeCacheTests {
    /// Reads at `now` (in milliseconds) with the mixers saying `mixers`; returns the volume shown and whether the
    /// mixers were asked.
    private func read(_ cache: inout HardwareVolumeCache, at milliseconds: UInt64, mixers: Int?) -> (Int?, Bool) {
        var asked = false
        let shown = cache.volume(now: milliseconds * 1_000_000) {
            asked = true
            return mixers
        }
        return (shown, asked)
    }

    @Test func aVolumeReadIsShownAgainUntilTheClockRanASecond() {
        var cache = HardwareVolumeCache()
        // Nothing kept: the mixers are asked, and the clock does not move.
        #expect(self.read(&cache, at: 5000, mixers: 53) == (53, true))
        // Kept, and the clock (never moved) is more than a second behind: it moves, the mixers are asked.
        #expect(self.read(&cache, at: 5100, mixers: 53) == (53, true))
        // Within a second of the clock: the kept volume, whatever the mixers say now.
        #expect(self.read(&cache, at: 5500, mixers: nil) == (53, false))
        #expect(self.read(&cache, at: 6099, mixers: nil) == (53, false))
        // A second after the clock moved: asked again; no volume is kept.
        #expect(self.read(&cache, at: 6100, mixers: nil) == (nil, true))
        #expect(self.read(&cache, at: 6101, mixers: 40) == (40, true))
        // The clock moved at 6100: kept until 7100.
        #expect(self.read(&cache, at: 7000, mixers: 41) == (40, false))
        #expect(self.read(&cache, at: 7100, mixers: 41) == (41, true))
    }

    @Test func anInvalidatedVolumeIsReadWithoutMovingTheClock() {
        var cache = HardwareVolumeCache()
        #expect(self.read(&cache, at: 5000, mixers: 20) == (20, true))
        #expect(self.read(&cache, at: 5001, mixers: 20) == (20, true))
        // A volume set at 5400: read from the mixers, the clock stays at 5001.
        cache.invalidate()
        #expect(self.read(&cache, at: 5400, mixers: 49) == (49, true))
        #expect(self.read(&cache, at: 5900, mixers: 30) == (49, false))
        #expect(self.read(&cache, at: 6001, mixers: 30) == (30, true))
    }
}
