// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Input
import Posix
import Synchronization
import Testing

@testable import NFS

/// One connection per server and export, shared by every stream (`mpd`'s `NfsManager`), and waits on a shared
/// connection that end one by one.
@Suite struct NFSConnectionPoolTests {
    /// A connection that only knows whether it failed.
    final class FakeConnection: NFSPooledConnection {
        let key: NFSConnectionPool<FakeConnection>.Key
        private let broken = Atomic(false)
        var isBroken: Bool { self.broken.load(ordering: .relaxed) }
        init(key: NFSConnectionPool<FakeConnection>.Key) { self.key = key }
        func fail() { self.broken.store(true, ordering: .relaxed) }
    }

    private static func pool() -> (NFSConnectionPool<FakeConnection>, made: @Sendable () -> Int) {
        let counter = Counter()
        let pool = NFSConnectionPool<FakeConnection>(idleTimeout: .seconds(60)) { key in
            counter.increment()
            return FakeConnection(key: key)
        }
        return (pool, { counter.value })
    }

    final class Counter: Sendable {
        private let count = Atomic(0)
        func increment() { self.count.add(1, ordering: .relaxed) }
        var value: Int { self.count.load(ordering: .relaxed) }
    }

    @Test func oneConnectionServesEveryLeaseOfAnExport() throws {
        let (pool, made) = Self.pool()
        let first = try pool.lease(server: "h", export: "/music")
        let second = try pool.lease(server: "h", export: "/music")
        #expect(first.connection === second.connection)
        let other = try pool.lease(server: "h", export: "/other")
        let elsewhere = try pool.lease(server: "g", export: "/music")
        #expect(other.connection !== first.connection && elsewhere.connection !== first.connection)
        #expect(made() == 3 && pool.count == 3)
        // The next song, after the last one ended: still the same mount.
        let connection = first.connection
        _ = consume first
        _ = consume second
        #expect(try pool.lease(server: "h", export: "/music").connection === connection)
        #expect(made() == 3)
    }

    @Test func aBrokenConnectionIsMadeAgainWhileItsHoldersKeepIt() throws {
        let (pool, made) = Self.pool()
        let old = try pool.lease(server: "h", export: "/music")
        old.connection.fail()
        let new = try pool.lease(server: "h", export: "/music")
        #expect(new.connection !== old.connection && made() == 2)
        // The old connection's last holder lets go: the new one stays.
        _ = consume old
        #expect(try pool.lease(server: "h", export: "/music").connection === new.connection)
        // A broken connection nobody holds leaves the pool at once.
        new.connection.fail()
        _ = consume new
        #expect(pool.count == 0)
    }

    @Test func anIdleConnectionIsClosedAfterTheTimeout() throws {
        let (pool, made) = Self.pool()
        let held = try pool.lease(server: "h", export: "/held")
        let heldConnection = held.connection
        var idle: NFSConnectionLease? = try pool.lease(server: "h", export: "/idle")
        weak let idleConnection = idle?.connection
        idle = nil
        let released = ContinuousClock.now
        // Before the timeout nothing closes; a leased connection never does.
        pool.closeIdle(now: released)
        #expect(pool.count == 2 && idleConnection != nil)
        pool.closeIdle(now: released + pool.idleTimeout + .seconds(1))
        #expect(pool.count == 1 && idleConnection == nil)
        #expect(try pool.lease(server: "h", export: "/held").connection === heldConnection)
        _ = try pool.lease(server: "h", export: "/idle")
        #expect(made() == 3)
        _ = held
    }

    /// A mount that never completes (a listener that accepts and never answers, as libnfs's MOUNT port): two
    /// streams wait on the same connection, one is cancelled, the other keeps waiting, unharmed, until it is
    /// cancelled in turn. The connection is still usable afterwards.
    @Test func cancellingOneWaiterLeavesTheOthersAndTheConnection() throws {
        let listener = try SilentListener()
        let connection = try NFSConnection(server: "127.0.0.1", export: "/silent", mountPort: listener.port)
        let first = InputCancellation()
        let second = InputCancellation()
        let outcomes = Mutex<[String: NFSError]>([:])
        let done = [OneShotSignal(), OneShotSignal()]
        for (index, (name, cancellation)) in [("first", first), ("second", second)].enumerated() {
            NamedThread.detach("nfs-waiter") {
                let waiter = NFSWaiter(cancellation: cancellation)
                do throws(NFSError) {
                    _ = try connection.status(path: "/", waiter: waiter)
                } catch {
                    outcomes.withLock { $0[name] = error }
                }
                done[index].signal()
            }
        }
        #expect(listener.acceptOne())
        first.cancel()
        done[0].wait()
        #expect(outcomes.withLock { $0 } == ["first": .cancelled])
        #expect(!connection.isBroken)
        second.cancel()
        done[1].wait()
        #expect(outcomes.withLock { $0 } == ["first": .cancelled, "second": .cancelled])
        #expect(!connection.isBroken)
    }
}

/// A one-shot signal between threads.
final class OneShotSignal: Sendable {
    private let pipe: (Int32, Int32) = {
        var descriptors: [Int32] = [0, 0]
        _ = Glibc.pipe(&descriptors)
        return (descriptors[0], descriptors[1])
    }()

    func signal() {
        var byte: UInt8 = 1
        _ = write(self.pipe.1, &byte, 1)
    }

    func wait() {
        var byte: UInt8 = 0
        _ = read(self.pipe.0, &byte, 1)
    }

    deinit {
        close(self.pipe.0)
        close(self.pipe.1)
    }
}

/// A TCP listener on 127.0.0.1 that accepts and never answers.
final class SilentListener {
    let port: UInt16
    private let descriptor: Int32
    private var accepted: [Int32] = []

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        self.descriptor = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(descriptor, 4) == 0 else { throw Errno(rawValue: errno) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        self.port = UInt16(bigEndian: address.sin_port)
    }

    /// Accepts the client's connection (so it has one that stays silent).
    func acceptOne() -> Bool {
        let client = accept(self.descriptor, nil, nil)
        if client >= 0 { self.accepted.append(client) }
        return client >= 0
    }

    deinit {
        for client in self.accepted { close(client) }
        close(self.descriptor)
    }
}
