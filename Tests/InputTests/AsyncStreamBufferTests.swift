// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Input
import Posix
import Testing

@Suite struct AsyncStreamBufferTests {
    /// A producer's view: appends under the mutex and wakes the reader, as the curl and SMB helpers do.
    private func produce(_ buffer: AsyncStreamBuffer<Int>, _ bytes: [UInt8], end: Bool = false) {
        buffer.condition.lock()
        bytes.withUnsafeBytes { buffer.append($0) }
        if end { buffer.ended = true }
        buffer.condition.broadcast()
        buffer.condition.unlock()
    }

    private func read(_ buffer: AsyncStreamBuffer<Int>, _ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = try bytes.withUnsafeMutableBytes { try buffer.read(into: $0, uri: "x://s") { false } }
        return Array(bytes[0..<got])
    }

    @Test func bytesComeOutInOrderAcrossTheRingsEnd() throws {
        let buffer = try AsyncStreamBuffer<Int>(capacity: 8, resumeAt: 4)
        self.produce(buffer, [1, 2, 3, 4, 5, 6])
        #expect(try self.read(buffer, 5) == [1, 2, 3, 4, 5])
        // Wraps: 6 at the ring's end, 7…11 from its start.
        self.produce(buffer, [7, 8, 9, 10, 11], end: true)
        #expect(buffer.count == 6)
        #expect(try self.read(buffer, 100) == [6, 7, 8, 9, 10, 11])
        #expect(try self.read(buffer, 1) == [])
    }

    @Test func aReadWaitsForTheProducer() throws {
        let buffer = try AsyncStreamBuffer<Int>(capacity: 64, resumeAt: 32)
        NamedThread.detach("producer") {
            usleep(50_000)
            self.produce(buffer, [42], end: true)
        }
        #expect(try self.read(buffer, 4) == [42])
        #expect(try self.read(buffer, 4) == [])
    }

    @Test func aFailureComesOnceBeforeTheBufferedBytes() throws {
        let buffer = try AsyncStreamBuffer<Int>(capacity: 64, resumeAt: 32)
        self.produce(buffer, [1, 2])
        buffer.condition.lock()
        buffer.failure = .plugin(message: "broken", uri: "x://s")
        buffer.condition.unlock()
        #expect(throws: InputError.plugin(message: "broken", uri: "x://s")) { try self.read(buffer, 4) }
        #expect(try self.read(buffer, 4) == [1, 2])
    }

    @Test func cancellingEndsAWaitingReadAndEveryLaterCall() throws {
        let buffer = try AsyncStreamBuffer<Int>(capacity: 64, resumeAt: 32)
        let cancellation = InputCancellation()
        cancellation.onCancel { buffer.cancel() }
        NamedThread.detach("canceller") {
            usleep(50_000)
            cancellation.cancel()
        }
        // No producer ever writes: only the cancellation ends the wait.
        #expect(throws: InputError.cancelled(uri: "x://s")) { try self.read(buffer, 4) }
        #expect(throws: InputError.cancelled(uri: "x://s")) { try buffer.waitReady(uri: "x://s") }
    }

    @Test func waitReadyGivesTheAnswerOfTheCurrentRequest() throws {
        let buffer = try AsyncStreamBuffer<Int>(capacity: 64, resumeAt: 32)
        buffer.condition.lock()
        let generation = buffer.restart()
        buffer.condition.unlock()
        NamedThread.detach("producer") {
            buffer.condition.lock()
            if buffer.generation == generation {
                buffer.response = 70_000
                buffer.ready = true
                buffer.condition.broadcast()
            }
            buffer.condition.unlock()
        }
        #expect(try buffer.waitReady(uri: "x://s") == 70_000)
        buffer.condition.lock()
        _ = buffer.restart()
        #expect(buffer.response == nil && !buffer.ready && buffer.count == 0)
        buffer.condition.unlock()
    }

    @Test func waitResponseLeavesALaterFailureToTheRead() throws {
        let buffer = try AsyncStreamBuffer<Int>(capacity: 64, resumeAt: 32)
        buffer.condition.lock()
        buffer.response = 3
        buffer.ready = true
        buffer.failure = .plugin(message: "read failed", uri: "x://s")
        buffer.ended = true
        buffer.condition.unlock()
        #expect(try buffer.waitResponse(uri: "x://s") == 3)
        #expect(throws: InputError.plugin(message: "read failed", uri: "x://s")) { try self.read(buffer, 4) }
        #expect(try self.read(buffer, 4) == [])
    }

    @Test func aPausedProducerIsAskedToResumeBelowTheMark() throws {
        let buffer = try AsyncStreamBuffer<Int>(capacity: 8, resumeAt: 4)
        self.produce(buffer, [1, 2, 3, 4, 5, 6, 7, 8])
        buffer.condition.lock()
        buffer.paused = true
        buffer.condition.unlock()
        // Still 5 buffered: at or above the mark, no request.
        #expect(try self.read(buffer, 3) == [1, 2, 3])
        buffer.condition.lock()
        #expect(!buffer.resumeRequested)
        buffer.condition.unlock()
        #expect(try self.read(buffer, 2) == [4, 5])
        buffer.condition.lock()
        #expect(buffer.resumeRequested)
        buffer.condition.unlock()
        // The eventfd was bumped for a producer that polls.
        var value: UInt64 = 0
        #expect(Glibc.read(buffer.wake.rawValue, &value, 8) == 8 && value >= 1)
    }
}
