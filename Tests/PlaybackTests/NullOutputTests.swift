// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Model
import Playback
import Testing

@Suite struct NullOutputTests {
    private let format = AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2)

    private func playSeconds(_ output: NullOutput, _ seconds: Double) throws -> Double {
        _ = try output.open(self.format)
        let chunk = [UInt8](repeating: 0, count: 4096)
        let start = Date()
        var left = Int(seconds * 44100 * 4)
        while left > 0 {
            left -= try chunk.withUnsafeBytes { try output.play($0) }
        }
        return Date().timeIntervalSince(start)
    }

    @Test func syncPacesInRealTime() throws {
        let output = NullOutput()
        let elapsed = try self.playSeconds(output, 0.4)
        #expect(elapsed > 0.3 && elapsed < 1.5)
        #expect(output.delayFrames > 0 && output.delayFrames <= 1024)
    }

    @Test func interruptedDrainKeepsWhatIsNotHeardYet() throws {
        let output = NullOutput()
        _ = try output.open(self.format)
        let second = [UInt8](repeating: 0, count: 44100 * 4)
        #expect(try second.withUnsafeBytes { try output.play($0) } == second.count)
        let interrupter = Thread {
            usleep(50_000)
            output.interrupt()
        }
        interrupter.start()
        let start = Date()
        #expect(try output.drain() == false)
        #expect(Date().timeIntervalSince(start) < 0.8)
        // Still sounding: the caller decides whether to wait for the rest or drop it.
        #expect(output.delayFrames > 4410)
        #expect(try output.drain())
        #expect(Date().timeIntervalSince(start) > 0.9)
        #expect(output.delayFrames == 0)
    }

    @Test func withoutSyncItTakesEverythingAtOnce() throws {
        let output = try NullOutputPlugin().makeOutput(
            OutputConfiguration(name: "n", type: "null", parameters: ["sync": "no"]))
        let elapsed = try self.playSeconds(try #require(output as? NullOutput), 10)
        #expect(elapsed < 0.5)
        #expect(output.delayFrames == 0)
    }

    @Test func badSyncValueIsRejectedWithMPDsMessage() {
        #expect(throws: OutputError.self) {
            try NullOutputPlugin().makeOutput(
                OutputConfiguration(name: "n", type: "null", parameters: ["sync": "maybe"]))
        }
        #expect(NullOutputPlugin().name == "null")
    }
}
