// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Model
import Synchronization
import TestSupport
import Testing

@testable import Playback

@Suite struct PlayerCrossFadeTests {
    private static let cd = AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2)

    private func side(
        _ seconds: Double?, format: AudioFormat = cd, gain: Double = 0, start: String? = nil, end: String? = nil
    )
        -> PlayerCrossFade.Song
    {
        PlayerCrossFade.Song(seconds: seconds, format: format, replayGainDB: gain, mixRampStart: start, mixRampEnd: end)
    }

    @Test func decidesLikeMPD() {
        let fade = PlayerCrossFade(seconds: 3)
        let chunk = 1024.0 / 44100
        let chunks = { (previous: PlayerCrossFade.Song, next: PlayerCrossFade.Song) in
            fade.chunks(from: previous, to: next, chunkSeconds: chunk, maxChunks: 1000).chunks
        }
        #expect(chunks(self.side(200), self.side(180)) == Int(lround(3 / chunk)))
        #expect(chunks(self.side(20), self.side(20)) == 129)
        #expect(chunks(self.side(19.99), self.side(180)) == 0)
        #expect(chunks(self.side(200), self.side(19.99)) == 0)
        #expect(chunks(self.side(nil), self.side(180)) == 0)
        #expect(
            chunks(
                self.side(200), self.side(180, format: AudioFormat(sampleRate: 48000, sampleFormat: .s24, channels: 2)))
                == 0)
        #expect(
            PlayerCrossFade(seconds: 0).chunks(
                from: self.side(200), to: self.side(200), chunkSeconds: chunk, maxChunks: 1000
            ).chunks == 0)
        // The fade must be shorter than each song.
        #expect(
            PlayerCrossFade(seconds: 25).chunks(
                from: self.side(25), to: self.side(200), chunkSeconds: chunk, maxChunks: 5000
            ).chunks == 0)
        let capped = PlayerCrossFade(seconds: 10).chunks(
            from: self.side(200), to: self.side(200), chunkSeconds: chunk, maxChunks: 100)
        #expect(capped.chunks == 100 && capped.capped)
    }

    @Test func mixRampOverlapComesFromTheTags() {
        let chunk = 0.1
        let ramp = PlayerCrossFade(seconds: 1, mixRampDB: -20, mixRampDelay: 0.5)
        let previous = self.side(200, end: "-30.00 1.00;-20.00 3.00;-10.00 5.00")
        let next = self.side(200, start: "-30.00 0.50;-10.00 2.50")
        // End crosses -20 dB at 3.0 s, start at 1.5 s: overlap 4.5 s minus the 0.5 s delay.
        #expect(ramp.chunks(from: previous, to: next, chunkSeconds: chunk, maxChunks: 1000).chunks == 40)
        #expect(ramp.adds)
        // ReplayGain shifts the level looked for: +10 dB of gain means -30 dB in the tags (1.0 s + 1.5 s - 0.5 s).
        #expect(
            ramp.chunks(
                from: self.side(200, gain: 10, end: previous.mixRampEnd), to: next, chunkSeconds: chunk, maxChunks: 1000
            ).chunks == 20)
        // Without tags the length is the cross-fade's (and mpd still adds rather than fades).
        #expect(ramp.chunks(from: self.side(200), to: next, chunkSeconds: chunk, maxChunks: 1000).chunks == 10)
        // A delay longer than the overlap: no overlap at all.
        #expect(
            PlayerCrossFade(seconds: 1, mixRampDB: -20, mixRampDelay: 5).chunks(
                from: previous, to: next, chunkSeconds: chunk, maxChunks: 1000
            ).chunks == 0)
        // NaN disables MixRamp's fade but not its maths (as in mpd: no overlap).
        #expect(
            PlayerCrossFade(seconds: 1, mixRampDB: -20, mixRampDelay: .nan).chunks(
                from: previous, to: next, chunkSeconds: chunk, maxChunks: 1000
            ).chunks == 0)
        #expect(!PlayerCrossFade(seconds: 1, mixRampDB: -20, mixRampDelay: .nan).adds)
    }

    @Test(arguments: [
        ("-30.00 1.00;-20.00 3.00", -20.0, 3.0),
        ("-30.00 1.00;-20.00 3.00", -25.0, 2.0),
        ("-30.00 1.00;-20.00 3.00", -40.0, 1.0),
        ("-30.00 1.00;-20.00 3.00", -10.0, -1.0),
        ("-30.00 1.00;-20.00 3.00;", -25.0, 2.0),
        ("-30.00,1.00", -25.0, -1.0),
        ("", -25.0, -1.0),
    ])
    func interpolatesTheRamp(_ ramp: String, _ decibels: Double, _ seconds: Double) {
        #expect(abs(PlayerCrossFade.interpolate(ramp, requiredDB: decibels) - seconds) < 1e-5)
    }

    @Test func planPacksIntoOneWord() {
        let plan = PlayerFadePlan(border: 123_456_789, chunks: 4321, adds: true)
        #expect(PlayerFadePlan(packed: plan.packed) == plan)
    }

    // MARK: - Playing

    /// 8 kHz mono 16-bit: a chunk holds 4024 frames (two of `mpd`'s, 0.503 s), so a 2 s fade is 4 chunks.
    private static let rate = 8000
    private static let chunkFrames = 4024

    private func song(_ token: UInt64, base: Int64, seconds: Int, channels: Int = 1) -> PlayableSong {
        fakeSong(token, base: base, frames: seconds * Self.rate, format: "\(Self.rate):16:\(channels)")
    }

    private static func ramp(_ base: Int, _ frame: Int) -> Int { Int(Int16(truncatingIfNeeded: base + frame)) }

    @Test(arguments: [false, true])
    func theSongsAreMixedOverTheFadesLength(mixRamp: Bool) throws {
        let capture = CaptureOutput(sync: false)
        // The output waits until the decoder is into song 2, so the fade is planned before it gets there.
        capture.held.store(true, ordering: .relaxed)
        let decoded = DecodedBases()
        let harness = try PlayerHarness(outputs: [(nullConfiguration(), capture, nil)], decoders: decoded.factory)
        harness.withPlayer { player in
            player.crossfadeSeconds = 2
            if mixRamp { player.mixRampDelay = 1 }
            player.play(self.song(1, base: 0, seconds: 21), atSeconds: 0)
            player.queue(self.song(2, base: 20_000, seconds: 21))
        }
        #expect(eventually { decoded.contains(20_000) })
        capture.held.store(false, ordering: .relaxed)
        #expect(harness.waitFor(timeout: 20) { $0.contains(.finished(token: 2)) })
        #expect(harness.received == [.songStarted(token: 1), .songStarted(token: 2), .finished(token: 2)])

        let frames = 21 * Self.rate  // 41 chunks and 3016 frames
        let fadeChunks = 4
        let firstFaded = (frames / Self.chunkFrames + 1 - fadeChunks) * Self.chunkFrames
        var expected: [ClosedRange<Int>] = (0..<firstFaded).map { Self.ramp(0, $0)...Self.ramp(0, $0) }
        for pair in 0..<fadeChunks {
            let sine = sin(Double.pi / 2 * Double(pair) / Double(fadeChunks))
            let volume = Double(lround(sine * sine * 1024))
            let (newWeight, oldWeight) = mixRamp ? (1.0, 1.0) : (volume / 1024, (1024 - volume) / 1024)
            for index in 0..<Self.chunkFrames {
                let new = Self.ramp(20_000, pair * Self.chunkFrames + index)
                let oldFrame = firstFaded + pair * Self.chunkFrames + index
                guard oldFrame < frames else {
                    expected.append(new...new)  // the old song's last chunk is short: the rest is the new song alone
                    continue
                }
                let mixed = Double(Self.ramp(0, oldFrame)) * oldWeight + Double(new) * newWeight
                let value = min(32767, max(-32768, Int(mixed.rounded())))
                expected.append(max(-32768, value - 1)...min(32767, value + 1))
            }
        }
        for frame in (fadeChunks * Self.chunkFrames)..<frames {
            expected.append(Self.ramp(20_000, frame)...Self.ramp(20_000, frame))
        }

        let samples = capture.samples16(channels: 1)
        #expect(samples.count == expected.count)
        let wrong = zip(samples, expected).enumerated().filter { !$0.element.1.contains(Int($0.element.0)) }
        let firstWrong = wrong.prefix(3).map { "\($0.offset): \($0.element.0) not in \($0.element.1)" }
        #expect(wrong.count == 0, "first mismatches: \(firstWrong)")
    }

    @Test func theNewSongIsReportedWhenTheFadeEnds() throws {
        let clock = ManualClock()
        let capture = CaptureOutput(sync: true, clock: clock)
        // The output stands still half a chunk before the border, then half a chunk after it (mono 16-bit).
        capture.limit.store(15 * Self.chunkFrames, ordering: .relaxed)
        defer { capture.limit.store(Int.max, ordering: .relaxed) }
        let decoded = DecodedBases()
        let harness = try PlayerHarness(
            outputs: [(nullConfiguration(), capture, nil)], clock: clock, decoders: decoded.factory)
        harness.withPlayer { player in
            player.crossfadeSeconds = 2
            // 4 s before the end: 8 chunks of song 1 are left, the last 4 of them fade.
            player.play(self.song(1, base: 0, seconds: 21), atSeconds: 17)
            player.queue(self.song(2, base: 20_000, seconds: 21))
        }
        // The clock stands until the decoder is into song 2: the fade is planned before the output gets there.
        #expect(eventually { decoded.contains(20_000) })
        let stands = { (bytes: Int) in
            // A round trip through the loop delivers whatever the output posted before it stopped.
            capture.bytes.count == bytes && capture.stalled.load(ordering: .acquiring) && harness.sync { _ in true }
        }
        // Song 1 alone (4 chunks), then the 4 mixed chunks: the border is at 8 chunks, not at 4.
        #expect(harness.waitFor(timeout: 20, advancing: true) { _ in stands(15 * Self.chunkFrames) })
        #expect(!harness.received.contains(.songStarted(token: 2)))
        #expect(harness.withPlayer { $0.snapshot.token } == 1)
        capture.limit.store(17 * Self.chunkFrames, ordering: .relaxed)
        #expect(harness.waitFor(timeout: 20, advancing: true) { _ in stands(17 * Self.chunkFrames) })
        #expect(harness.received.contains(.songStarted(token: 2)))
        let snapshot = harness.withPlayer { $0.snapshot }
        capture.limit.store(Int.max, ordering: .relaxed)
        harness.withPlayer { $0.stop() }
        #expect(snapshot.token == 2)
        // Song 2 is heard from where the fade left it, 4 chunks in, plus the half chunk written (less what the
        // device still holds: at most one chunk of the paced null output).
        #expect(snapshot.elapsedSeconds > 3.5 * 0.512 - 0.05 && snapshot.elapsedSeconds <= 4.5 * 0.512, "\(snapshot)")
    }

    @Test func shortSongsStayGapless() throws {
        let capture = CaptureOutput(sync: false)
        let harness = try PlayerHarness(outputs: [(nullConfiguration(), capture, nil)])
        harness.withPlayer { player in
            player.crossfadeSeconds = 2
            player.play(self.song(1, base: 0, seconds: 19), atSeconds: 0)
            player.queue(self.song(2, base: Int64(19 * Self.rate), seconds: 21))
        }
        #expect(harness.waitFor(timeout: 20) { $0.contains(.finished(token: 2)) })
        #expect(isRamp(capture.samples16(channels: 1), from: 0, count: 40 * Self.rate))
    }

    @Test func noFadeAcrossAFormatChange() throws {
        let capture = CaptureOutput(sync: false)
        let harness = try PlayerHarness(outputs: [(nullConfiguration(), capture, nil)])
        harness.withPlayer { player in
            player.crossfadeSeconds = 2
            player.play(self.song(1, base: 0, seconds: 21), atSeconds: 0)
            player.queue(self.song(2, base: 0, seconds: 21, channels: 2))
        }
        #expect(harness.waitFor(timeout: 20) { $0.contains(.finished(token: 2)) })
        let monoFrames = 21 * Self.rate
        let bytes = capture.bytes
        #expect(bytes.count == monoFrames * 2 + monoFrames * 4)
        let mono = stride(from: 0, to: monoFrames * 2, by: 2).map {
            Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8)
        }
        #expect(isRamp(mono, from: 0, count: monoFrames))
        #expect(capture.opens.map(\.channels) == [1, 2])
    }
}
