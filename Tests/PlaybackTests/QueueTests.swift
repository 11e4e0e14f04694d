// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Playback
import Testing

func song(_ uri: String) -> QueueSong { QueueSong(uri: uri) }

func makeQueue(_ count: Int, maximumLength: Int = 16384, seed: UInt64 = 1) -> Queue {
    var queue = Queue(maximumLength: maximumLength, generator: QueueRandom(seed: seed))
    for index in 0..<count { queue.append(song("s\(index)")) }
    return queue
}

@Suite struct QueueTests {
    @Test func idsStartAtOneAndAreNotReusedAfterDelete() {
        var queue = makeQueue(3)
        #expect(queue.items.map(\.id) == [1, 2, 3])
        queue.delete(position: 1)
        #expect(queue.append(song("x")) == 4)
        queue.removeAll()
        #expect(queue.append(song("y")) == 5)
        #expect(queue.position(ofID: 2) == nil)
        #expect(queue.position(ofID: 5) == 0)
        // mpd quirk: id 0 is position 0.
        #expect(queue.position(ofID: 0) == 0)
    }

    @Test func idsWrapAtFourTimesTheMaximumLengthSkippingIdsInUse() {
        var queue = Queue(maximumLength: 2, generator: QueueRandom(seed: 1))
        queue.append(song("a"))  // 1, kept
        for _ in 0..<6 {
            queue.append(song("b"))
            queue.delete(position: 1)
        }
        // Ids 2...7 are used up; 8 is the limit, so the next id wraps past 1 (in use) to 2.
        #expect(queue.append(song("c")) == 2)
    }

    @Test func versionsRecordTheChangeBeforeTheBump() {
        var queue = makeQueue(3)
        #expect(queue.version == 1)
        queue.incrementVersion()
        queue.swapPositions(0, 2)
        #expect(queue.items.map(\.version) == [2, 1, 2])
        #expect(queue.isNewer(at: 0, than: 2))
        #expect(!queue.isNewer(at: 1, than: 2))
        // A version beyond the queue's lists everything.
        #expect(queue.isNewer(at: 1, than: 99))
    }

    @Test func shufflePositionsMovesEachSongWithItsIdAndMarksItChanged() {
        var queue = makeQueue(50)
        queue.incrementVersion()
        queue.shufflePositions(10, 40)
        let songs = queue.items.map(\.song.uri)
        // The same songs, each still under its own id and found at its new position by that id.
        #expect(Set(songs) == Set((0..<50).map { "s\($0)" }))
        #expect(songs[..<10] == ArraySlice((0..<10).map { "s\($0)" }))
        #expect(songs[40...] == ArraySlice((40..<50).map { "s\($0)" }))
        #expect(songs != (0..<50).map { "s\($0)" })
        for (position, item) in queue.items.enumerated() {
            #expect(item.song.uri == "s\(item.id - 1)")
            #expect(queue.position(ofID: item.id) == position)
        }
        #expect(queue.items[..<10].allSatisfy { $0.version == 1 })
        #expect(queue.items[40...].allSatisfy { $0.version == 1 })
        #expect(queue.items[10..<40].allSatisfy { $0.version == 2 })
    }

    @Test func shufflePositionsEndsAsTheSwapsOfEachPositionWithARandomOneWouldLeaveIt() {
        // mpd's shuffle swaps each position of the range with a random one of it; the queue draws those positions
        // first. Both must end in the same order for the same random numbers, and leave the generator alike.
        for (seed, range) in [(UInt64(7), 0..<200), (42, 13..<150), (3, 5..<7), (9, 0..<1), (5, 190..<200)] {
            var queue = makeQueue(200, seed: seed)
            queue.shufflePositions(range.lowerBound, range.upperBound)
            var expected = (0..<200).map { "s\($0)" }
            var generator = QueueRandom(seed: seed)
            for index in range { expected.swapAt(index, Int.random(in: range, using: &generator)) }
            #expect(queue.items.map(\.song.uri) == expected)
            #expect(queue.generator.next() == generator.next())
            for (position, item) in queue.items.enumerated() { #expect(queue.position(ofID: item.id) == position) }
        }
    }

    @Test func replacingASongChangesOnlyThatItem() {
        var queue = makeQueue(3)
        let before = queue
        var changed = song("s1")
        changed.info.tags = [TagItem(.title, "New")]
        changed.startMilliseconds = 1500
        queue.replaceSong(at: 1, with: changed)
        #expect(queue.items[1].song == changed)
        #expect(queue.items[1].id == 2)
        // The copy taken before still has the old song: items share no mutable state.
        #expect(before.items[1].song == song("s1"))
        #expect(queue.items[0].song == song("s0"))
    }

    @Test func deleteMarksTheItemsThatMovedUp() {
        var queue = makeQueue(4)
        queue.incrementVersion()
        queue.delete(position: 1)
        #expect(queue.items.map(\.song.uri) == ["s0", "s2", "s3"])
        #expect(queue.items.map(\.version) == [1, 2, 2])
        #expect(queue.order == [0, 1, 2])
    }

    @Test func moveRangeForwardAndBack() {
        var queue = makeQueue(6)
        queue.moveRange(1, 3, to: 3)
        #expect(queue.items.map(\.song.uri) == ["s0", "s3", "s4", "s1", "s2", "s5"])
        queue.moveRange(3, 5, to: 0)
        #expect(queue.items.map(\.song.uri) == ["s1", "s2", "s0", "s3", "s4", "s5"])
        for (position, item) in queue.items.enumerated() { #expect(queue.position(ofID: item.id) == position) }
    }

    @Test func moveRangeInRandomModeKeepsTheOrderOnTheSameSongs() {
        var queue = makeQueue(5)
        queue.random = true
        queue.shuffleOrder()
        let before = queue.order.map { queue.items[$0].id }
        queue.moveRange(0, 2, to: 3)
        #expect(queue.order.map { queue.items[$0].id } == before)
    }

    @Test(arguments: [
        // single, repeat, consume, order, count → next
        (SingleMode.off, false, false, 0, 3, 1 as Int?),
        (.off, false, false, 2, 3, nil),
        (.off, true, false, 2, 3, 0),
        (.off, true, true, 2, 3, 0),
        (.off, true, true, 0, 1, nil),
        (.on, true, false, 1, 3, 1),
        (.on, true, true, 1, 3, 2),
        (.on, false, false, 1, 3, 2),
        (.oneshot, true, false, 2, 3, 2),
    ])
    func nextOrder(single: SingleMode, repeatMode: Bool, consume: Bool, order: Int, count: Int, next: Int?) {
        var queue = makeQueue(count)
        queue.single = single
        queue.repeatMode = repeatMode
        queue.consume = consume
        #expect(queue.nextOrder(after: order) == next)
    }

    @Test func shuffleGroupsByDescendingPriority() {
        var queue = makeQueue(8)
        for position in [2, 5] { queue.setPriority(position: position, 10, afterOrder: -1, reorder: false) }
        queue.setPriority(position: 7, 20, afterOrder: -1, reorder: false)
        queue.random = true
        queue.shuffleOrder()
        let priorities = queue.order.map { queue.items[$0].priority }
        #expect(priorities == [20, 10, 10, 0, 0, 0, 0, 0])
        #expect(Set(queue.order) == Set(0..<8))
    }

    @Test func raisingAPriorityMovesTheSongRightAfterTheCurrentOne() {
        var queue = makeQueue(6)
        queue.random = true
        queue.restoreOrder()
        // Current is order 2; raising position 5 puts it at order 3.
        queue.setPriority(position: 5, 7, afterOrder: 2)
        #expect(queue.order[3] == 5)
        // A song already played (order 0) with a priority not above the current one's stays.
        queue.setPriority(position: 0, 0, afterOrder: 2)
        #expect(queue.order[0] == 0)
    }
}
