// SPDX-License-Identifier: GPL-3.0-or-later

import EventLoop
import Foundation
import Model
import Playback
import Synchronization
import TestSupport
import Testing

@Suite struct PlayerGaplessTests {
    @Test func queuedSongFollowsWithoutMissingOrRepeatedFrames() throws {
        let capture = CaptureOutput(sync: false)
        let harness = try PlayerHarness(outputs: [(nullConfiguration(), capture, nil)], bufferSize: 64 << 10)
        harness.withPlayer { player in
            player.play(fakeSong(1, base: 0, frames: 10_000), atSeconds: 0)
            player.queue(fakeSong(2, base: 10_000, frames: 7_001))
        }
        #expect(harness.waitFor { $0.contains(.finished(token: 2)) })
        #expect(harness.received == [.songStarted(token: 1), .songStarted(token: 2), .finished(token: 2)])
        // Only the song `play` started reports its decoder's start-up; the queued one follows at the border.
        #expect(harness.startedDecoders == [1])
        let samples = capture.samples16()
        #expect(samples.count == 17_001)
        #expect(isRamp(samples, from: 0, count: 17_001))
        #expect(harness.withPlayer { $0.snapshot.state } == .stop)
    }

    @Test func nextSongIsAskedForBeforeDecodingSoABusyLoopCannotMakeAGap() throws {
        // An output that plays as fast as the decoder: both songs are through long before a busy loop could
        // react to `songStarted`. The player asks for the next song before the decoder starts.
        let capture = CaptureOutput(sync: false)
        let harness = try PlayerHarness(outputs: [(nullConfiguration(), capture, nil)])
        harness.sync { $0.nextSong = { token in token == 1 ? fakeSong(2, base: 20_000, frames: 20_000) : nil } }
        let loop = harness.loop
        harness.withPlayer { player in
            player.play(fakeSong(1, base: 0, frames: 20_000), atSeconds: 0)
            // Busy in the turn after the decoder started.
            loop.execute { usleep(300_000) }
        }
        #expect(harness.waitFor { $0.contains(.finished(token: 2)) })
        #expect(harness.received == [.songStarted(token: 1), .songStarted(token: 2), .finished(token: 2)])
        #expect(capture.opens.count == 1)
        let gapless = isRamp(capture.samples16(), from: 0, count: 40_000)
        #expect(gapless)
    }

    @Test func songQueuedAfterTheDecoderFinishedIsStillGapless() throws {
        // A paced output: the decoder finishes song 1 long before it is heard, then song 2 is queued.
        let capture = CaptureOutput(sync: true)
        let harness = try PlayerHarness(outputs: [(nullConfiguration(), capture, nil)])
        harness.withPlayer { $0.play(fakeSong(1, base: 0, frames: 4410), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.songStarted(token: 1)) })
        harness.withPlayer { $0.queue(fakeSong(2, base: 4410, frames: 4410)) }
        #expect(harness.waitFor { $0.contains(.finished(token: 2)) })
        #expect(harness.received == [.songStarted(token: 1), .songStarted(token: 2), .finished(token: 2)])
        #expect(isRamp(capture.samples16(), from: 0, count: 8820))
    }

    @Test func aSongALateLoopQueuesAfterAnUnpacedOutputReadEverythingGoesOnInTheSameStream() throws {
        // An unpaced output (a recorder) reads songs 1 and 2 to the end while the loop is busy; the loop then
        // queues song 3, as the playlist does when it gets to song 2's `songStarted`. The output waited for the
        // loop to end the stream: song 3 follows in the stream still open (a recorder's `path` file is not
        // begun anew), and only song 3's end is reported.
        let capture = CaptureOutput(sync: false)
        let harness = try PlayerHarness(outputs: [(nullConfiguration(), capture, nil)])
        harness.withPlayer { player in
            player.play(fakeSong(1, base: 0, frames: 4410), atSeconds: 0)
            player.queue(fakeSong(2, base: 4410, frames: 4410))
        }
        let read = harness.withPlayer { player in
            // Busy until the output has read both songs, and a while after: an output that ended the stream by
            // itself would have closed it by then.
            let read = eventually { capture.bytes.count == 8820 * 4 }
            usleep(200_000)
            player.queue(fakeSong(3, base: 8820, frames: 4410))
            return read
        }
        #expect(read)
        #expect(harness.waitFor { $0.contains(.finished(token: 3)) })
        #expect(
            harness.received == [
                .songStarted(token: 1), .songStarted(token: 2), .songStarted(token: 3), .finished(token: 3),
            ])
        #expect(capture.opens.count == 1)
        #expect(capture.closes.load(ordering: .relaxed) == 1)
        let gapless = isRamp(capture.samples16(), from: 0, count: 13_230)
        #expect(gapless)
    }

    @Test func replacingAQueuedSongThatIsAlreadyDecodingCutsItOff() throws {
        // Song 1 lasts 3 s of output paced by a clock that stands until song 2 is decoding and replaced (the system
        // clock let a loaded machine play song 2 before the replacement came).
        let clock = ManualClock()
        let capture = CaptureOutput(sync: true, clock: clock)
        let decoded = DecodedBases()
        let harness = try PlayerHarness(
            outputs: [(nullConfiguration(), capture, nil)], clock: clock, decoders: decoded.factory)
        harness.withPlayer { player in
            player.play(fakeSong(1, base: 0, frames: 132_300), atSeconds: 0)
            player.queue(fakeSong(2, base: 20_000, frames: 4410))
        }
        #expect(harness.waitFor { $0.contains(.songStarted(token: 1)) })
        #expect(eventually { decoded.contains(20_000) })
        harness.withPlayer { $0.queue(fakeSong(3, base: 132_300, frames: 4410)) }
        #expect(harness.waitFor(timeout: 30, advancing: true) { $0.contains(.finished(token: 3)) })
        #expect(harness.received == [.songStarted(token: 1), .songStarted(token: 3), .finished(token: 3)])
        #expect(isRamp(capture.samples16(), from: 0, count: 136_710))
    }

    @Test func borderPauseStopsInFrontOfTheQueuedSong() throws {
        let capture = CaptureOutput(sync: false)
        let harness = try PlayerHarness(outputs: [(nullConfiguration(), capture, nil)])
        harness.withPlayer { player in
            player.borderPause = true
            player.play(fakeSong(1, base: 0, frames: 3000), atSeconds: 0)
            player.queue(fakeSong(2, base: 3000, frames: 3000))
        }
        #expect(harness.waitFor { $0.contains(.pausedAtBorder(token: 2)) })
        #expect(harness.received == [.songStarted(token: 1), .songStarted(token: 2), .pausedAtBorder(token: 2)])
        let paused = harness.withPlayer { $0.snapshot }
        #expect(paused.state == .pause)
        #expect(paused.token == 2)
        #expect(paused.elapsedSeconds == 0)
        #expect(capture.samples16().count == 3000)
        harness.withPlayer { player in
            player.borderPause = false
            player.setPaused(false)
        }
        #expect(harness.waitFor { $0.contains(.finished(token: 2)) })
        #expect(isRamp(capture.samples16(), from: 0, count: 6000))
    }

    @Test func decoderErrorReportsTheSongAndGoesOnWithTheQueuedOne() throws {
        let capture = CaptureOutput(sync: false)
        let harness = try PlayerHarness(outputs: [(nullConfiguration(), capture, nil)])
        harness.withPlayer { player in
            player.play(PlayableSong(token: 1, uri: "dir/broken.mp3", path: "broken"), atSeconds: 0)
            player.queue(fakeSong(2, base: 0, frames: 1000))
        }
        #expect(harness.waitFor { $0.contains(.finished(token: 2)) })
        #expect(
            harness.received == [
                .songFailed(token: 1, message: "Failed to decode dir/broken.mp3"), .songStarted(token: 2),
                .finished(token: 2),
            ])
        #expect(capture.samples16().count == 1000)
    }

    @Test func decoderErrorWithNothingQueuedStops() throws {
        let capture = CaptureOutput(sync: false)
        let harness = try PlayerHarness(outputs: [(nullConfiguration(), capture, nil)])
        harness.withPlayer { $0.play(PlayableSong(token: 7, uri: "x.mp3", path: "broken"), atSeconds: 0) }
        #expect(harness.waitFor { !$0.isEmpty })
        #expect(harness.received == [.songFailed(token: 7, message: "Failed to decode x.mp3")])
        #expect(harness.withPlayer { $0.snapshot.state } == .stop)
    }
}
