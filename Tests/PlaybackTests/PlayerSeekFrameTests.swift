// SPDX-License-Identifier: GPL-3.0-or-later

import Testing

@testable import Playback

/// Where a seek lands in the file: `mpd`'s whole-millisecond arithmetic (`SongTime::ToScale`).
@Suite struct PlayerSeekFrameTests {
    @Test func aSeekLandsOnMpdsFrame() {
        let song = PlayableSong(token: 1, uri: "a.flac", path: "a.flac")
        // 2.3 * 44100 is 101429.99… in floating point; mpd's 2300 ms * 44100 / 1000 is 101430.
        #expect(PlayerDecoderThread.frame(atSeconds: 2.3, of: song, rate: 44100) == 101_430)
        #expect(PlayerDecoderThread.frame(atSeconds: 0.7, of: song, rate: 48000) == 33_600)
        #expect(PlayerDecoderThread.frame(atSeconds: 0.001, of: song, rate: 44100) == 44)
        #expect(PlayerDecoderThread.frame(atSeconds: 0, of: song, rate: 96000) == 0)
        #expect(PlayerDecoderThread.frame(atSeconds: -1, of: song, rate: 96000) == 0)
    }

    /// In a range (a cue track), the start and the position add up before the division, as mpd's `start + t`.
    @Test func inARangeTheMillisecondsAddUpFirst() {
        let track = PlayableSong(token: 1, uri: "a.cue/track0002", path: "a.flac", rangeStartMilliseconds: 1)
        // (1 + 1) ms at 44100 Hz: 88 frames; 44 + 44 apart.
        #expect(PlayerDecoderThread.frame(atSeconds: 0.001, of: track, rate: 44100) == 88)
    }
}
