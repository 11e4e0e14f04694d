// SPDX-License-Identifier: GPL-3.0-or-later

import Dispatch
import Synchronization

/// What ``NFSConnectionPool`` keeps: a connection that may have failed for good.
protocol NFSPooledConnection: AnyObject, Sendable {
    /// Whether every call on it fails from now on (a failed mount, a lost connection).
    var isBroken: Bool { get }
}

/// The connections to NFS exports, one per server and export, shared by every stream and storage of that export
/// (`mpd`'s `NfsManager`): the next song and every seek reuse the mount. A broken connection is dropped at the
/// next lease and made again (its current holders keep it, and its failure, until they let go). A connection
/// nobody has leased for ``idleTimeout`` is closed (`mpd` keeps them until an error or the end).
///
/// Any thread; nothing here waits on the network (connections mount on their first call).
final class NFSConnectionPool<Connection: NFSPooledConnection>: Sendable {
    /// A server and an export of it.
    struct Key: Hashable, Sendable {
        var server: String
        var export: String
    }

    private struct Entry {
        let connection: Connection
        var leases = 0
        /// When the last lease ended, while nobody holds one.
        var idleSince: ContinuousClock.Instant?
    }

    /// How long an unleased connection stays open.
    let idleTimeout: Duration
    private let make: @Sendable (Key) throws(NFSError) -> Connection
    private let entries = Mutex<[Key: Entry]>([:])

    /// A pool that makes its connections with `make` (which must not wait on the network).
    init(idleTimeout: Duration, make: @escaping @Sendable (Key) throws(NFSError) -> Connection) {
        self.idleTimeout = idleTimeout
        self.make = make
    }

    /// The connection for `server` and `export`: the one open, or a new one when there is none or it is broken.
    /// Hold the lease while using the connection.
    func lease(server: String, export: String) throws(NFSError) -> NFSConnectionLease<Connection> {
        let key = Key(server: server, export: export)
        let connection: Connection = try self.entries.withLock { entries throws(NFSError) in
            if var entry = entries[key], !entry.connection.isBroken {
                entry.leases += 1
                entry.idleSince = nil
                entries[key] = entry
                return entry.connection
            }
            let connection = try self.make(key)
            entries[key] = Entry(connection: connection, leases: 1)
            return connection
        }
        return NFSConnectionLease(connection: connection, key: key, pool: self)
    }

    /// A lease ended: a broken connection leaves the pool at once, an idle one after ``idleTimeout``.
    fileprivate func release(_ connection: Connection, key: Key) {
        let isIdle = self.entries.withLock { entries in
            guard var entry = entries[key], entry.connection === connection else { return false }
            entry.leases -= 1
            guard entry.leases == 0 else {
                entries[key] = entry
                return false
            }
            if connection.isBroken {
                entries[key] = nil
                return false
            }
            entry.idleSince = .now
            entries[key] = entry
            return true
        }
        guard isIdle else { return }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + self.idleTimeout.timeInterval) {
            [weak self] in self?.closeIdle(now: .now)
        }
    }

    /// Closes every connection that nobody leased since `idleTimeout` before `now`.
    func closeIdle(now: ContinuousClock.Instant) {
        let closed = self.entries.withLock { entries -> [Connection] in
            let idle = entries.filter { _, entry in
                entry.idleSince.map { now - $0 >= self.idleTimeout } ?? false
            }
            for key in idle.keys { entries[key] = nil }
            return idle.values.map(\.connection)
        }
        // Closed here, outside the lock.
        _ = closed
    }

    /// How many connections are open (leased or idle).
    var count: Int { self.entries.withLock { $0.count } }
}

extension Duration {
    /// In seconds, for Dispatch.
    fileprivate var timeInterval: Double {
        Double(self.components.seconds) + Double(self.components.attoseconds) / 1e18
    }
}

/// One use of a pooled connection; it goes back to the pool when this is released.
final class NFSConnectionLease<Connection: NFSPooledConnection>: Sendable {
    let connection: Connection
    private let key: NFSConnectionPool<Connection>.Key
    private let pool: NFSConnectionPool<Connection>

    fileprivate init(
        connection: Connection, key: NFSConnectionPool<Connection>.Key, pool: NFSConnectionPool<Connection>
    ) {
        self.connection = connection
        self.key = key
        self.pool = pool
    }

    deinit { self.pool.release(self.connection, key: self.key) }
}

extension NFSConnection {
    /// The process's connections, closed after a minute without a lease.
    static let pool = NFSConnectionPool<NFSConnection>(idleTimeout: .seconds(60)) { key throws(NFSError) in
        try NFSConnection(server: key.server, export: key.export)
    }
}
