// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Synchronization
import Testing

@testable import Posix

struct NamedThreadTests {
    @Test(arguments: [
        ("decoder", "decoder"),
        ("output:Null Output", "output:Null Out"),
        ("output:ééééééééé", "output:éééé"),
        ("exactly15bytes!", "exactly15bytes!"),
    ])
    func namesAreCutToWhatLinuxKeeps(name: String, expected: String) {
        #expect(NamedThread.systemName(name) == expected)
        #expect(NamedThread.systemName(name).utf8.count <= NamedThread.maximumNameLength)
    }

    @Test func theThreadCarriesItsName() throws {
        let seen = Mutex<String?>(nil)
        let thread = NamedThread("output:Null Output") {
            let comm = try? readFile(atPath: "/proc/thread-self/comm")
            seen.withLock { $0 = comm.map { String(decoding: $0, as: UTF8.self) } }
        }
        thread.join()
        #expect(seen.withLock { $0 } == "output:Null Out\n")
    }

    @Test func aDetachedThreadRuns() {
        let done = Semaphore()
        NamedThread.detach("trim") { done.post() }
        done.wait()
    }
}

struct ConditionTests {
    @Test func aTimedWaitGivesUp() {
        let condition = Condition()
        let started = MonotonicClock.now()
        condition.lock()
        let signalled = condition.wait(timeoutNanoseconds: 20_000_000)
        condition.unlock()
        #expect(!signalled)
        #expect(MonotonicClock.now() - started >= 20_000_000)
    }

    @Test func aBroadcastWakesTheWaiter() {
        let condition = Condition()
        let ready = Atomic<Bool>(false)  // changed and read under `condition`
        let waiter = NamedThread("waiter") {
            condition.lock()
            while !ready.load(ordering: .relaxed) { condition.wait() }
            condition.unlock()
        }
        condition.lock()
        ready.store(true, ordering: .relaxed)
        condition.broadcast()
        condition.unlock()
        waiter.join()
        let woken = ready.load(ordering: .relaxed)
        #expect(woken)
    }
}

struct SerialWorkerTests {
    @Test func jobsRunInTheirOrderOnOneThread() {
        let worker = SerialWorker("worker")
        let seen = Mutex<[(Int, pthread_t)]>([])
        let done = Semaphore()
        // The first job holds the thread until every other job is queued: they wait for it, in their order.
        let queued = Semaphore()
        worker.submit {
            queued.wait()
            seen.withLock { $0.append((0, pthread_self())) }
        }
        for index in 1...50 {
            worker.submit { seen.withLock { $0.append((index, pthread_self())) } }
        }
        worker.submit { done.post() }
        queued.post()
        done.wait()
        let runs = seen.withLock { $0 }
        #expect(runs.map(\.0) == Array(0...50))
        #expect(Set(runs.map(\.1)).count == 1)
        #expect(runs.first?.1 != pthread_self())
    }

    @Test func aReleasedWorkerStillRunsWhatWasQueued() {
        let ran = Mutex(0)
        let release = Semaphore()
        let done = Semaphore()
        var worker: SerialWorker? = SerialWorker("worker")
        worker?.submit { release.wait() }
        for _ in 0..<10 { worker?.submit { ran.withLock { $0 += 1 } } }
        worker?.submit { done.post() }
        worker = nil
        release.post()
        done.wait()
        #expect(ran.withLock { $0 } == 10)
    }
}
