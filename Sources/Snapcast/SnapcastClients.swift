// SPDX-License-Identifier: GPL-3.0-or-later

import EventLoop
import Model
import Network
import Playback
import Posix
import Synchronization

/// The snapcast output's clients, on a thread of its own (the output's ``LoopThread``): the listening sockets and
/// the clients' connections (``StreamServerLoop``), fed from the ``StreamBroadcast`` ring, and what they share. The
/// server's own event loop never sees these sockets, and the output thread never waits for them. Loop-confined; kept
/// by the core's closures.
final class SnapcastLoopState {
    /// A chunk older than this when its turn comes is not sent, as `mpd` drops it (a client that lags).
    static let maximumAgeNanoseconds: UInt64 = 500_000_000

    let core: StreamServerLoop<SnapcastClient>
    let progress: SnapcastProgress
    /// The output's clock: the times chunks are stamped with and messages are sent at.
    let clock: any PlaybackClock
    /// The buffer chunks are copied out of the ring into, and the one messages are framed in.
    var scratch = [UInt8](repeating: 0, count: SnapcastOutput.recordHeaderSize + SnapcastOutput.chunkCapacity)
    var message: [UInt8] = []

    var broadcast: StreamBroadcast { self.core.broadcast }

    init(
        loop: EventLoop, broadcast: StreamBroadcast, progress: SnapcastProgress, clock: any PlaybackClock,
        logger: Logger
    ) {
        self.core = StreamServerLoop(
            loop: loop, broadcast: broadcast, logger: logger, label: "snapcast", inputCapacity: 8192)
        self.progress = progress
        self.clock = clock
        self.message.reserveCapacity(256)
        self.core.makeClient = { connection in SnapcastClient(connection: connection, state: self) }
        self.core.onWake = { cancelled, metadataChanged in
            self.wake(cancelled: cancelled, metadataChanged: metadataChanged)
        }
        self.core.onClientsChanged = { self.reportProgress() }
    }

    func remove(_ client: SnapcastClient) { self.core.remove(client) }

    /// Tells the output how far every client that takes data has been handed the stream (one whose connection
    /// is backed up does not hold a drain).
    func reportProgress() {
        let written = self.broadcast.written.load(ordering: .acquiring)
        var handedOut = written
        for client in self.core.clients.values where client.isActive && !client.isBackedUp {
            handedOut = min(handedOut, client.position)
        }
        if handedOut > self.progress.handedOut.load(ordering: .relaxed) || handedOut == written {
            self.progress.handedOut.store(handedOut, ordering: .releasing)
            self.progress.wakeup.signal()
        }
    }

    /// New chunks, a cancel or new stream tags.
    private func wake(cancelled: Bool, metadataChanged: Bool) {
        let tags = metadataChanged ? self.broadcast.currentMetadata : nil
        for client in Array(self.core.clients.values) {
            if cancelled { client.skipCancelled() }
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
final class SnapcastClient: ConnectionDelegate, StreamServerClient {
    let connection: Connection
    private let state: SnapcastLoopState
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

    private func now() -> SnapcastTimestamp { SnapcastTimestamp(nanoseconds: self.state.clock.now()) }

    func connectionDidRead(_ connection: Connection) {
        while !connection.isClosed {
            let received = self.now()
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
                    id: self.takeID(), request: header, sent: self.now(), into: &self.state.message)
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
            id: self.takeID(), refersTo: request.id, sent: self.now(), into: &self.state.message)
        SnapcastMessage.codecHeader(
            id: self.takeID(), refersTo: request.id, sent: self.now(), header: codecHeader, into: &self.state.message)
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

    /// Forgets the chunks published before the cancel that it was not handed yet.
    func skipCancelled() {
        guard self.isActive else { return }
        self.position = self.state.broadcast.positionAfterCancel(from: self.position)
    }

    func sendStreamTags(_ json: [UInt8]) {
        self.state.message.removeAll(keepingCapacity: true)
        SnapcastMessage.streamTags(id: self.takeID(), sent: self.now(), json: json, into: &self.state.message)
        self.connection.write(self.state.message)
    }

    /// Frames chunks from the ring into the connection until its buffer is full or the ring is empty; chunks
    /// older than ``SnapcastLoopState/maximumAgeNanoseconds`` are skipped.
    func pump() {
        guard self.isActive, !self.connection.isClosed else { return }
        let broadcast = self.state.broadcast
        let oldest = self.state.clock.now() &- SnapcastLoopState.maximumAgeNanoseconds
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
                id: self.takeID(), sent: self.now(), timestamp: SnapcastTimestamp(nanoseconds: time), payloadSize: size,
                into: &self.state.message)
            self.connection.write(self.state.message)
            self.connection.write(self.state.scratch[SnapcastOutput.recordHeaderSize..<end])
        }
    }
}
