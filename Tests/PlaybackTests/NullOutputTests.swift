// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Model
import Playback
import Posix
import Synchronization
import TestSupport
import Testing

@Suite struct NullOutputTests {
    private let format = AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2)

    /// 4096 bytes: 1024 frames, 23.2 ms.
    private static let chunk = [UInt8](repeating: 0, count: 4096)
    private static let chunkNanoseconds: UInt64 = 4096 * 1_000_000_000 / (44100 * 4)

    @Test func syncPacesByTheClock() throws {
        let clock = ManualClock()
        let output = NullOutput(clock: clock)
        _ = try output.open(self.format)
        let written = Atomic<Int>(0)
        let writer = NamedThread("null writer") {
            for _ in 0..<4 {
                written.wrappingAdd((try? Self.chunk.withUnsafeBytes { try output.play($0) }) ?? 0, ordering: .relaxed)
            }
        }
        // The first write goes at once; the second waits until the first is heard.
        #expect(clock.waitForSleepers())
        #expect(written.load(ordering: .relaxed) == 4096)
        #expect(output.delayFrames > 1000 && output.delayFrames <= 1024)
        for heard in 1...3 {
            clock.advance(nanoseconds: Self.chunkNanoseconds)
            if heard < 3 { #expect(clock.waitForSleepers()) }
            #expect(eventually { written.load(ordering: .relaxed) == 4096 * (heard + 1) })
        }
        writer.join()
        #expect(written.load(ordering: .relaxed) == 4 * 4096)
        #expect(output.delayFrames > 1000 && output.delayFrames <= 1024)
        clock.advance(nanoseconds: Self.chunkNanoseconds)
        #expect(output.delayFrames == 0)
    }

    @Test func interruptedDrainKeepsWhatIsNotHeardYet() throws {
        let clock = ManualClock()
        let output = NullOutput(clock: clock)
        _ = try output.open(self.format)
        let second = [UInt8](repeating: 0, count: 44100 * 4)
        #expect(try second.withUnsafeBytes { try output.play($0) } == second.count)
        let drained = Drains(output)
        let drainer = drained.start()
        #expect(clock.waitForSleepers())
        clock.advance(seconds: 0.25)
        #expect(clock.waitForSleepers())
        output.interrupt()
        drainer.join()
        #expect(drained.results == [false])
        // Still sounding: the caller decides whether to wait for the rest or drop it.
        #expect(output.delayFrames == 44100 * 3 / 4)
        let again = drained.start()
        #expect(clock.waitForSleepers())
        clock.advance(seconds: 0.5)
        #expect(clock.waitForSleepers())
        #expect(drained.results == [false])
        #expect(output.delayFrames == 44100 / 4)
        clock.advance(seconds: 0.25)
        again.join()
        #expect(drained.results == [false, true])
        #expect(output.delayFrames == 0)
    }

    /// A pause mode (mpd's null output has none): a pause holds what is not heard yet.
    @Test func hasAPauseModeThatHoldsTheClock() {
        let output = NullOutput(clock: ManualClock())
        #expect(output.hasPauseMode)
        output.interrupt()
        #expect(output.pause())
    }

    /// Holding a pause stops the clock: what was written and not heard yet is heard after the pause, so a song whose whole
    /// audio went in one write does not count as heard because it was paused (it moved on to the next song).
    @Test func pauseHoldsWhatIsNotHeardYet() throws {
        let clock = ManualClock()
        let output = NullOutput(clock: clock)
        _ = try output.open(self.format)
        let second = [UInt8](repeating: 0, count: 44100 * 4)
        #expect(try second.withUnsafeBytes { try output.play($0) } == second.count)
        clock.advance(seconds: 0.25)
        // Interrupted first, so the pause does not sleep its tenth of a second on the manual clock.
        output.interrupt()
        #expect(output.holdPaused())
        clock.advance(seconds: 5)
        output.interrupt()
        #expect(output.holdPaused())
        #expect(output.delayFrames == 44100 * 3 / 4)
        let written = Atomic<Int>(0)
        let writer = NamedThread("null writer") {
            written.store((try? Self.chunk.withUnsafeBytes { try output.play($0) }) ?? 0, ordering: .relaxed)
        }
        #expect(clock.waitForSleepers())
        clock.advance(seconds: 0.7)
        #expect(clock.waitForSleepers())
        #expect(written.load(ordering: .relaxed) == 0)
        clock.advance(seconds: 0.05)
        writer.join()
        #expect(written.load(ordering: .relaxed) == 4096)
        output.cancel()
        #expect(output.delayFrames == 0)
    }

    @Test func withoutSyncItTakesEverythingAtOnce() throws {
        let clock = ManualClock()
        let output = NullOutput(sync: false, clock: clock)
        _ = try output.open(self.format)
        // Ten seconds without the clock moving.
        var left = 10 * 44100 * 4
        while left > 0 { left -= try Self.chunk.withUnsafeBytes { try output.play($0) } }
        #expect(output.delayFrames == 0)
        #expect(try output.drain())
        let configured = try NullOutputPlugin().makeOutput(
            OutputConfiguration(name: "n", type: "null", parameters: ["sync": "no"]))
        #expect((configured as? NullOutput)?.sync == false)
    }

    @Test func badSyncValueIsRejectedWithMPDsMessage() {
        #expect(throws: OutputError.self) {
            try NullOutputPlugin().makeOutput(
                OutputConfiguration(name: "n", type: "null", parameters: ["sync": "maybe"]))
        }
        #expect(NullOutputPlugin().name == "null")
    }
}

/// `drain()` calls of a null output on threads of their own, and what they returned.
private final class Drains: Sendable {
    private let output: NullOutput
    private let returned = Mutex<[Bool]>([])

    init(_ output: NullOutput) { self.output = output }

    var results: [Bool] { self.returned.withLock { $0 } }

    /// Starts a drain; join the thread to wait for it.
    func start() -> NamedThread {
        NamedThread("null drain") {
            let result = (try? self.output.drain()) ?? false
            self.returned.withLock { $0.append(result) }
        }
    }
}
