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

    /// Tasks a task posts on the loop run in order, each after one look at the descriptors: a chain of them (a
    /// reply streamed piece by piece) never keeps a ready descriptor waiting.
    @Test func tasksPostedOnTheLoopRunInOrderWithALookAtTheDescriptorsBetween() throws {
        let log = Mutex<[String]>([])
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let (readEnd, writeEnd) = (fds[0], fds[1])
        defer {
            close(readEnd)
            close(writeEnd)
        }
        try self.withLoop { loop in
            _ = try? loop.register(FileDescriptor(rawValue: readEnd), events: .input) { _ in
                var byte: UInt8 = 0
                _ = read(readEnd, &byte, 1)
                log.withLock { $0.append("read") }
            }
            @Sendable func task(_ number: Int) {
                log.withLock { $0.append("task \(number)") }
                if number == 5 {
                    var byte: UInt8 = 1
                    _ = write(writeEnd, &byte, 1)
                }
                guard number < 50 else { return loop.stop() }
                loop.execute { task(number + 1) }
            }
            loop.execute { task(1) }
        }
        let seen = log.withLock { $0 }
        #expect(seen.filter { $0 != "read" } == (1...50).map { "task \($0)" })
        let readAt = try #require(seen.firstIndex(of: "read"))
        #expect(readAt < seen.firstIndex(of: "task 7")!, "\(seen.prefix(10))")
    }
}
