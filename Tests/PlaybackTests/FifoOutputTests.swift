// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Glibc
import Model
import Playback
import TestSupport
import Testing

@Suite struct FifoOutputTests {
    @Test func writesReadablePCMAndDropsWhenNobodyReads() throws {
        let path = NSTemporaryDirectory() + "fermata-fifo-\(UUID().uuidString)"
        #expect(
            try FifoOutputPlugin().makeOutput(OutputConfiguration(name: "f", type: "fifo", parameters: ["path": path]))
                is FifoOutput)
        let clock = ManualClock()
        var output: FifoOutput? = try FifoOutput(path: path, clock: clock)
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO)
        let reader = Glibc.open(path, O_RDONLY | O_NONBLOCK)
        #expect(reader >= 0)
        defer { Glibc.close(reader) }

        _ = try output!.open(AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        let pcm = (0..<4000).map { UInt8($0 & 0xFF) }
        #expect(try pcm.withUnsafeBytes { try output!.play($0) } == 4000)
        var received = [UInt8](repeating: 0, count: 8192)
        let count = received.withUnsafeMutableBytes { Glibc.read(reader, $0.baseAddress, 8192) }
        #expect(count == 4000)
        #expect(Array(received[0..<4000]) == pcm)

        // Nobody reads: more than the pipe holds goes through at the clock's pace (the overflow is dropped), the
        // clock moving on a chunk whenever the output waits for it: 1.5 s of audio, in 1.5 s of the clock.
        let big = [UInt8](repeating: 7, count: 4096)
        let writer = UncheckedBox(output)
        let started = clock.now()
        let written = clock.drive(stepSeconds: 4096.0 / (44100 * 4)) {
            (0..<64).reduce(0) { total, _ in total + ((try? big.withUnsafeBytes { try writer.value!.play($0) }) ?? 0) }
        }
        #expect(written == 64 * 4096)
        #expect(clock.now() - started < 1_500_000_000)
        output!.cancel()
        output!.close()
        output = nil
        writer.value = nil
        // The FIFO we created is removed again.
        #expect(stat(path, &info) != 0)
    }

    /// No pause mode, as mpd's: the player cancels the stream at a pause, which empties the pipe of what the reader
    /// has not read, and closes it; a reopened stream writes on.
    @Test func aPauseCancelsWhatTheReaderHasNotRead() throws {
        let path = NSTemporaryDirectory() + "fermata-fifo-\(UUID().uuidString)"
        let clock = ManualClock()
        let output = try FifoOutput(path: path, clock: clock)
        #expect(!output.hasPauseMode)
        let reader = Glibc.open(path, O_RDONLY | O_NONBLOCK)
        #expect(reader >= 0)
        defer { Glibc.close(reader) }
        let format = AudioFormat(sampleRate: 48000, sampleFormat: .s16, channels: 2)
        _ = try output.open(format)
        let pcm = (0..<1920).map { UInt8($0 & 0xFF) }
        #expect(try pcm.withUnsafeBytes { try output.play($0) } == 1920)
        var pending: Int32 = 0
        #expect(ioctl(reader, UInt(FIONREAD), &pending) == 0 && pending == 1920)
        output.cancel()
        output.close()
        var received = [UInt8](repeating: 0, count: 8192)
        var count = received.withUnsafeMutableBytes { Glibc.read(reader, $0.baseAddress, 8192) }
        #expect(count == -1 && errno == EAGAIN)
        _ = try output.open(format)
        #expect(try pcm.withUnsafeBytes { try output.play($0) } == 1920)
        count = received.withUnsafeMutableBytes { Glibc.read(reader, $0.baseAddress, 8192) }
        #expect(count == 1920 && Array(received[0..<1920]) == pcm)
        output.close()
    }

    @Test func refusesAPathThatIsNotAFIFO() throws {
        let path = NSTemporaryDirectory() + "fermata-notfifo-\(UUID().uuidString)"
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: OutputError.self) { try FifoOutput(path: path) }
        #expect(throws: OutputError.self) {
            try FifoOutputPlugin().makeOutput(OutputConfiguration(name: "f", type: "fifo"))
        }
    }
}
