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

struct ProcessFileTests {
    @Test func makesDirectoriesWritesAndAppends() throws {
        let root = "/tmp/fermata-posix-\(getpid())-\(MonotonicClock.now())"
        defer { _ = system("rm -rf '\(root)'") }
        try DirectoryEntries.makeDirectories(atPath: root + "/a/b")
        try DirectoryEntries.makeDirectories(atPath: root + "/a/b")
        #expect(try FileStatus(path: root + "/a/b").kind == .directory)

        try writeFile(Array("one\n".utf8), atPath: root + "/a/file")
        let log = try FileDescriptor.openForAppending(root + "/a/file")
        try log.writeAll("two\n".utf8)
        log.close()
        #expect(try readFile(atPath: root + "/a/file") == Array("one\ntwo\n".utf8))
        try writeFile(Array("three\n".utf8), atPath: root + "/a/file")
        #expect(try readFile(atPath: root + "/a/file") == Array("three\n".utf8))

        try writeFile([], atPath: root + "/plain")
        #expect(throws: SystemCallError.self) { try DirectoryEntries.makeDirectories(atPath: root + "/plain/x") }
    }

    @Test func readsTheEnvironment() {
        setenv("FERMATA_TEST_VARIABLE", "a=b", 1)
        defer { unsetenv("FERMATA_TEST_VARIABLE") }
        #expect(ProcessEnvironment.variables()["FERMATA_TEST_VARIABLE"] == "a=b")
    }
}
