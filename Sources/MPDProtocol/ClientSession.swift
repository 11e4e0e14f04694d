// SPDX-License-Identifier: GPL-3.0-or-later

/// One client session's protocol decisions, free of sockets: request lines, command results and idle events go
/// in, actions for the connection's owner come out.
///
/// It follows `mpd`'s order of checks for each line: a line that does not start with a lower-case letter closes
/// the connection; `noidle` leaves idle (and is ignored otherwise); any other line while idling closes the
/// connection; inside a command list every line but `command_list_end` is collected, up to
/// `max_command_list_size` bytes (each line counts its newline); `command_list_begin` and
/// `command_list_ok_begin` open a list; anything else is one command.
///
/// A list runs item by item: each success writes `list_OK` in an OK-list, the first failure writes its
/// `ACK [code@index]` and drops the rest (no final `OK`); `idle`, `close` and `kill` end the list without
/// one either. Queued output is measured after each reply, and a client whose output outgrows
/// `max_output_buffer_size` is dropped. A streamed reply (``Outcome/stream``) is produced as the client reads
/// it, or whole inside a list; one that `mpd` would buffer whole is sized first and dropped the same way; a deferred reply (``Outcome/deferred(isBackground:)``) suspends the session,
/// with the rest of its list, until its work is done; no request is read meanwhile. A deferred reply that
/// replies as `mpd`'s background commands do drops the rest of its list, and its `ACK` names no command and
/// counts from 0.
///
/// Every action that needs an answer comes last in its batch, and the owner answers it with the event its
/// documentation names before feeding anything else:
/// ``Action/execute(_:index:)`` with ``Event/executed(_:)``, ``Action/produceStream(whole:)`` with
/// ``Event/streamProduced(finished:)`` (or ``Event/streamSized(_:)``), ``Action/measureOutput`` with ``Event/outputMeasured(_:)``.
/// ``Action/startDeferred`` is answered later, with ``Event/deferredFinished(_:)``.
///
/// A value type without I/O; the owner confines it to one thread (the event loop).
public struct ClientSession {
    /// Something that happened.
    public enum Event: Equatable, Sendable {
        /// A request line, framed (see ``LineFramer``): stripped, without its newline. Fed only while
        /// ``acceptsInput``.
        case line([UInt8])
        /// The client sent more than the longest line allowed without a newline.
        case lineTooLong
        /// The client shut down its side and every line it sent has been handled.
        case inputEnded
        /// The command of the last ``Action/execute(_:index:)`` ran.
        case executed(Outcome)
        /// The owner produced the running stream as asked: entirely, or until the client has enough to read.
        case streamProduced(finished: Bool)
        /// Instead of producing the first piece of a stream that `mpd` would have buffered whole, the owner
        /// counted it: this many bytes would be queued for the client with the whole reply (what was queued
        /// already, and the reply without its final `OK`).
        case streamSized(Int)
        /// How many bytes of output are queued for the client (answers ``Action/measureOutput``).
        case outputMeasured(Int)
        /// The work of the deferred reply is done and its reply made.
        case deferredFinished(Outcome)
        /// These subsystems changed.
        case idleEvents(IdleMask)
        /// The client sent nothing for `connection_timeout` (armed by ``Action/restartTimeout``).
        case timedOut
    }

    /// What a command did, as the session needs to know it.
    public enum Outcome: Equatable, Sendable {
        /// It wrote its reply; it wants `OK` (or `list_OK`).
        case ok
        /// It failed with this error; `command` is the name its `ACK` shows (empty for an unknown command).
        case failed(AckError, command: String)
        /// Its reply is a stream the owner holds, produced piece by piece (``Action/produceStream(whole:)``),
        /// then `OK`.
        case stream
        /// Its reply waits for work the owner runs off the loop (``Action/startDeferred``).
        case deferred(isBackground: Bool)
        /// `idle`: wait for one of these subsystems.
        case idle(IdleMask)
        /// `close`.
        case close
        /// `kill`.
        case kill
    }

    /// What the owner must do, in order.
    public enum Action: Equatable, Sendable {
        /// Run this command (the `index`-th of its list, 0 outside one); answer with ``Event/executed(_:)``.
        case execute(Tokenizer.Request, index: Int)
        /// Queue reply text.
        case write(String)
        /// Send queued output now (an idle reply that no request is waiting on).
        case flush
        /// Produce the stream of the last ``Outcome/stream``: `whole` (inside a command list), or until the
        /// client has enough to read; answer with ``Event/streamProduced(finished:)``, or, before the first piece
        /// of a stream whose size counts against `max_output_buffer_size`, with ``Event/streamSized(_:)``.
        case produceStream(whole: Bool)
        /// Answer with ``Event/outputMeasured(_:)``.
        case measureOutput
        /// Start the work of the last ``Outcome/deferred(isBackground:)`` off the loop; answer with
        /// ``Event/deferredFinished(_:)`` when it is done.
        case startDeferred
        /// Stop the timeout (idle clients never time out).
        case stopTimeout
        /// Count `connection_timeout` from now.
        case restartTimeout
        /// Stop the daemon.
        case kill
        /// Close the connection; the session handles nothing more.
        case close(Closing)
    }

    /// Why the connection closes.
    public enum Closing: Equatable, Sendable {
        /// `close`.
        case requested
        /// The client closed its side.
        case inputEnded
        /// A command name with a character no command has (`Invalid word character`): `mpd` sends the `ACK`,
        /// then closes.
        case invalidWordCharacter
        /// A line that does not start with a lower-case letter (an empty line, an HTTP request…).
        case malformedLine
        /// A line other than `noidle` while idling.
        case commandDuringIdle
        /// A line longer than allowed.
        case lineTooLong
        /// A command list larger than `max_command_list_size`.
        case commandListTooLarge
        /// Queued output larger than `max_output_buffer_size`.
        case outputBufferFull
        /// No request for `connection_timeout`.
        case timedOut

        /// Whether queued output is sent before closing; otherwise it is discarded.
        public var flushesOutput: Bool {
            switch self {
            case .requested, .inputEnded, .invalidWordCharacter: true
            default: false
            }
        }
    }

    /// Where the session stands.
    public enum State: Equatable, Sendable {
        /// Waiting for a request.
        case ready
        /// Collecting a command list.
        case commandList(okMode: Bool)
        /// Running a command or a command list; waiting for the owner's answer.
        case running
        /// Waiting in `idle` for one of these subsystems.
        case idle(IdleMask)
        /// Producing a streamed reply as the client reads it.
        case streaming
        /// Waiting for a deferred reply's work.
        case deferred
        /// Closed; nothing more happens.
        case closing
    }

    /// The commands of a list, and whether it is an OK-list.
    private struct CommandList {
        var lines: [[UInt8]]
        var okMode: Bool
    }

    /// The command being answered: its list (none for a single command) and its index there.
    private struct Step {
        var list: CommandList?
        var index: Int
    }

    /// Where to go once queued output has been measured and found within bounds.
    private enum Next {
        case ready
        case idle(IdleMask)
        case list(CommandList, index: Int)
        case closing
    }

    private enum Phase {
        case ready
        case collecting(CommandList, size: Int)
        case idle(IdleMask)
        case executing(Step)
        /// `firstTurn`: the stream started in this turn, as part of its command's reply.
        case streaming(Step, firstTurn: Bool)
        case measuring(then: Next)
        case deferred(Step, isBackground: Bool)
        case closing
    }

    /// `max_command_list_size`, in bytes.
    public let maxCommandListSize: Int
    /// `max_output_buffer_size`, in bytes.
    public let maxOutputBufferSize: Int

    private var phase = Phase.ready
    /// Idle events that happened since this client last received an idle reply.
    public private(set) var pendingIdle: IdleMask = []

    /// A session in the ready state, with `mpd`'s limits (2 MiB lists, 8 MiB output by default).
    public init(maxCommandListSize: Int = 2048 * 1024, maxOutputBufferSize: Int = 8192 * 1024) {
        self.maxCommandListSize = maxCommandListSize
        self.maxOutputBufferSize = maxOutputBufferSize
    }

    /// Where the session stands.
    public var state: State {
        switch self.phase {
        case .ready: .ready
        case .collecting(let list, _): .commandList(okMode: list.okMode)
        case .idle(let mask): .idle(mask)
        case .executing, .measuring: .running
        case .streaming: .streaming
        case .deferred: .deferred
        case .closing: .closing
        }
    }

    /// Whether the owner may read and feed the next request line: not while a reply is being made.
    public var acceptsInput: Bool {
        switch self.phase {
        case .ready, .collecting, .idle: true
        case .executing, .streaming, .measuring, .deferred, .closing: false
        }
    }

    /// Whether the client waits in `idle`.
    public var isIdle: Bool {
        if case .idle = self.phase { return true }
        return false
    }

    /// Whether a streamed reply is being produced as the client reads it.
    public var isStreaming: Bool {
        if case .streaming = self.phase { return true }
        return false
    }

    /// Whether the session waits for a deferred reply's work.
    public var isDeferred: Bool {
        if case .deferred = self.phase { return true }
        return false
    }

    private static let noidle = Array("noidle".utf8)
    private static let listBegin = Array("command_list_begin".utf8)
    private static let listOKBegin = Array("command_list_ok_begin".utf8)
    private static let listEnd = Array("command_list_end".utf8)

    /// Feeds one event; returns what to do.
    public mutating func handle(_ event: Event) -> [Action] {
        if case .closing = self.phase { return [] }
        switch event {
        case .line(let line):
            return self.received(line)
        case .lineTooLong:
            return self.close(.lineTooLong)
        case .inputEnded:
            return self.close(.inputEnded)
        case .executed(let outcome):
            guard case .executing(let step) = self.phase else { return [] }
            return self.answer(step, outcome)
        case .streamProduced(let finished):
            guard case .streaming(let step, let firstTurn) = self.phase else { return [] }
            guard finished else {
                // Produced over several turns, it is bounded by its producer, not measured.
                self.phase = .streaming(step, firstTurn: false)
                return []
            }
            if step.list != nil { return self.succeeded(step) }
            self.phase = firstTurn ? .measuring(then: .ready) : .ready
            return firstTurn ? [.write("OK\n"), .measureOutput] : [.write("OK\n")]
        case .streamSized(let count):
            guard case .streaming = self.phase else { return [] }
            // mpd buffers the whole reply, its `OK` included, and drops the client before sending any of it.
            if count + "OK\n".utf8.count > self.maxOutputBufferSize { return self.close(.outputBufferFull) }
            return [.produceStream(whole: false)]
        case .outputMeasured(let count):
            guard case .measuring(let next) = self.phase else { return [] }
            if count > self.maxOutputBufferSize { return self.close(.outputBufferFull) }
            switch next {
            case .ready: self.phase = .ready
            case .idle(let mask): self.phase = .idle(mask)
            case .closing: self.phase = .closing
            case .list(let list, let index): return self.run(list, from: index)
            }
            return []
        case .deferredFinished(let outcome):
            guard case .deferred(let step, let isBackground) = self.phase else { return [] }
            guard isBackground else { return self.answer(step, outcome) }
            // mpd's background command: the rest of the list is dropped, its error names no command.
            if case .failed(let error, _) = outcome {
                return self.answer(Step(list: nil, index: 0), .failed(error, command: ""))
            }
            return self.answer(Step(list: nil, index: 0), outcome)
        case .idleEvents(let events):
            self.pendingIdle.formUnion(events)
            guard case .idle(let subscription) = self.phase else { return [] }
            let reply = self.idleReply(subscription)
            if !reply.isEmpty { self.phase = .ready }
            return reply
        case .timedOut:
            if case .idle = self.phase { return [] }
            return self.close(.timedOut)
        }
    }

    // MARK: - Lines

    /// Decides on one line in `mpd`'s order of checks.
    private mutating func received(_ line: [UInt8]) -> [Action] {
        // The owner reads no request while a reply is being made.
        guard self.acceptsInput else { return [] }
        guard let first = line.first, first >= UInt8(ascii: "a") && first <= UInt8(ascii: "z") else {
            return self.close(.malformedLine)
        }
        if line == Self.noidle {
            // Outside idle the client has had its idle reply already: nothing to say.
            guard case .idle = self.phase else { return [] }
            self.phase = .ready
            return [.write("OK\n"), .restartTimeout]
        }
        switch self.phase {
        case .idle:
            return self.close(.commandDuringIdle)
        case .collecting(var list, let size):
            if line == Self.listEnd { return self.run(list, from: 0) }
            let newSize = size + line.count + 1
            guard newSize <= self.maxCommandListSize else { return self.close(.commandListTooLarge) }
            // The phase lets go of the list first, so the append extends the lines in place: with the phase's
            // reference kept, each append copied every line before it (a 10k-line list cost 50M retains).
            self.phase = .ready
            list.lines.append(line)
            self.phase = .collecting(list, size: newSize)
            return []
        case .ready:
            if line == Self.listBegin || line == Self.listOKBegin {
                self.phase = .collecting(CommandList(lines: [], okMode: line == Self.listOKBegin), size: 0)
                return []
            }
            return self.execute(line, Step(list: nil, index: 0))
        case .executing, .streaming, .measuring, .deferred, .closing:
            return []
        }
    }

    /// Runs `list` from its `index`-th command; an empty rest ends it with `OK`.
    private mutating func run(_ list: CommandList, from index: Int) -> [Action] {
        guard index < list.lines.count else {
            self.phase = .ready
            return [.write("OK\n")]
        }
        return self.execute(list.lines[index], Step(list: list, index: index))
    }

    /// Tokenizes a command line and asks for it to be run, or answers its syntax error.
    private mutating func execute(_ line: [UInt8], _ step: Step) -> [Action] {
        do {
            let request = try Tokenizer.tokenize(line)
            self.phase = .executing(step)
            return [.execute(request, index: step.index)]
        } catch {
            let ack = Action.write(error.ack.line(index: step.index, command: "") + "\n")
            if error == .invalidWordCharacter {
                self.phase = .measuring(then: .closing)
                return [ack, .close(.invalidWordCharacter), .measureOutput]
            }
            self.phase = .measuring(then: .ready)
            return [ack, .measureOutput]
        }
    }

    // MARK: - Replies

    /// Replies as `step`'s command asks.
    private mutating func answer(_ step: Step, _ outcome: Outcome) -> [Action] {
        switch outcome {
        case .ok:
            return self.succeeded(step)
        case .failed(let error, let command):
            // In a list the rest is dropped, with no final OK.
            self.phase = .measuring(then: .ready)
            return [.write(error.line(index: step.index, command: command) + "\n"), .measureOutput]
        case .stream:
            self.phase = .streaming(step, firstTurn: true)
            return [.produceStream(whole: step.list != nil)]
        case .deferred(let isBackground):
            self.phase = .deferred(step, isBackground: isBackground)
            return [.startDeferred]
        case .idle(let mask):
            // It ends a command list, with no final OK.
            var actions: [Action] = [.stopTimeout]
            let reply = self.idleReply(mask)
            actions += reply
            let next = reply.isEmpty ? Next.idle(mask) : .ready
            if step.list == nil {
                self.phase = .measuring(then: next)
                actions.append(.measureOutput)
            } else if reply.isEmpty {
                self.phase = .idle(mask)
            } else {
                self.phase = .ready
            }
            return actions
        case .close:
            self.phase = .closing
            return [.close(.requested)]
        case .kill:
            // The daemon stops; the session goes on until it does, as a list ends here with no final OK.
            self.phase = .ready
            return [.kill]
        }
    }

    /// A command succeeded: `OK`, or `list_OK` in an OK-list and on with the list once output is measured.
    private mutating func succeeded(_ step: Step) -> [Action] {
        guard let list = step.list else {
            self.phase = .measuring(then: .ready)
            return [.write("OK\n"), .measureOutput]
        }
        self.phase = .measuring(then: .list(list, index: step.index + 1))
        return list.okMode ? [.write("list_OK\n"), .measureOutput] : [.measureOutput]
    }

    /// The reply to an `idle` on `subscription` if a subscribed event is pending: empty otherwise.
    private mutating func idleReply(_ subscription: IdleMask) -> [Action] {
        let hits = self.pendingIdle.intersection(subscription)
        guard !hits.isEmpty else { return [] }
        // mpd 0.23 clears every pending event here, not only the ones it prints.
        self.pendingIdle = []
        return hits.events.map { .write("changed: \($0.name)\n") } + [.write("OK\n"), .restartTimeout, .flush]
    }

    private mutating func close(_ reason: Closing) -> [Action] {
        self.phase = .closing
        return [.close(reason)]
    }
}
