// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Model
import Playback
import TestSupport
import Testing

@Suite struct PipeOutputTests {
    @Test func feedsTheCommandsStandardInput() throws {
        let path = NSTemporaryDirectory() + "fermata-pipe-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let output = try PipeOutputPlugin().makeOutput(
            OutputConfiguration(name: "p", type: "pipe", parameters: ["command": "cat > '\(path)'"]))
        #expect(output.plugin == "pipe")
        let format = AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2)
        #expect(try output.open(format) == format)
        let pcm = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        var offset = 0
        while offset < pcm.count {
            offset += try pcm.withUnsafeBytes { try output.play(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
        }
        output.close()
        #expect(FileManager.default.contents(atPath: path) == Data(pcm))
    }

    /// The writes keep to the clock, at most ``OutputTimer/pipeLead`` (here 100 ms) and the chunk written then
    /// ahead of it, and nothing is dropped: 1.49 s of audio take at least 1.36 s of the clock, and all of it reaches
    /// the command.
    @Test func writesArePacedAndKeepEverything() throws {
        let path = NSTemporaryDirectory() + "fermata-pipe-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let clock = ManualClock()
        let output = UncheckedBox(PipeOutput(command: "cat > '\(path)'", clock: clock))
        let format = AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2)
        _ = try output.value.open(format)
        let chunk = (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        let started = clock.now()
        let written = clock.drive(stepSeconds: 0.01) {
            (0..<64).reduce(0) { total, _ in
                total + ((try? chunk.withUnsafeBytes { try output.value.play($0) }) ?? 0)
            }
        }
        #expect(written == 64 * 4096)
        let audio = UInt64(64 * 4096) * 1_000_000_000 / UInt64(44100 * 4)
        let chunkNanoseconds = UInt64(4096) * 1_000_000_000 / UInt64(44100 * 4)
        #expect(clock.now() - started >= audio - 100_000_000 - chunkNanoseconds)
        #expect(clock.now() - started <= audio)
        // What was written and not yet heard, by the clock: no more than the lead and a chunk.
        #expect(output.value.delayFrames <= 4410 + 1024)
        output.value.close()
        #expect(FileManager.default.contents(atPath: path) == Data((0..<64).flatMap { _ in chunk }))
    }

    /// A pause keeps the command running (`mpd` closes the pipe): each call waits 100 ms of the clock, and the
    /// writes after it go on into the same pipe.
    @Test func aPauseKeepsTheCommand() throws {
        let path = NSTemporaryDirectory() + "fermata-pipe-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let clock = ManualClock()
        let output = UncheckedBox(PipeOutput(command: "cat > '\(path)'", clock: clock))
        _ = try output.value.open(AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        let chunk = [UInt8](repeating: 5, count: 4096)
        #expect(try chunk.withUnsafeBytes { try output.value.play($0) } == 4096)
        let pausedAt = clock.now()
        for _ in 0..<3 { #expect(clock.drive(stepSeconds: 0.1) { output.value.pause() } == true) }
        #expect(clock.now() - pausedAt == 300_000_000)
        #expect(try chunk.withUnsafeBytes { try output.value.play($0) } == 4096)
        output.value.close()
        #expect(FileManager.default.contents(atPath: path) == Data(chunk + chunk))
    }

    @Test func needsACommand() {
        #expect(throws: OutputError.self) {
            try PipeOutputPlugin().makeOutput(OutputConfiguration(name: "p", type: "pipe"))
        }
    }
}
