// SPDX-License-Identifier: GPL-3.0-or-later

import EventLoop
import Model
import Posix
import Synchronization

/// What a stream output's server thread runs (a ``StreamServerLoop``): listening, then shutting down.
public protocol StreamServing: AnyObject {
    /// Listens on `sockets`.
    func listen(_ sockets: [BoundSocket])
    /// Closes every client and listening socket.
    func shutDown()
}

/// A client of a stream output's server: what its ``StreamServerLoop`` keeps of it.
public protocol StreamServerClient: AnyObject {
    /// Its connection (closed by the loop when the stream closes or the server stops).
    var connection: Connection { get }
}

/// What a stream output's server (httpd, snapcast) does on its own thread whatever its protocol: the listening
/// sockets, the clients by connection, the wake-up from the output thread (``StreamBroadcast``), every client hung
/// up on when the stream closes, as `mpd` does. The protocol's part is in the closures its owner sets before
/// ``listen(_:)``, which keep it (and it them) until ``shutDown()``.
///
/// Loop-confined: made, used and shut down on its thread's loop.
public final class StreamServerLoop<Client: StreamServerClient>: StreamServing {
    public let loop: EventLoop
    public let broadcast: StreamBroadcast
    public let logger: Logger
    /// The output's name in the log (`httpd`, `snapcast`).
    private let label: String
    private let inputCapacity: Int
    /// The clients, by connection id.
    public private(set) var clients: [Int: Client] = [:]
    private var listeners: [Listener] = []
    private var nextID = 1
    private var wakeRegistration: EventLoop.Registration?
    private var closeCount: UInt64
    private var cancelCount: UInt64
    private var metadataVersion: UInt64

    /// Whether one more client is taken while the stream is open, given how many there are (`max_clients`).
    public var accepts: (Int) -> Bool = { _ in true }
    /// Makes the client of a new connection.
    public var makeClient: ((Connection) -> Client)?
    /// The output published, cancelled (skip what clients were not sent yet) or set new metadata; clients whose
    /// stream closed are gone already.
    public var onWake: (_ cancelled: Bool, _ metadataChanged: Bool) -> Void = { _, _ in }
    /// The clients changed (one came or went).
    public var onClientsChanged: () -> Void = {}

    /// Creates the loop's state; `inputCapacity` is each client's input buffer.
    public init(loop: EventLoop, broadcast: StreamBroadcast, logger: Logger, label: String, inputCapacity: Int) {
        self.loop = loop
        self.broadcast = broadcast
        self.logger = logger
        self.label = label
        self.inputCapacity = inputCapacity
        self.closeCount = broadcast.closeCount.load(ordering: .acquiring)
        self.cancelCount = broadcast.cancelCount.load(ordering: .acquiring)
        self.metadataVersion = broadcast.metadataVersion.load(ordering: .acquiring)
    }

    /// Listens on `sockets` and watches the output.
    public func listen(_ sockets: [BoundSocket]) {
        for socket in sockets {
            do {
                let listener = try Listener(
                    loop: self.loop, bound: socket,
                    onAccept: { [unowned self] fd, peer in self.accept(fd, peer) },
                    onError: { [logger, label] error in
                        logger.warning("\(label): accept failed", ["error": "\(error)"])
                    })
                self.listeners.append(listener)
            } catch {
                self.logger.error(
                    "\(self.label): cannot listen", ["address": "\(socket.address)", "error": "\(error)"])
                socket.close()
            }
        }
        do {
            self.wakeRegistration = try self.loop.register(self.broadcast.wakeFD, events: .input) { [unowned self] _ in
                EventFD.drain(self.broadcast.wakeFD)
                self.wake()
            }
        } catch {
            self.logger.error("\(self.label): cannot watch the output", ["error": "\(error)"])
        }
    }

    /// Closes every client and listening socket (the server stops).
    public func shutDown() {
        for client in Array(self.clients.values) { client.connection.closeNow() }
        self.clients.removeAll()
        for listener in self.listeners { listener.close() }
        self.listeners.removeAll()
        if let wakeRegistration { self.loop.deregister(wakeRegistration) }
        self.broadcast.listeners.store(0, ordering: .releasing)
        self.onClientsChanged()
        // The closures keep their owner (which keeps this loop): let both go.
        self.accepts = { _ in false }
        self.makeClient = nil
        self.onWake = { _, _ in }
        self.onClientsChanged = {}
    }

    private func accept(_ fd: FileDescriptor, _ peer: SocketAddress?) {
        // As mpd: only while a stream is open.
        guard self.broadcast.isOpen.load(ordering: .acquiring), self.accepts(self.clients.count),
            let makeClient = self.makeClient
        else {
            fd.close()
            return
        }
        let id = self.nextID
        self.nextID += 1
        do {
            let connection = try Connection(
                loop: self.loop, fd: fd, peer: peer, id: id, inputCapacity: self.inputCapacity)
            self.clients[id] = makeClient(connection)
            self.broadcast.listeners.store(self.clients.count, ordering: .releasing)
            self.onClientsChanged()
        } catch {
            self.logger.warning("\(self.label): cannot serve a client", ["error": "\(error)"])
        }
    }

    /// Forgets a client whose connection closed.
    public func remove(_ client: Client) {
        self.clients.removeValue(forKey: client.connection.id)
        self.broadcast.listeners.store(self.clients.count, ordering: .releasing)
        self.onClientsChanged()
    }

    /// New data, a close, a cancel or new metadata.
    private func wake() {
        let closes = self.broadcast.closeCount.load(ordering: .acquiring)
        if closes != self.closeCount {
            self.closeCount = closes
            // The stream closed (stop): every client goes, as with mpd.
            for client in Array(self.clients.values) { client.connection.closeNow() }
        }
        let cancels = self.broadcast.cancelCount.load(ordering: .acquiring)
        let cancelled = cancels != self.cancelCount
        self.cancelCount = cancels
        let version = self.broadcast.metadataVersion.load(ordering: .acquiring)
        let metadataChanged = version != self.metadataVersion
        self.metadataVersion = version
        self.onWake(cancelled, metadataChanged)
    }
}

extension LoopThread {
    /// Starts the thread serving `sockets` through the ``StreamServerLoop`` that `setUp` makes on it (and sets up);
    /// the sockets are closed if the thread's loop cannot be made.
    public func serve(
        _ sockets: [BoundSocket], label: String, logger: Logger,
        setUp: @escaping @Sendable (EventLoop) -> any StreamServing
    ) {
        self.start(
            setUp: { loop in
                let state = setUp(loop)
                state.listen(sockets)
                return { state.shutDown() }
            },
            failed: { error, started in
                if started {
                    logger.error("\(label): event loop failed", ["error": "\(error)"])
                } else {
                    logger.error("\(label): cannot create its event loop", ["error": "\(error)"])
                    for socket in sockets { socket.close() }
                }
            })
    }
}
