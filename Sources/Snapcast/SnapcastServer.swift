// SPDX-License-Identifier: GPL-3.0-or-later

import EventLoop
import Model
import Network
import Playback
import Posix
import Synchronization

/// The snapcast output's clients: a thread of its own running an event loop over the listening sockets and the
/// clients' connections, fed from the ``StreamBroadcast`` ring. The server's own event loop never sees these
/// sockets, and the output thread never waits for them.
///
/// `@unchecked Sendable`: `start` and `stop` are called by the output's owner (enable, disable) one at a time;
/// the loop's state is confined to its thread.
final class SnapcastServer: @unchecked Sendable {
    private let broadcast: StreamBroadcast
    private let progress: SnapcastProgress
    private let logger: Logger
    private let thread = LoopThread(name: "snapcast")

    init(broadcast: StreamBroadcast, progress: SnapcastProgress, logger: Logger) {
        self.broadcast = broadcast
        self.progress = progress
        self.logger = logger
    }

    /// Starts serving the bound sockets on a new thread; returns once its loop runs.
    func start(_ sockets: [BoundSocket]) {
        let broadcast = self.broadcast
        let progress = self.progress
        let logger = self.logger
        self.thread.start(
            setUp: { loop in
                let state = SnapcastLoopState(loop: loop, broadcast: broadcast, progress: progress, logger: logger)
                state.listen(sockets)
                return { state.shutDown() }
            },
            failed: { error, started in
                if started {
                    logger.error("snapcast: event loop failed", ["error": "\(error)"])
                } else {
                    logger.error("snapcast: cannot create its event loop", ["error": "\(error)"])
                    for socket in sockets { socket.close() }
                }
            })
    }

    /// Closes every client and socket and ends the thread.
    func stop() { self.thread.stop() }
}

/// The snapcast thread's state: listening sockets and clients. Loop-confined.
private final class SnapcastLoopState {
    /// A chunk older than this when its turn comes is not sent, as `mpd` drops it (a client that lags).
    static let maximumAgeNanoseconds: UInt64 = 500_000_000

    let loop: EventLoop
    let broadcast: StreamBroadcast
    let progress: SnapcastProgress
    let logger: Logger
    private var listeners: [Listener] = []
    private var clients: [Int: SnapcastClient] = [:]
    private var nextID = 1
    private var wakeRegistration: EventLoop.Registration?
    private var closeCount: UInt64
    private var cancelCount: UInt64
    private var metadataVersion: UInt64
    /// The buffer chunks are copied out of the ring into, and the one messages are framed in.
    var scratch = [UInt8](repeating: 0, count: SnapcastOutput.recordHeaderSize + SnapcastOutput.chunkCapacity)
    var message: [UInt8] = []

    init(loop: EventLoop, broadcast: StreamBroadcast, progress: SnapcastProgress, logger: Logger) {
        self.loop = loop
        self.broadcast = broadcast
        self.progress = progress
        self.logger = logger
        self.closeCount = broadcast.closeCount.load(ordering: .acquiring)
        self.cancelCount = broadcast.cancelCount.load(ordering: .acquiring)
        self.metadataVersion = broadcast.metadataVersion.load(ordering: .acquiring)
        self.message.reserveCapacity(256)
    }

    func listen(_ sockets: [BoundSocket]) {
        for socket in sockets {
            do {
                let listener = try Listener(
                    loop: self.loop, bound: socket,
                    onAccept: { [unowned self] fd, peer in self.accept(fd, peer) },
                    onError: { [logger] error in logger.warning("snapcast: accept failed", ["error": "\(error)"]) })
                self.listeners.append(listener)
            } catch {
                self.logger.error("snapcast: cannot listen", ["address": "\(socket.address)", "error": "\(error)"])
                socket.close()
            }
        }
        do {
            self.wakeRegistration = try self.loop.register(self.broadcast.wakeFD, events: .input) { [unowned self] _ in
                EventFD.drain(self.broadcast.wakeFD)
                self.wake()
            }
        } catch {
            self.logger.error("snapcast: cannot watch the output", ["error": "\(error)"])
        }
    }

    func shutDown() {
        for client in Array(self.clients.values) { client.connection.closeNow() }
        self.clients.removeAll()
        for listener in self.listeners { listener.close() }
        self.listeners.removeAll()
        if let wakeRegistration { self.loop.deregister(wakeRegistration) }
        self.broadcast.listeners.store(0, ordering: .releasing)
        self.reportProgress()
    }

    private func accept(_ fd: FileDescriptor, _ peer: SocketAddress?) {
        // As mpd: only while a stream is open.
        guard self.broadcast.isOpen.load(ordering: .acquiring) else {
            fd.close()
            return
        }
        let id = self.nextID
        self.nextID += 1
        do {
            let connection = try Connection(loop: self.loop, fd: fd, peer: peer, id: id, inputCapacity: 8192)
            self.clients[id] = SnapcastClient(connection: connection, state: self)
            self.broadcast.listeners.store(self.clients.count, ordering: .releasing)
        } catch {
            self.logger.warning("snapcast: cannot serve a client", ["error": "\(error)"])
        }
    }

    func remove(_ client: SnapcastClient) {
        self.clients.removeValue(forKey: client.connection.id)
        self.broadcast.listeners.store(self.clients.count, ordering: .releasing)
        self.reportProgress()
    }

    /// Tells the output how far every client that takes data has been handed the stream (one whose connection
    /// is backed up does not hold a drain).
    func reportProgress() {
        let written = self.broadcast.written.load(ordering: .acquiring)
        var handedOut = written
        for client in self.clients.values where client.isActive && !client.isBackedUp {
            handedOut = min(handedOut, client.position)
        }
        if handedOut > self.progress.handedOut.load(ordering: .relaxed) || handedOut == written {
            self.progress.handedOut.store(handedOut, ordering: .releasing)
            self.progress.wakeup.signal()
        }
    }

    /// New chunks, a close, a cancel or new stream tags.
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
        let tags = version != self.metadataVersion ? self.broadcast.currentMetadata : nil
        self.metadataVersion = version
        for client in Array(self.clients.values) {
            if cancelled { client.skipToEnd() }
            // As mpd: the tags go to every client, before the chunks of the song they belong to.
            if let tags { client.sendStreamTags(tags) }
            client.pump()
            client.connection.flush()
        }
        self.reportProgress()
    }
}

/// One snapclient: its `Hello` and `Time` requests answered, then (once it said hello) every chunk from then on,
/// framed as a `WireChunk` with its own message ids. Loop-confined.
private final class SnapcastClient: ConnectionDelegate {
    let connection: Connection
    private unowned let state: SnapcastLoopState
    /// The id of the next message to this client (each client counts its own, from 1).
    private var nextID: UInt16 = 1
    /// Whether it said hello (it gets the stream).
    private(set) var isActive = false
    /// The ring position of the next chunk it gets.
    private(set) var position: UInt64 = 0

    init(connection: Connection, state: SnapcastLoopState) {
        self.connection = connection
        self.state = state
        connection.delegate = self
    }

    /// Whether its connection holds so much not sent yet that no more chunks are handed to it for now.
    var isBackedUp: Bool { self.connection.pendingOutputCount >= self.connection.lowWaterMark }

    private func takeID() -> UInt16 {
        defer { self.nextID &+= 1 }
        return self.nextID
    }

    private static func now() -> SnapcastTimestamp { SnapcastTimestamp(nanoseconds: MonotonicClock.now()) }

    func connectionDidRead(_ connection: Connection) {
        while !connection.isClosed {
            let received = Self.now()
            switch SnapcastRequest(parsing: connection.inputBytes, received: received) {
            case .incomplete:
                // A message larger than the input buffer, or the client left.
                if connection.isInputFull || connection.inputEnded { connection.closeNow() }
                return
            case .hello(let header, let length):
                connection.consumeInput(length)
                self.answerHello(header)
            case .time(let header, let length):
                connection.consumeInput(length)
                self.state.message.removeAll(keepingCapacity: true)
                SnapcastMessage.timeReply(
                    id: self.takeID(), request: header, sent: Self.now(), into: &self.state.message)
                connection.write(self.state.message)
            case .ignored(let length):
                connection.consumeInput(length)
            case .unexpected:
                connection.closeNow()
                return
            }
        }
    }

    /// The server settings and the codec header; from now on the client gets the stream.
    private func answerHello(_ request: SnapcastHeader) {
        let codecHeader = self.state.broadcast.currentHeader
        self.state.message.removeAll(keepingCapacity: true)
        SnapcastMessage.serverSettings(
            id: self.takeID(), refersTo: request.id, sent: Self.now(), into: &self.state.message)
        SnapcastMessage.codecHeader(
            id: self.takeID(), refersTo: request.id, sent: Self.now(), header: codecHeader, into: &self.state.message)
        self.connection.write(self.state.message)
        if !self.isActive {
            self.isActive = true
            self.position = self.state.broadcast.written.load(ordering: .acquiring)
        }
    }

    func connectionDidDrain(_ connection: Connection) {
        self.pump()
        self.state.reportProgress()
    }

    func connectionDidClose(_ connection: Connection) { self.state.remove(self) }

    /// Forgets the chunks it was not handed yet (cancel).
    func skipToEnd() {
        guard self.isActive else { return }
        self.position = self.state.broadcast.written.load(ordering: .acquiring)
    }

    func sendStreamTags(_ json: [UInt8]) {
        self.state.message.removeAll(keepingCapacity: true)
        SnapcastMessage.streamTags(id: self.takeID(), sent: Self.now(), json: json, into: &self.state.message)
        self.connection.write(self.state.message)
    }

    /// Frames chunks from the ring into the connection until its buffer is full or the ring is empty; chunks
    /// older than ``SnapcastLoopState/maximumAgeNanoseconds`` are skipped.
    func pump() {
        guard self.isActive, !self.connection.isClosed else { return }
        let broadcast = self.state.broadcast
        let oldest = MonotonicClock.now() &- SnapcastLoopState.maximumAgeNanoseconds
        while !self.isBackedUp {
            let written = broadcast.written.load(ordering: .acquiring)
            guard written > self.position else { return }
            let copied = self.state.scratch.withUnsafeMutableBytes { broadcast.copy(from: self.position, into: $0) }
            guard let copied, copied >= SnapcastOutput.recordHeaderSize else {
                // It fell a ring behind: on from the newest chunk.
                self.position = broadcast.newestPageStart
                continue
            }
            let (time, size) = self.state.scratch.withUnsafeBytes { SnapcastRecord.header($0) }
            let end = SnapcastOutput.recordHeaderSize + size
            guard copied >= end else {
                self.position = broadcast.newestPageStart
                continue
            }
            self.position += UInt64(end)
            if time < oldest { continue }
            self.state.message.removeAll(keepingCapacity: true)
            SnapcastMessage.wireChunkHeaders(
                id: self.takeID(), sent: Self.now(), timestamp: SnapcastTimestamp(nanoseconds: time), payloadSize: size,
                into: &self.state.message)
            self.connection.write(self.state.message)
            self.connection.write(self.state.scratch[SnapcastOutput.recordHeaderSize..<end])
        }
    }
}
