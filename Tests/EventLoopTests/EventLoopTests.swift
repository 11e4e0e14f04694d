// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Posix
import Synchronization
import Testing

@testable import EventLoop

struct HeapTests {
    @Test func popsInOrder() {
        var heap = Heap<Int>()
        for value in [5, 3, 9, 1, 7, 3, 0] { heap.insert(value) }
        var out: [Int] = []
        while let value = heap.popMin() { out.append(value) }
        #expect(out == [0, 1, 3, 3, 5, 7, 9])
    }
}

@Suite(.serialized)
struct EventLoopTests {
    /// Runs a loop on its own thread; `setUp` runs on it first.
    private func withLoop(_ setUp: @escaping @Sendable (EventLoop) -> Void, wait: Double = 2) throws {
        let loopBox = Mutex<EventLoop?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            guard let loop = try? EventLoop() else {
                done.signal()
                return
            }
            loopBox.withLock { $0 = loop }
            setUp(loop)
            try? loop.run()
            done.signal()
        }
        thread.start()
        #expect(done.wait(timeout: .now() + wait) == .success)
    }

    @Test func timersFireInDeadlineOrderAndCancelledOnesDoNot() throws {
        let fired = Mutex<[Int]>([])
        try self.withLoop { loop in
            let now = MonotonicClock.now()
            loop.schedule(at: now + 30_000_000) { fired.withLock { $0.append(3) } }
            loop.schedule(at: now + 10_000_000) { fired.withLock { $0.append(1) } }
            let cancelled = loop.schedule(at: now + 20_000_000) { fired.withLock { $0.append(2) } }
            loop.cancel(cancelled)
            loop.schedule(at: now + 50_000_000) { loop.stop() }
        }
        #expect(fired.withLock { $0 } == [1, 3])
    }

    @Test func tasksFromOtherThreadsRunOnTheLoop() throws {
        let ranOnLoop = Mutex<Bool>(false)
        try self.withLoop { loop in
            DispatchQueue.global().async {
                loop.execute {
                    ranOnLoop.withLock { $0 = loop.isOnLoop }
                    loop.stop()
                }
            }
        }
        #expect(ranOnLoop.withLock { $0 })
    }
}
