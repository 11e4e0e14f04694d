// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Glibc
import Model
import Playback
import Testing

@Suite struct FifoOutputTests {
    @Test func writesReadablePCMAndDropsWhenNobodyReads() throws {
        let path = NSTemporaryDirectory() + "fermata-fifo-\(UUID().uuidString)"
        var output: FifoOutput? = try #require(
            FifoOutputPlugin().makeOutput(OutputConfiguration(name: "f", type: "fifo", parameters: ["path": path]))
                as? FifoOutput)
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

        // Nobody reads: more than the pipe holds goes through without blocking (the overflow is dropped).
        let big = [UInt8](repeating: 7, count: 4096)
        let start = Date()
        for _ in 0..<64 { _ = try big.withUnsafeBytes { try output!.play($0) } }
        output!.cancel()
        #expect(Date().timeIntervalSince(start) < 5)
        output!.close()
        output = nil
        // The FIFO we created is removed again.
        #expect(stat(path, &info) != 0)
    }

    /// A pause leaves what was written for the reader (snapserver plays it out: nothing is lost on resume); what
    /// nobody read half a second after it was due goes, so a reader never gets stale audio.
    @Test func pauseKeepsTheWrittenAudioForTheReaderThenDropsItWhenStale() throws {
        let path = NSTemporaryDirectory() + "fermata-fifo-\(UUID().uuidString)"
        let output = try FifoOutput(path: path)
        let reader = Glibc.open(path, O_RDONLY | O_NONBLOCK)
        #expect(reader >= 0)
        defer { Glibc.close(reader) }
        _ = try output.open(AudioFormat(sampleRate: 48000, sampleFormat: .s16, channels: 2))
        var received = [UInt8](repeating: 0, count: 8192)
        let pcm = (0..<1920).map { UInt8($0 & 0xFF) }

        #expect(try pcm.withUnsafeBytes { try output.play($0) } == 1920)
        #expect(output.pause())
        var count = received.withUnsafeMutableBytes { Glibc.read(reader, $0.baseAddress, 8192) }
        #expect(count == 1920 && Array(received[0..<1920]) == pcm)

        // Resumed, then paused again with nobody reading: the pipe is emptied once the audio is stale.
        #expect(try pcm.withUnsafeBytes { try output.play($0) } == 1920)
        for _ in 0..<20 { #expect(output.pause()) }
        count = received.withUnsafeMutableBytes { Glibc.read(reader, $0.baseAddress, 8192) }
        #expect(count == -1 && errno == EAGAIN)
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
