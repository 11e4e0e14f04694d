// SPDX-License-Identifier: GPL-3.0-or-later

import EventLoop
import Glibc
import Input
import Library
import MPDProtocol
import Model
import Network
import Playback
import Posix
import RawText

/// One client's connection: the shell around its ``ClientSession``. It frames request lines, feeds them and
/// what its commands did to the session, and performs the session's actions on the socket: runs commands,
/// produces streamed and deferred replies, keeps the timeout and the per-connection settings.
///
/// Loop-confined: every method runs on the event loop thread.
public final class Client: ConnectionDelegate, ReplySink {
    /// A small number for logs.
    public var id: Int { self.connection.id }

    let connection: Connection
    unowned let server: Server

    /// The partition this client's commands act on.
    var partition: Partition { self.settings.partition }
    /// This client's own settings: permissions, tag mask, binary limit, subscriptions and messages.
    let settings: SessionSettings

    /// The session's state machine, which makes the protocol's decisions: framing aside, everything this shell
    /// does with the socket it is told by it. (Not ``settings``, which the commands read and change.)
    private var stateMachine: ClientSession
    private var framer = LineFramer()
    /// The reply of the session's running stream.
    private var stream: ReplyStream?
    /// The reply of the session's deferred command; no further request is read until it is done.
    private var deferred: DeferredReply?

    /// When the last request line arrived or the last `idle` ended, on the server's clock.
    private var lastActivity: UInt64
    private var timeoutTimer: ClockTimer?
    /// Drops the kept remote cover when it expires (``armCoverExpiry()``).
    private var coverTimer: ClockTimer?

    init(connection: Connection, server: Server, permissions: Permission) {
        self.connection = connection
        self.server = server
        self.settings = SessionSettings(
            permissions: permissions, isLocal: connection.isLocal, peerUserID: connection.peerUserID,
            partition: server.defaultPartition)
        self.lastActivity = server.clock.now()
        self.stateMachine = ClientSession(
            maxCommandListSize: server.options.maxCommandListSize,
            maxOutputBufferSize: server.options.maxOutputBufferSize
        )
        connection.delegate = self
        self.settings.notifyMessage = { [weak self] in self?.notify(IdleMask(.message)) }
        self.settings.addPendingIdle = { [weak self] events in self?.notify(events) }
        self.settings.remoteCoverKept = { [weak self] in self?.armCoverExpiry() }
        // A reply's turn (`streamQuantum`), and well before max_output_buffer_size, where mpd (and Fermata) drop a
        // client.
        connection.lowWaterMark = max(1024, min(Self.streamQuantum, server.options.maxOutputBufferSize / 2))
    }

    /// Whether the client is waiting in `idle`.
    var isIdle: Bool { self.stateMachine.isIdle }

    /// Sends the greeting and starts the timeout.
    func start() {
        self.connection.write("OK MPD \(Server.protocolVersion)\n")
        self.connection.flush()
        self.armTimeout()
    }

    /// Queues reply text. `RawText` escapes (names that are not valid UTF-8) go out as their raw bytes,
    /// as `mpd` sends them; text without an escape is queued as is.
    func write(_ text: String) {
        if RawText.containsEscape(text) {
            self.connection.write(RawText.encode(text))
        } else {
            self.connection.write(text)
        }
    }

    /// Queues reply bytes.
    func write(bytes: some Sequence<UInt8>) { self.connection.write(bytes) }

    /// Queues what `body` appends, made straight in the connection's output.
    func appendInPlace(_ body: (inout [UInt8]) -> Void) { self.connection.appendInPlace(body) }

    /// Queues what `body` writes, at most `capacity` bytes, straight into the connection's output.
    func write(atMost capacity: Int, _ body: (inout ByteWriter) -> Void) {
        self.connection.write(atMost: capacity, body)
    }

    // MARK: - ConnectionDelegate

    public func connectionDidRead(_ connection: Connection) { self.processInput() }

    public func connectionDidDrain(_ connection: Connection) { self.processInput() }

    public func connectionDidClose(_ connection: Connection) {
        self.deferred?.cancellation.cancel()
        self.timeoutTimer?.cancel()
        self.timeoutTimer = nil
        self.coverTimer?.cancel()
        self.coverTimer = nil
        self.server.clientDidClose(self)
    }

    // MARK: - Input

    private func processInput() {
        while !self.connection.isClosed {
            if self.stateMachine.isStreaming {
                self.send(self.produceStream())
                if self.stateMachine.isStreaming {
                    self.connection.isReadingPaused = true
                    return
                }
                continue
            }
            guard self.stateMachine.acceptsInput else {
                // A deferred reply is being made, or the session is over.
                self.connection.isReadingPaused = true
                return
            }
            if self.connection.pendingOutputCount >= self.connection.lowWaterMark {
                // Back-pressure: answer nothing more until the client reads what it asked for.
                self.connection.isReadingPaused = true
                return
            }
            switch self.framer.next(in: self.connection.inputBytes) {
            case .needMore:
                self.connection.isReadingPaused = false
                if self.connection.inputEnded { self.send(.inputEnded) }
                return
            case .overflow:
                self.send(.lineTooLong)
                return
            case .line(let slice, let consumed):
                let line = Array(slice)
                self.connection.consumeInput(consumed)
                self.lastActivity = self.server.clock.now()
                self.send(.line(line))
            }
        }
    }

    /// Feeds `event` to the session and performs its actions, answering those that ask for an answer, until
    /// the session has nothing more to do or the connection is closed.
    private func send(_ event: ClientSession.Event) {
        defer { self.finishReadingIfDone() }
        var next: ClientSession.Event? = event
        while let event = next {
            next = nil
            for action in self.stateMachine.handle(event) {
                guard !self.connection.isClosed else { return }
                next = self.perform(action)
            }
        }
    }

    /// Finishes the reading session of the command or command list that ran (``SessionSettings/readingSession``)
    /// once it is done and no deferred work reads in it, on a thread of its own (ending scan workers waits for them).
    private func finishReadingIfDone() {
        guard self.deferred == nil, self.settings.readingSession != nil,
            self.connection.isClosed || self.stateMachine.state != .running,
            let session = self.settings.takeReadingSession()
        else { return }
        NamedThread.detach("reading") { session.readingFinished() }
    }

    /// Performs one action; returns the answer the session asked for, if any.
    private func perform(_ action: ClientSession.Action) -> ClientSession.Event? {
        switch action {
        case .execute(let request, _):
            return .executed(self.execute(request))
        case .write(let text):
            self.write(text)
        case .flush:
            self.connection.flush()
        case .produceStream(let whole):
            if whole {
                // Inside a list the reply is produced whole, as mpd produces every reply.
                while let stream = self.stream, stream.next() {}
                self.stream = nil
                return .streamProduced(finished: true)
            }
            return self.produceStream()
        case .measureOutput:
            return .outputMeasured(self.connection.pendingOutputCount)
        case .startDeferred:
            self.startDeferred()
        case .stopTimeout:
            self.cancelTimeout()
        case .restartTimeout:
            self.lastActivity = self.server.clock.now()
            self.armTimeout()
        case .kill:
            self.server.kill()
        case .close(let reason):
            self.close(for: reason)
        }
        return nil
    }

    private func close(for reason: ClientSession.Closing) {
        let id = "\(self.id)"
        switch reason {
        case .lineTooLong: self.server.logger.info("request line too long, closing", ["client": id])
        case .commandListTooLarge: self.server.logger.info("command list too large, closing", ["client": id])
        case .outputBufferFull: self.server.logger.warning("output buffer full, closing", ["client": id])
        case .timedOut: self.server.logger.info("connection timed out", ["client": id])
        case .requested, .inputEnded, .invalidWordCharacter, .malformedLine, .commandDuringIdle: break
        }
        if reason.flushesOutput {
            self.connection.closeAfterFlushing()
        } else {
            self.connection.closeNow()
        }
    }

    /// Looks a request up and runs it.
    private func execute(_ request: Tokenizer.Request) -> ClientSession.Outcome {
        guard let command = self.server.commands.lookup(request.name) else {
            return .failed(AckError(.unknown, "unknown command \"\(request.name)\""), command: "")
        }
        do throws(AckError) {
            guard self.settings.permissions.isSuperset(of: command.permission) else {
                throw AckError(.permission, "you don't have permission for \"\(command.name)\"")
            }
            try command.checkArgumentCount(request.arguments.count)
            var context = CommandContext(client: self, server: self.server, arguments: request.arguments)
            return self.outcome(of: try command.handler(&context), command: command.name)
        } catch {
            return .failed(error, command: command.name)
        }
    }

    /// Keeps what the session does not hold (a stream, a deferred reply) and says what happened.
    private func outcome(of result: CommandResult, command: String) -> ClientSession.Outcome {
        switch result {
        case .ok:
            return .ok
        case .stream(let stream):
            self.stream = stream
            return .stream
        case .deferred(let reply):
            reply.commandName = command
            self.deferred = reply
            return .deferred(isBackground: reply.isBackground)
        case .idle(let mask):
            return .idle(mask)
        case .close:
            return .close
        case .kill:
            return .kill
        }
    }

    // MARK: - Streams

    /// How much of a streamed reply one turn produces before the session yields to the other clients (the
    /// connection resumes it after the loop's other ready work), so many large replies at once still
    /// leave every client's next request a short wait. The client's connection takes as much before it stops (its
    /// low-water mark): each turn costs a wake-up, a send and two `epoll_ctl`s (at 16 KiB a turn, a fifth of
    /// `listallinfo`'s CPU time), and the reader gets the reply in pieces about as large (at 64 KiB a Python client
    /// spent a fifth more CPU on `listallinfo`'s 38 MB than on mpd's 1 MiB pieces). 128 KiB: replies of megabytes
    /// 1–6 % faster than at 64 KiB, test_abuse's status p99 under 100 non-reading clients unchanged (1.6 ms); 256
    /// KiB gained 2–9 % more and tripled that p99 (RESULTS.md, session 20).
    static let streamQuantum = 128 * 1024

    /// Produces stream pieces while the client keeps up, and says whether the stream is done; or, the first time
    /// for a stream that counts against `max_output_buffer_size`, says how much it would queue with what is queued.
    private func produceStream() -> ClientSession.Event {
        let queued = self.connection.pendingOutputCount
        if let size = self.stream?.takeSize(room: self.stateMachine.maxOutputBufferSize - queued) {
            return .streamSized(queued + size)
        }
        let quantum = min(self.connection.lowWaterMark, self.connection.pendingOutputCount + Self.streamQuantum)
        while let stream = self.stream, !self.connection.isClosed {
            if self.connection.pendingOutputCount >= quantum { return .streamProduced(finished: false) }
            if !stream.next() { self.stream = nil }
        }
        return .streamProduced(finished: self.stream == nil)
    }

    // MARK: - Deferred replies

    /// Runs the deferred reply's work on its worker, or on a thread of its own; the session reads no further
    /// request until it is done.
    private func startDeferred() {
        guard let reply = self.deferred else { return }
        self.connection.isReadingPaused = true
        let bound = LoopBound(self, loop: self.server.loop)
        if let begin = reply.begin {
            // Finished in a later turn of the loop, also when `begin` is done at once.
            begin { value in bound.execute { client in client.finishDeferred(value) } }
            return
        }
        let (work, cancellation) = (reply.work, reply.cancellation)
        let job: @Sendable () -> Void = {
            let value = work(cancellation)
            bound.execute { client in client.finishDeferred(value) }
        }
        if let worker = reply.worker {
            worker.submit(job)
        } else {
            NamedThread.detach("command", job)
        }
    }

    /// Whether idle events wait for this session's deferred reply (``DeferredReply/holdsIdle``).
    var holdsIdle: Bool { self.deferred?.holdsIdle == true }

    /// The deferred command's work is done: reply as the command would have, then go on with the command list
    /// it interrupted and the requests that wait.
    private func finishDeferred(_ value: any Sendable) {
        guard let reply = self.deferred else { return }
        self.deferred = nil
        // Idle events held for it go once the requests read with it are answered (or wait for the next such reply).
        defer { if reply.holdsIdle { self.server.releaseIdle() } }
        guard !self.connection.isClosed else {
            self.finishReadingIfDone()
            return
        }
        var context = CommandContext(client: self, server: self.server, arguments: [])
        let outcome: ClientSession.Outcome
        do throws(AckError) {
            outcome = self.outcome(of: try reply.finish(value, &context), command: reply.commandName)
        } catch {
            outcome = .failed(error, command: reply.commandName)
        }
        self.send(.deferredFinished(outcome))
        self.processInput()
    }

    // MARK: - Idle

    /// Records `events` and answers a waiting `idle` that subscribed to any of them.
    func notify(_ events: IdleMask) {
        guard !self.connection.isClosed else { return }
        self.send(.idleEvents(events))
    }

    // MARK: - Timeout

    private func armTimeout() {
        guard self.timeoutTimer == nil, !self.isIdle, !self.connection.isClosed else { return }
        let timeout = UInt64(self.server.options.connectionTimeoutSeconds * 1e9)
        self.timeoutTimer = self.server.clock.schedule(on: self.server.loop, at: self.lastActivity + timeout) {
            [weak self] in
            guard let self else { return }
            self.timeoutTimer = nil
            self.checkTimeout(timeout)
        }
    }

    private func checkTimeout(_ timeout: UInt64) {
        guard !self.connection.isClosed, !self.isIdle else { return }
        if self.server.clock.now() >= self.lastActivity + timeout {
            self.send(.timedOut)
        } else {
            self.armTimeout()
        }
    }

    private func cancelTimeout() {
        self.timeoutTimer?.cancel()
        self.timeoutTimer = nil
    }

    // MARK: - The remote cover's expiry

    /// Drops the remote cover `albumart` kept (up to `RemoteCover.maximumSize` bytes) once it has gone unused for
    /// its lifetime, as `mpd`'s timer closes the cover's stream: a client that stays connected and silent does not
    /// hold it. Each use moves the expiry later; the timer then looks again at the new one.
    private func armCoverExpiry() {
        guard self.coverTimer == nil, let expiry = self.settings.lastRemoteCover?.expiry else { return }
        self.coverTimer = self.server.clock.schedule(on: self.server.loop, at: expiry) { [weak self] in
            guard let self else { return }
            self.coverTimer = nil
            guard let cover = self.settings.lastRemoteCover else { return }
            if self.server.clock.now() >= cover.expiry {
                self.settings.lastRemoteCover = nil
            } else {
                self.armCoverExpiry()
            }
        }
    }

    /// Closes the connection at once (shutdown).
    func close() { self.connection.closeNow() }
}
