// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Model
import Playback
import TestSupport
import TestTools
import Testing

@Suite struct PlayerMP3Tests {
    private static let made = MadeFiles("player-mp3")

    /// A 440 Hz tone at half scale, 192 kbit/s CBR (sox and lame are installed by scripts/install-deps.sh).
    private func tone(seconds: Int) throws -> String {
        try Self.made.file("tone-\(seconds).mp3") { mp3 in
            let wave = mp3 + ".wav"
            defer { removeFile(wave) }
            try runTool(
                "/usr/bin/sox",
                ["-n", "-r", "44100", "-c", "2", "-b", "16", wave, "synth", "\(seconds)", "sine", "440", "vol", "0.5"])
            try runTool("/usr/bin/lame", ["--quiet", "-b", "192", wave, mp3])
        }
    }

    @Test func playsARealMP3ThroughLibmadGaplessly() throws {
        let mp3 = try self.tone(seconds: 1)

        let capture = CaptureOutput(sync: false)
        let harness = try PlayerHarness(
            outputs: [(nullConfiguration(), capture, nil)], decoders: Player.standardDecoders)
        harness.withPlayer { player in
            player.play(PlayableSong(token: 1, uri: "tone.mp3", path: mp3, durationMilliseconds: 1000), atSeconds: 0)
            player.queue(PlayableSong(token: 2, uri: "tone2.mp3", path: mp3, durationMilliseconds: 1000))
        }
        #expect(harness.waitFor { $0.contains(.finished(token: 2)) })
        #expect(harness.received == [.songStarted(token: 1), .songStarted(token: 2), .finished(token: 2)])
        #expect(capture.opens == [AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2)])
        // mpd's mad plugin drops the encoder delay and padding: exactly two seconds of 24-bit stereo.
        let words = capture.bytes.withUnsafeBytes { Array($0.bindMemory(to: Int32.self)) }
        #expect(words.count == 2 * 44100 * 2)
        let peak = words.map { abs(Int($0)) }.max() ?? 0
        #expect(peak > 3_000_000 && peak < 5_000_000)  // about half of full scale (2^23)
    }

    @Test func statusShowsTheBitRateOfTheFrameHeard() throws {
        let mp3 = try self.tone(seconds: 2)
        let clock = ManualClock()
        let harness = try PlayerHarness(
            outputs: [(nullConfiguration(), CaptureOutput(sync: true, clock: clock), nil)], clock: clock,
            decoders: Player.standardDecoders)
        #expect(harness.withPlayer { $0.snapshot.bitRate } == 0)
        harness.withPlayer { $0.play(PlayableSong(token: 1, uri: "tone.mp3", path: mp3), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.songStarted(token: 1)) })
        harness.advance(seconds: 0.2)
        #expect(harness.withPlayer { $0.snapshot.bitRate } == 192)
    }
}
