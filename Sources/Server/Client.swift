// SPDX-License-Identifier: GPL-3.0-or-later

import EventLoop
import Glibc
import Input
import MPDProtocol
import Model
import Network
import Posix
import RawText

/// One client session: request framing, command lists, idle, the timeout and per-connection settings.
///
/// Loop-confined: every method runs on the event loop thread.
public final class Client: ConnectionDelegate {
    /// A small number for logs.
    public var id: Int { self.connection.id }

    let connection: Connection
    unowned let server: Server

    /// The permissions this client holds now.
    var permissions: Permission
    /// The tags this client asked to see (`tagtypes`); intersected with `metadata_to_use` on output.
    var tagMask = TagMask.all
    /// The largest binary chunk this client accepts (`binarylimit`).
    var binaryLimit = 8192

    /// Idle events that happened since this client last received an idle reply.
    var pendingIdle: IdleMask = []
    /// While idling, the subsystems the client waits for.
    private(set) var idleSubscription: IdleMask?

    /// Channels this client is subscribed to.
    var subscriptions: [String] = []
    /// Messages received and not yet read.
    var messages: [(channel: String, text: String)] = []

    private enum ListMode {
        case none
        case plain
        case ok
    }

    private var framer = LineFramer()
    /// A reply still being produced; no further request is read until it is done.
    private var stream: ReplyStream?
    private var listMode = ListMode.none
    private var listLines: [[UInt8]] = []
    private var listSize = 0
    /// A command waiting for work off the loop; no further request is read until it is done.
    private var deferred: (reply: DeferredReply, index: Int)?
    /// The rest of the command list a deferred command interrupted: run once it is done.
    private var pendingList: (lines: [[UInt8]], next: Int, okMode: Bool)?

    private var lastActivity = MonotonicClock.now()
    private var timeoutTimer: EventLoop.Timer?

    init(connection: Connection, server: Server, permissions: Permission) {
        self.connection = connection
        self.server = server
        self.permissions = permissions
        connection.delegate = self
        // Stop producing well before max_output_buffer_size, where mpd (and Fermata) drop a client.
        connection.lowWaterMark = max(1024, min(connection.lowWaterMark, server.options.maxOutputBufferSize / 2))
    }

    /// Whether the client is waiting in `idle`.
    var isIdle: Bool { self.idleSubscription != nil }

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

    // MARK: - ConnectionDelegate

    public func connectionDidRead(_ connection: Connection) { self.processInput() }

    public func connectionDidDrain(_ connection: Connection) { self.processInput() }

    public func connectionDidClose(_ connection: Connection) {
        self.deferred?.reply.cancellation.cancel()
        if let timer = self.timeoutTimer { self.server.loop.cancel(timer) }
        self.timeoutTimer = nil
        self.server.clientDidClose(self)
    }

    // MARK: - Input

    private func processInput() {
        while !self.connection.isClosed {
            if self.deferred != nil {
                self.connection.isReadingPaused = true
                return
            }
            if self.stream != nil {
                self.pumpStream()
                if self.stream != nil {
                    self.connection.isReadingPaused = true
                    return
                }
            }
            if self.connection.pendingOutputCount >= self.connection.lowWaterMark {
                // Back-pressure: answer nothing more until the client reads what it asked for.
                self.connection.isReadingPaused = true
                return
            }
            switch self.framer.next(in: self.connection.inputBytes) {
            case .needMore:
                self.connection.isReadingPaused = false
                if self.connection.inputEnded { self.connection.closeAfterFlushing() }
                return
            case .overflow:
                self.server.logger.info("request line too long, closing", ["client": "\(self.id)"])
                self.connection.closeNow()
                return
            case .line(let slice, let consumed):
                let line = Array(slice)
                self.connection.consumeInput(consumed)
                self.lastActivity = MonotonicClock.now()
                self.handleLine(line)
            }
        }
    }

    private static let noidleLine = Array("noidle".utf8)
    private static let listBeginLine = Array("command_list_begin".utf8)
    private static let listOKBeginLine = Array("command_list_ok_begin".utf8)
    private static let listEndLine = Array("command_list_end".utf8)

    /// Dispatches one line in `mpd`'s order of checks.
    private func handleLine(_ line: [UInt8]) {
        guard let first = line.first, first >= UInt8(ascii: "a") && first <= UInt8(ascii: "z") else {
            // Not a request at all (empty line, leading blank, upper case, HTTP…): close without a word.
            self.connection.closeNow()
            return
        }
        if line == Self.noidleLine {
            if self.isIdle {
                self.idleSubscription = nil
                self.connection.write("OK\n")
                self.lastActivity = MonotonicClock.now()
                self.armTimeout()
            }
            return
        }
        if self.isIdle {
            self.connection.closeNow()
            return
        }
        if self.listMode != .none {
            if line == Self.listEndLine {
                self.runList()
                return
            }
            self.listSize += line.count + 1
            if self.listSize > self.server.options.maxCommandListSize {
                self.server.logger.info("command list too large, closing", ["client": "\(self.id)"])
                self.connection.closeNow()
                return
            }
            self.listLines.append(line)
            return
        }
        if line == Self.listBeginLine {
            self.beginList(.plain)
        } else if line == Self.listOKBeginLine {
            self.beginList(.ok)
        } else {
            switch self.run(line: line, index: 0) {
            case .success(.ok):
                self.connection.write("OK\n")
            case .success(let other):
                self.perform(other)
            case .failure:
                break
            }
            self.checkOutputBound()
        }
    }

    private func beginList(_ mode: ListMode) {
        self.listMode = mode
        self.listLines = []
        self.listSize = 0
    }

    private func runList() {
        let lines = self.listLines
        let okMode = self.listMode == .ok
        self.listMode = .none
        self.listLines = []
        self.listSize = 0
        self.runList(lines, from: 0, okMode: okMode)
    }

    /// Runs a command list's lines from `start`; a deferred command suspends it (`resumeList`).
    private func runList(_ lines: [[UInt8]], from start: Int, okMode: Bool) {
        for index in start..<lines.count {
            switch self.run(line: lines[index], index: index) {
            case .success(.deferred(let reply)):
                self.pendingList = (lines, index + 1, okMode)
                self.startDeferred(reply, index: index)
                return
            case .success(let result):
                guard self.listItemSucceeded(result, okMode: okMode) else { return }
            case .failure:
                self.checkOutputBound()
                return
            }
        }
        self.connection.write("OK\n")
    }

    /// Replies to a list item that succeeded; whether the list goes on.
    private func listItemSucceeded(_ result: CommandResult, okMode: Bool) -> Bool {
        switch result {
        case .ok:
            break
        case .stream(let stream):
            // Inside a list the reply is produced whole, as mpd produces every reply.
            while stream.next() {}
        default:
            // idle, close and kill end the list: no final OK.
            self.perform(result)
            return false
        }
        if okMode { self.connection.write("list_OK\n") }
        self.checkOutputBound()
        return !self.connection.isClosed
    }

    // MARK: - Deferred replies

    /// Runs `reply`'s work on a thread of its own and reads no further request until it is done.
    private func startDeferred(_ reply: DeferredReply, index: Int) {
        self.deferred = (reply, index)
        self.connection.isReadingPaused = true
        let bound = LoopBound(self, loop: self.server.loop)
        let (work, cancellation) = (reply.work, reply.cancellation)
        NamedThread.detach("command") {
            let value = work(cancellation)
            bound.execute { client in client.finishDeferred(value) }
        }
    }

    /// The deferred command's work is done: reply as the command would have, then go on with the command list
    /// it interrupted and the requests that wait.
    private func finishDeferred(_ value: any Sendable) {
        guard let (reply, index) = self.deferred else { return }
        self.deferred = nil
        let list = self.pendingList
        self.pendingList = nil
        guard !self.connection.isClosed else { return }
        var context = CommandContext(client: self, server: self.server, arguments: [])
        if reply.isBackground {
            // mpd's background command: the rest of the list is dropped, its error names no command.
            do throws(AckError) {
                self.perform(try reply.finish(value, &context))
            } catch {
                self.write(error.line(index: 0, command: "") + "\n")
            }
            self.checkOutputBound()
            self.processInput()
            return
        }
        do throws(AckError) {
            let result = try reply.finish(value, &context)
            if let list {
                if self.listItemSucceeded(result, okMode: list.okMode) {
                    self.runList(list.lines, from: list.next, okMode: list.okMode)
                }
            } else {
                self.perform(result)
            }
        } catch {
            self.write(error.line(index: index, command: reply.commandName) + "\n")
        }
        self.checkOutputBound()
        self.processInput()
    }

    private struct Failed: Error {}

    /// Tokenizes and runs one command, writing its ACK on failure.
    private func run(line: [UInt8], index: Int) -> Result<CommandResult, Failed> {
        let request: Tokenizer.Request
        do {
            request = try Tokenizer.tokenize(line)
        } catch {
            self.connection.write(error.ack.line(index: index, command: "") + "\n")
            if error == .invalidWordCharacter { self.connection.closeAfterFlushing() }
            return .failure(Failed())
        }
        guard let command = self.server.commands.lookup(request.name) else {
            let ack = AckError(.unknown, "unknown command \"\(request.name)\"")
            self.connection.write(ack.line(index: index, command: "") + "\n")
            return .failure(Failed())
        }
        do throws(AckError) {
            guard self.permissions.isSuperset(of: command.permission) else {
                throw AckError(.permission, "you don't have permission for \"\(command.name)\"")
            }
            try command.checkArgumentCount(request.arguments.count)
            var context = CommandContext(client: self, server: self.server, arguments: request.arguments)
            let result = try command.handler(&context)
            if case .deferred(let reply) = result { reply.commandName = command.name }
            return .success(result)
        } catch {
            self.write(error.line(index: index, command: command.name) + "\n")
            return .failure(Failed())
        }
    }

    /// Produces stream pieces while the client keeps up; writes `OK` when the stream ends.
    /// How much of a streamed reply one turn produces before the session yields to the other clients (the
    /// connection resumes it after the loop's other ready work), so many large replies at once still
    /// leave every client's next request a short wait.
    static let streamQuantum = 16 * 1024

    private func pumpStream() {
        let quantum = min(self.connection.lowWaterMark, self.connection.pendingOutputCount + Self.streamQuantum)
        while let stream = self.stream, !self.connection.isClosed {
            if self.connection.pendingOutputCount >= quantum { return }
            if !stream.next() {
                self.stream = nil
                self.connection.write("OK\n")
            }
        }
    }

    private func perform(_ result: CommandResult) {
        switch result {
        case .ok:
            self.connection.write("OK\n")
        case .stream(let stream):
            // Produced as the client reads; `pumpStream` writes the OK.
            self.stream = stream
            self.pumpStream()
        case .idle(let mask):
            self.idleSubscription = mask
            self.cancelTimeout()
            self.deliverIdle()
        case .close:
            self.connection.closeAfterFlushing()
        case .kill:
            self.server.kill()
        case .deferred(let reply):
            self.startDeferred(reply, index: 0)
        }
    }

    /// `mpd` drops a client whose queued output outgrows `max_output_buffer_size`.
    private func checkOutputBound() {
        // A streamed reply is bounded by its producer (one piece past the low-water mark), not by this.
        guard self.stream == nil, self.connection.pendingOutputCount > self.server.options.maxOutputBufferSize
        else { return }
        self.server.logger.warning("output buffer full, closing", ["client": "\(self.id)"])
        self.connection.closeNow()
    }

    // MARK: - Idle

    /// Records `events` and answers a waiting `idle` that subscribed to any of them.
    func notify(_ events: IdleMask) {
        self.pendingIdle.formUnion(events)
        self.deliverIdle()
    }

    private func deliverIdle() {
        guard let subscription = self.idleSubscription, !self.connection.isClosed else { return }
        let hits = self.pendingIdle.intersection(subscription)
        guard !hits.isEmpty else { return }
        for event in hits.events { self.connection.write("changed: \(event.name)\n") }
        self.connection.write("OK\n")
        // mpd 0.23 clears every pending event here, not only the ones it printed.
        self.pendingIdle = []
        self.idleSubscription = nil
        self.lastActivity = MonotonicClock.now()
        self.armTimeout()
        self.connection.flush()
    }

    // MARK: - Timeout

    private func armTimeout() {
        guard self.timeoutTimer == nil, !self.isIdle, !self.connection.isClosed else { return }
        let timeout = UInt64(self.server.options.connectionTimeoutSeconds * 1e9)
        self.timeoutTimer = self.server.loop.schedule(at: self.lastActivity + timeout) { [weak self] in
            guard let self else { return }
            self.timeoutTimer = nil
            self.checkTimeout(timeout)
        }
    }

    private func checkTimeout(_ timeout: UInt64) {
        guard !self.connection.isClosed, !self.isIdle else { return }
        if MonotonicClock.now() >= self.lastActivity + timeout {
            self.server.logger.info("connection timed out", ["client": "\(self.id)"])
            self.connection.closeNow()
        } else {
            self.armTimeout()
        }
    }

    private func cancelTimeout() {
        if let timer = self.timeoutTimer { self.server.loop.cancel(timer) }
        self.timeoutTimer = nil
    }

    /// Whether this client may read a local file outside the music directory, as `mpd` decides: a local client
    /// running as the daemon's user, or owning the file, or the file readable by everyone.
    ///
    /// - Throws: `Access denied` (4); `Failed to access PATH: …` (52) when it cannot be examined.
    func allowFile(_ path: String) throws(AckError) {
        guard let uid = self.connection.peerUserID else { throw AckError(.permission, "Access denied") }
        if uid == geteuid() { return }
        let status: FileStatus
        do {
            status = try FileStatus(path: path)
        } catch {
            throw AckError(.system, "Failed to access \(path): \(error.errno)")
        }
        if status.owner != uid && status.mode & 0o444 != 0o444 { throw AckError(.permission, "Access denied") }
    }

    /// Closes the connection at once (shutdown).
    func close() { self.connection.closeNow() }
}
