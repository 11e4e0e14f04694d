// SPDX-License-Identifier: GPL-3.0-or-later

import Formats
import Foundation
import Model
import Playback
import Testing

/// Songs that end without a sample reaching an output, seeks while paused and decoder failures, as in `mpd`.
@Suite struct PlayerEndingTests {
    @Test func aSongWithoutFramesEndsPlaybackAtOnce() throws {
        let capture = CaptureOutput(sync: true)
        let harness = try PlayerHarness(outputs: [(nullConfiguration(), capture, nil)])
        harness.withPlayer { $0.play(fakeSong(1, base: 0, frames: 0), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.finished(token: 1)) })
        #expect(harness.withPlayer { $0.snapshot } == PlayerSnapshot())
        #expect(harness.received == [.finished(token: 1)])
        #expect(capture.bytes.isEmpty)
    }

    @Test func aSongWithoutFramesHandsOverToTheQueuedSong() throws {
        let capture = CaptureOutput(sync: true)
        let harness = try PlayerHarness(outputs: [(nullConfiguration(), capture, nil)])
        harness.nextSong = { token in token == 1 ? fakeSong(2, base: 500, frames: 4410) : nil }
        harness.withPlayer { $0.play(fakeSong(1, base: 0, frames: 0), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.finished(token: 2)) })
        #expect(harness.received == [.songStarted(token: 2), .finished(token: 2)])
        let samples = capture.samples16()
        #expect(isRamp(samples, from: 500, count: 4410))
    }

    @Test func aSeekToTheEndEndsTheSong() throws {
        let capture = CaptureOutput(sync: true)
        let harness = try PlayerHarness(outputs: [(nullConfiguration(), capture, nil)])
        harness.withPlayer { $0.play(fakeSong(1, base: 0, frames: 441_000), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.songStarted(token: 1)) })
        #expect(harness.withPlayer { $0.seek(token: 1, toSeconds: 10) })
        #expect(harness.waitFor { $0.contains(.finished(token: 1)) })
        #expect(harness.withPlayer { $0.snapshot.state } == .stop)
    }

    @Test func aSeekWhilePausedKeepsTheAudioFormatAndBitRate() throws {
        let capture = CaptureOutput(sync: true)
        let harness = try PlayerHarness(outputs: [(nullConfiguration(), capture, nil)])
        harness.withPlayer { $0.play(fakeSong(1, base: 0, frames: 441_000, format: "48000:24:2"), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.songStarted(token: 1)) })
        harness.withPlayer { $0.setPaused(true) }
        harness.waitForOutputs()
        let before = harness.withPlayer { $0.snapshot }
        #expect(before.audioFormat == AudioFormat(sampleRate: 48000, sampleFormat: .s24, channels: 2))
        #expect(harness.withPlayer { $0.seek(token: 1, toSeconds: 3) })
        let after = harness.withPlayer { $0.snapshot }
        #expect(after.state == .pause)
        #expect(after.elapsedSeconds == 3)
        #expect(after.audioFormat == before.audioFormat)
        #expect(after.bitRate == before.bitRate)
        // Playing on, the output's own position takes over again (the fake's bit rate tells where it decodes).
        harness.withPlayer { $0.setPaused(false) }
        #expect(harness.waitFor { _ in harness.withPlayer { $0.snapshot.bitRate } >= 130 })
        harness.withPlayer { $0.stop() }
    }

    @Test func aPluginsErrorNamesThePathAndWhatFailed() throws {
        let decoders: @Sendable (String) throws(FormatError) -> any Decoder = { (path) throws(FormatError) in
            if path.hasSuffix("declined.mp3") { throw .notRecognized(path: path) }
            throw .decoder("avformat_open_input() failed: End of file")
        }
        let harness = try PlayerHarness(
            outputs: [(nullConfiguration(), CaptureOutput(sync: true), nil)], decoders: decoders)
        func song(_ token: UInt64, _ name: String) -> PlayableSong {
            PlayableSong(token: token, uri: "dir/\(name)", path: "/music/dir/\(name)")
        }
        harness.withPlayer { $0.play(song(1, "garbage.mp3"), atSeconds: 0) }
        #expect(harness.waitFor { $0.count == 1 })
        harness.withPlayer { $0.play(song(2, "declined.mp3"), atSeconds: 0) }
        #expect(harness.waitFor { $0.count == 2 })
        #expect(
            harness.received == [
                .songFailed(
                    token: 1,
                    message: "Failed to decode /music/dir/garbage.mp3; avformat_open_input() failed: End of file"),
                .songFailed(token: 2, message: "Failed to decode dir/declined.mp3"),
            ])
    }

    @Test func aFileThatCannotBeOpenedFailsAsMPDsInputDoes() throws {
        let missing = "/nonexistent-\(getpid())/song.flac"
        let error: FormatError
        do {
            _ = try FormatRegistry.standard.openDecoder(path: missing)
            Issue.record("opened a missing file")
            return
        } catch let thrown {
            error = thrown
        }
        #expect(error.mpdMessage == "Failed to open '\(missing)': No such file or directory")
    }
}
