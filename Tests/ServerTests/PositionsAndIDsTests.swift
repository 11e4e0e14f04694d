// SPDX-License-Identifier: GPL-3.0-or-later

import Playback
import Testing

@testable import Server

@Suite struct PositionsAndIDsTests {
    /// The pieces a stream writes, in order.
    final class Sink: ReplySink {
        var pieces: [[UInt8]] = []
        func write(_ text: String) { self.pieces.append(Array(text.utf8)) }
        func write(bytes: some Sequence<UInt8>) { self.pieces.append(Array(bytes)) }
    }

    private func makeQueue(_ count: Int) -> Queue {
        var queue = Queue(maximumLength: 5000, generator: QueueRandom(seed: 1))
        for index in 0..<count { queue.append(QueueSong(uri: "s\(index)")) }
        return queue
    }

    @Test func everyItemAsCposAndIdLinesAcrossDigitCounts() {
        let queue = self.makeQueue(12)
        let text = String(decoding: QueueCommands.positionsAndIDs(queue, in: 0..<12, newerThan: 0), as: UTF8.self)
        #expect(text == (0..<12).map { "cpos: \($0)\nId: \($0 + 1)\n" }.joined())
    }

    @Test func onlyItemsChangedSinceTheVersionWithinTheRange() {
        var queue = self.makeQueue(5)
        queue.incrementVersion()
        queue.touch(position: 3)
        let text = String(
            decoding: QueueCommands.positionsAndIDs(queue, in: 1..<5, newerThan: queue.version), as: UTF8.self)
        #expect(text == "cpos: 3\nId: 4\n")
        #expect(QueueCommands.positionsAndIDs(queue, in: 2..<2, newerThan: 0).isEmpty)
    }

    @Test func theStreamedReplyIsTheWholeOneInPiecesOfAtMost64KiB() {
        var queue = self.makeQueue(4000)
        queue.incrementVersion()
        for position in stride(from: 1, to: 4000, by: 3) { queue.touch(position: position) }
        for (range, version) in [(0..<4000, UInt32(0)), (2..<3999, queue.version), (10..<11, 0)] {
            let sink = Sink()
            let result = QueueCommands.streamPositionsAndIDs(queue, in: range, newerThan: version, sink: sink)
            guard case .stream(let stream) = result else {
                Issue.record("not streamed")
                return
            }
            #expect(stream.takeSize(room: 1 << 30) == QueueCommands.mostBytesPerPosition * range.count)
            while stream.next() {}
            #expect(sink.pieces.allSatisfy { !$0.isEmpty && $0.count <= 1 << 16 })
            #expect(
                sink.pieces.joined().elementsEqual(QueueCommands.positionsAndIDs(queue, in: range, newerThan: version)))
            // 52 bytes at most per position: 1260 positions a piece.
            #expect(sink.pieces.count == (range.count + 1259) / 1260)
        }
        // Nothing to list: no stream.
        guard case .ok = QueueCommands.streamPositionsAndIDs(queue, in: 5..<5, newerThan: 0, sink: Sink()) else {
            Issue.record("an empty range streamed")
            return
        }
    }
}
