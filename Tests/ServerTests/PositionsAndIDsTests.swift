// SPDX-License-Identifier: GPL-3.0-or-later

import Playback
import Testing

@testable import Server

@Suite struct PositionsAndIDsTests {
    private func makeQueue(_ count: Int) -> Queue {
        var queue = Queue(maximumLength: 100, generator: QueueRandom(seed: 1))
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
}
