// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Glibc
import Model
import Playback
import Posix
import Synchronization
import TestSupport
import Testing

@testable import ALSA

/// ALSA outputs through alsa-lib's `file` and `null` PCM plugins (no sound hardware needed). Serialized: they
/// share alsa-lib's process-wide error handler and redirect standard error.
@Suite(.serialized) struct ALSAOutputTests {
    let cd = 44100

    /// A device that records what is played into `path` as raw PCM, defined in a local configuration.
    func recorder(_ path: String, extra: String = "") throws -> ALSALocalConfiguration {
        try ALSALocalConfiguration(
            text: """
                pcm.record {
                    type file
                    slave.pcm { type null }
                    file "\(path)"
                    format "raw"
                }
                \(extra)
                """)
    }

    func output(
        _ device: String, _ configuration: ALSALocalConfiguration?, clock: any PlaybackClock = SystemClock()
    ) throws -> ALSAOutput {
        try ALSAOutput(
            device: device, bufferTime: 500_000, periodTime: 0, openMode: 0, dop: false,
            localConfiguration: configuration, clock: clock)
    }

    @Test func samplesWrittenThroughTheFilePluginComeBackIdentical() throws {
        _ = ALSATestLog.start()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let capture = scratch.file("capture.raw")
        // The predefined `file:` PCM of the system configuration: the path a user's device name takes.
        let output = try ALSAOutput(device: "file:FILE=\(capture),FORMAT=raw")
        let requested = AudioFormat(sampleRate: self.cd, sampleFormat: .s16, channels: 2)
        #expect(try output.open(requested) == requested)

        let samples = rampSamples(frames: 30_000)
        let bytes = samples.withUnsafeBytes { Array($0) }
        try playAll(output, bytes)
        #expect(output.delayFrames >= 0)
        #expect(try output.drain())
        output.close()

        let written = try Data(contentsOf: URL(fileURLWithPath: capture))
        #expect(written.count == bytes.count)
        #expect(Array(written) == bytes)
    }

    @Test func drainHandsEverythingToTheDeviceBeforeClose() throws {
        _ = ALSATestLog.start()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let capture = scratch.file("drain.raw")
        let output = try self.output("record", self.recorder(capture))
        _ = try output.open(AudioFormat(sampleRate: 48000, sampleFormat: .s16, channels: 2))
        let bytes = rampSamples(frames: 1000).withUnsafeBytes { Array($0) }
        try playAll(output, bytes)
        // The file plugin holds back less than a buffer's worth until drained.
        let before = (try? Data(contentsOf: URL(fileURLWithPath: capture)).count) ?? 0
        #expect(before < bytes.count)
        #expect(try output.drain())
        #expect(try Data(contentsOf: URL(fileURLWithPath: capture)) == Data(bytes))
        #expect(output.delayFrames == 0)

        // After a drain the device is prepared again for the next song.
        try playAll(output, bytes)
        #expect(try output.drain())
        output.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: capture)) == Data(bytes + bytes))
        #expect(output.delayFrames == 0)
    }

    @Test func aRefusedSampleFormatFallsBackInMPDsOrder() throws {
        _ = ALSATestLog.start()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        // `lfloat` over a float device takes only integer samples: float is refused, 24-in-32 is mpd's next choice.
        let configuration = try self.recorder(
            scratch.file("float.raw"),
            extra: """
                pcm.integers {
                    type lfloat
                    slave { pcm "record" format FLOAT_LE }
                }
                """)
        let output = try self.output("integers", configuration)
        let opened = try output.open(AudioFormat(sampleRate: 96000, sampleFormat: .float, channels: 2))
        #expect(opened == AudioFormat(sampleRate: 96000, sampleFormat: .s24, channels: 2))
        output.close()
    }

    @Test func aDeviceTakingNoFormatOfOursIsAnOpenError() throws {
        _ = ALSATestLog.start()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        // `mulaw` over a 16-bit device takes only µ-law samples, which Fermata never produces.
        let configuration = try self.recorder(
            scratch.file("mulaw.raw"),
            extra: """
                pcm.mulawonly {
                    type mulaw
                    slave { pcm "record" format S16_LE }
                }
                """)
        let output = try self.output("mulawonly", configuration)
        #expect {
            _ = try output.open(AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        } throws: { error in
            (error as? OutputError)?.message
                == "Error opening ALSA device \"mulawonly\"; Failed to configure format 16: Invalid argument"
        }
    }

    @Test func aMissingDeviceGivesMPDsMessageAndNothingOnStandardError() throws {
        let mark = ALSATestLog.start()
        let output = try ALSAOutput(device: "fermata_no_such_device")
        var thrown: OutputError?
        let stderrText = capturingStandardError {
            do throws(OutputError) {
                _ = try output.open(AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
            } catch {
                thrown = error
            }
        }
        #expect(thrown?.message == "Failed to open ALSA device \"fermata_no_such_device\": No such file or directory")
        #expect(!stderrText.contains("ALSA lib"))
        #expect(!stderrText.contains("fermata_no_such"))
        // alsa-lib's own complaint reached our log instead.
        #expect(ALSATestLog.lines(since: mark).contains { $0.contains("Unknown PCM fermata_no_such_device") })
    }

    @Test func pauseWaitsUntilInterruptedOrItsSecondPassesAndPlaybackThenGoesOn() throws {
        _ = ALSATestLog.start()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let capture = scratch.file("pause.raw")
        // The pause waits on this clock, which stands still until the test moves it.
        let clock = ManualClock()
        let output = try self.output("record", self.recorder(capture), clock: clock)
        _ = try output.open(AudioFormat(sampleRate: self.cd, sampleFormat: .s16, channels: 2))
        let bytes = rampSamples(frames: 2000).withUnsafeBytes { Array($0) }
        try playAll(output, bytes)

        // The clock never moves: only the interrupt can end this pause.
        let started = clock.now()
        let interrupted = Self.pauseOnAThread(output)
        #expect(clock.waitForSleepers(1), "the pause does not wait on its clock")
        #expect(!interrupted.isDone)
        output.interrupt()
        #expect(interrupted.finish() == true, "the interrupt did not end the pause")
        #expect(clock.now() == started)

        // Without an interrupt the pause ends when a second of its clock has passed, not before.
        let timedOut = Self.pauseOnAThread(output)
        #expect(clock.waitForSleepers(1))
        clock.advance(seconds: 0.9)
        #expect(clock.waitForSleepers(1), "the pause ended before its second")
        #expect(!timedOut.isDone)
        clock.advance(seconds: 0.1)
        #expect(timedOut.finish() == true, "the pause did not end at its second")

        try playAll(output, bytes)
        #expect(try output.drain())
        output.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: capture)) == Data(bytes + bytes))
    }

    /// A `pause()` running on a thread of its own.
    final class PauseCall: Sendable {
        private let result = Mutex<Bool?>(nil)
        private let done = DispatchSemaphore(value: 0)

        init(_ output: ALSAOutput) {
            NamedThread.detach("pause") { [self] in
                let paused = output.pause()
                self.result.withLock { $0 = paused }
                self.done.signal()
            }
        }

        /// Whether the call has returned.
        var isDone: Bool { self.result.withLock { $0 != nil } }

        /// What the call returned, once it has; `nil` if it has not after 10 s of real time (a safety net against
        /// a hang: no time is measured).
        func finish() -> Bool? {
            guard self.done.wait(timeout: .now() + 10) == .success else { return nil }
            return self.result.withLock { $0 }
        }
    }

    static func pauseOnAThread(_ output: ALSAOutput) -> PauseCall { PauseCall(output) }

    @Test func anInterruptBeforePlayReturnsWithoutWriting() throws {
        _ = ALSATestLog.start()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let capture = scratch.file("interrupt.raw")
        let output = try self.output("record", self.recorder(capture))
        _ = try output.open(AudioFormat(sampleRate: self.cd, sampleFormat: .s16, channels: 2))
        let bytes = rampSamples(frames: 500).withUnsafeBytes { Array($0) }
        output.interrupt()
        let consumed = try bytes.withUnsafeBytes { try output.play($0) }
        #expect(consumed == 0)
        // The interrupt is used up: the next call writes.
        try playAll(output, bytes)
        #expect(try output.drain())
        output.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: capture)) == Data(bytes))
    }

    @Test func cancelDropsAndTheNextWriteStartsAfresh() throws {
        _ = ALSATestLog.start()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let output = try self.output("record", self.recorder(scratch.file("cancel.raw")))
        _ = try output.open(AudioFormat(sampleRate: self.cd, sampleFormat: .s16, channels: 1))
        let bytes = rampSamples(frames: 500).withUnsafeBytes { Array($0) }
        try playAll(output, bytes)
        output.interrupt()
        output.cancel()
        // cancel() also forgets the interrupt that announced it.
        let consumed = try bytes.withUnsafeBytes { try output.play($0) }
        #expect(consumed > 0)
        output.close()
        #expect(output.delayFrames == 0)
    }

    @Test(arguments: [
        (ALSAOutput.PCMState.running, true, ALSAOutput.PauseAction.pauseDevice),
        (.running, false, .cannotPause),
        (.paused, true, .nothingPlaying),
        (.prepared, false, .nothingPlaying),
        (.setup, true, .nothingPlaying),
        (.other, true, .cannotPause),
    ])
    func pauseChoosesByStateAndCapability(
        state: ALSAOutput.PCMState, canPause: Bool, expected: ALSAOutput.PauseAction
    ) {
        #expect(ALSAOutput.pauseAction(state: state, canPause: canPause) == expected)
    }

    @Test func pauseOnAClosedOutputReportsThatItCannotPause() throws {
        let output = try ALSAOutput(device: "null")
        #expect(!output.pause())
        #expect(output.delayFrames == 0)
    }

    @Test func attributesAreMPDs() throws {
        let output = try ALSAOutput(device: "null")
        #expect(output.attributes.map(\.name) == ["allowed_formats", "dop"])
        #expect(output.attributes.map(\.value) == ["", "0"])
        try output.setAttribute(name: "dop", value: "1")
        #expect(output.attributes.map(\.value) == ["", "1"])
        #expect(throws: OutputError.self) { try output.setAttribute(name: "dop", value: "2") }
    }
}
