// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import MPDProtocol
import Posix

/// What a command asks the session to do after it ran without error.
public enum CommandResult {
    /// Reply `OK` (or `list_OK` inside an OK-list).
    case ok
    /// Enter idle, waiting for one of these subsystems.
    case idle(IdleMask)
    /// Send nothing more and close the connection once pending output is written (`close`).
    case close
    /// Send nothing and stop the daemon (`kill`).
    case kill
    /// A large reply, produced piece by piece as the client reads it, then `OK`.
    case stream(ReplyStream)
    /// A reply that needs work off the loop first (reading a remote playlist): the client reads no further
    /// request until it is done.
    case deferred(DeferredReply)
}

/// A command's reply that waits for blocking work (network I/O) done on a thread of its own, or on a
/// `SerialWorker` (short file I/O), so the loop never waits: `work` runs off the loop, then `finish` turns its
/// value into the reply on the loop, as the command would have. Cancelled when the client goes away.
///
/// Loop-confined, apart from `work`.
public final class DeferredReply {
    /// Cancels what `work` reads when the client closes the connection.
    let cancellation = InputCancellation()
    /// The command's name, for its `ACK` (set by the session).
    var commandName = ""
    let work: @Sendable (InputCancellation) -> any Sendable
    /// Runs `work` when set, after the jobs queued on it before; else `work` gets a thread of its own.
    let worker: SerialWorker?
    /// When set, started on the loop instead of `work`: it calls its argument (from any thread) with the value,
    /// once, when what it started is done (a change of the library's snapshot, done by the library's own worker).
    let begin: ((@escaping @Sendable (any Sendable) -> Void) -> Void)?
    let finish: (any Sendable, inout CommandContext) throws(AckError) -> CommandResult
    /// Whether it replies as `mpd`'s background commands (`getfingerprint`) do: its `ACK` names no command
    /// and counts from 0 whatever its place in a command list, and the rest of the list is dropped (its reply
    /// ends with `OK`, with no `list_OK` for it).
    let isBackground: Bool
    /// Whether idle events wait for it: `mpd`'s main thread waits for its player thread during the commands the
    /// outputs carry out (`pause`, `stop`, `enableoutput`…), so no idle event reaches anyone meanwhile, and the
    /// events of the requests read with it (`pause 0` then `pause 1`) reach a waiting client as one reply.
    let holdsIdle: Bool

    /// A reply made by `finish` from the value `work` produces (on `worker` when given).
    init<Value: Sendable>(
        isBackground: Bool = false, worker: SerialWorker? = nil,
        work: @escaping @Sendable (InputCancellation) -> Value,
        finish: @escaping (Value, inout CommandContext) throws(AckError) -> CommandResult
    ) {
        self.isBackground = isBackground
        self.holdsIdle = false
        self.worker = worker
        self.work = { work($0) }
        self.begin = nil
        self.finish = Self.finishing(finish)
    }

    /// A reply made by `finish` from the value that what `begin` starts (on the loop) hands to its argument when
    /// it is done; no thread of its own waits for it. With `holdsIdle`, idle events wait for it.
    init<Value: Sendable>(
        holdsIdle: Bool = false,
        begin: @escaping (@escaping @Sendable (Value) -> Void) -> Void,
        finish: @escaping (Value, inout CommandContext) throws(AckError) -> CommandResult
    ) {
        self.isBackground = false
        self.holdsIdle = holdsIdle
        self.worker = nil
        self.work = { _ in () }
        self.begin = { done in begin { value in done(value) } }
        self.finish = Self.finishing(finish)
    }

    private static func finishing<Value: Sendable>(
        _ finish: @escaping (Value, inout CommandContext) throws(AckError) -> CommandResult
    ) -> (any Sendable, inout CommandContext) throws(AckError) -> CommandResult {
        { value, context throws(AckError) in
            // `work` or `begin` made the value: it is a `Value`.
            guard let value = value as? Value else { preconditionFailure("a deferred reply's value changed type") }
            return try finish(value, &context)
        }
    }
}

/// A reply produced in pieces, so a huge listing never sits whole in memory: the session asks for the
/// next piece only when the client has read most of the previous ones.
///
/// Loop-confined.
public final class ReplyStream {
    private let produce: () -> Bool
    /// For a reply `mpd` buffers whole before sending any of it (``sized(from:to:sink:quickBound:bound:fill:)``): a
    /// quick and loose upper bound of its size (`nil` when it has none), a cheap and closer one, and its exact size.
    /// Taken by ``takeSize(room:)``.
    private var quickBound: (() -> Int?)?
    private var bound: (() -> Int)?
    private var size: (() -> Int)?

    /// Creates a stream; `produce` writes one piece and returns whether more remain.
    init(_ produce: @escaping () -> Bool) {
        self.produce = produce
    }

    /// Writes the next piece; returns whether more remain.
    func next() -> Bool { self.produce() }

    /// For a stream that `mpd` would have buffered whole and that must not outgrow `max_output_buffer_size`, its
    /// size as the limit needs it (taken once, before the first piece): the first of its upper bounds, from the
    /// quickest, that leaves more than a little of `room`, else the exact size (the reply made once and dropped, a
    /// pass as long as the reply's own). `nil` for a listing that streams past that limit, or once taken.
    func takeSize(room: Int) -> Int? {
        defer {
            self.quickBound = nil
            self.bound = nil
            self.size = nil
        }
        guard let bound = self.bound, let size = self.size else { return nil }
        if let quick = self.quickBound?(), quick + 64 <= room { return quick }
        let estimate = bound()
        return estimate + 64 <= room ? estimate : size()
    }

    /// A reply that `mpd` buffers whole (the queue's listings), streamed in pieces of about 64 KiB made in the sink's
    /// buffer: `fill(index, &reply, bytes)` appends the elements from `index` on until `reply` holds `bytes` or
    /// the elements end at `end`, and returns where it stopped (`reply.bytes` may begin with output queued
    /// before). `bound` gives at least its size, cheaply, and
    /// `quickBound`, when it gives one, a looser bound with no look at each element. Before anything is sent its
    /// size is checked (``takeSize(room:)``), so that a reply that would outgrow the output buffer limit drops the
    /// client with nothing of it sent, as `mpd` does.
    static func sized<Index: Equatable>(
        from start: Index, to end: Index, sink: any ReplySink, quickBound: (() -> Int?)? = nil,
        bound: @escaping () -> Int, fill: @escaping (Index, inout ReplyBuffer, Int) -> Index
    ) -> ReplyStream {
        let piece = 1 << 16
        var reply = ReplyBuffer()
        var index = start
        // `fill` appends after the output queued before, up to a piece more; no more once the sink takes none.
        let stream = ReplyStream {
            var more = false
            sink.append(through: &reply) { reply in
                index = fill(index, &reply, reply.bytes.count + piece)
                more = index != end
            }
            return more
        }
        stream.quickBound = quickBound
        stream.bound = bound
        stream.size = {
            var scratch = ReplyBuffer()
            var total = 0
            var at = start
            while at != end {
                scratch.removeAll()
                at = fill(at, &scratch, piece)
                total += scratch.bytes.count
            }
            return total
        }
        return stream
    }

    /// Streams what `fill(&reply, size)` appends to `sink`, about 64 KiB at a time: `fill` appends until `reply`
    /// holds `size` bytes or there is no more, and returns whether more remain. The pieces are made in the sink's
    /// own buffer (``ReplySink/appendInPlace(_:)``), not copied there; the line caches of `reply` are kept from
    /// piece to piece.
    static func pieces(sink: any ReplySink, fill: @escaping (inout ReplyBuffer, Int) -> Bool) -> ReplyStream {
        var reply = ReplyBuffer()
        return ReplyStream {
            var more = false
            sink.append(through: &reply) { reply in more = fill(&reply, reply.bytes.count + (1 << 16)) }
            return more
        }
    }

    /// Streams `count` items to `sink`, `chunk` at a time: `append` appends a chunk's lines, a piece of
    /// ``pieces(sink:fill:)`` (`reply.bytes` may begin with output queued before, so its count is not the chunk's
    /// size).
    static func chunked(
        count: Int, chunk: Int = 64, sink: any ReplySink, append: @escaping (Range<Int>, inout ReplyBuffer) -> Void
    ) -> ReplyStream {
        var position = 0
        return Self.pieces(sink: sink) { reply, _ in
            let end = min(position + chunk, count)
            if position < end { append(position..<end, &reply) }
            position = end
            return position < count
        }
    }
}

/// One entry of the command table: the wire name, the permission it needs, its argument counts and
/// its handler.
public struct Command: Sendable {
    /// The name on the wire.
    public let name: String
    /// The permission a client needs to run it (empty: everyone).
    public let permission: Permission
    /// The fewest arguments, or `nil` for no check.
    public let minimumArguments: Int?
    /// The most arguments, or `nil` for no limit.
    public let maximumArguments: Int?
    /// Runs the command on the loop thread.
    let handler: @Sendable (inout CommandContext) throws(AckError) -> CommandResult
    /// Whether `commands` lists it with the server's configuration (`mpd` hides `sticker` without a
    /// sticker database and the stored-playlist commands without a playlist directory; they still run).
    private(set) var isAvailable: @Sendable (SharedServices) -> Bool = { _ in true }

    init(
        _ name: String, _ permission: Permission, _ minimum: Int?, _ maximum: Int?,
        _ handler: @escaping @Sendable (inout CommandContext) throws(AckError) -> CommandResult
    ) {
        self.name = name
        self.permission = permission
        self.minimumArguments = minimum
        self.maximumArguments = maximum
        self.handler = handler
    }

    /// The same command, listed by `commands` only while `condition` holds.
    func available(when condition: @escaping @Sendable (SharedServices) -> Bool) -> Command {
        var command = self
        command.isAvailable = condition
        return command
    }

    /// Checks the argument count, with `mpd`'s texts.
    func checkArgumentCount(_ count: Int) throws(AckError) {
        let minimum = self.minimumArguments ?? 0
        if let maximum = self.maximumArguments, minimum == maximum, count != minimum {
            throw AckError(.arg, "wrong number of arguments for \"\(self.name)\"")
        }
        if count < minimum { throw AckError(.arg, "too few arguments for \"\(self.name)\"") }
        if let maximum = self.maximumArguments, count > maximum {
            throw AckError(.arg, "too many arguments for \"\(self.name)\"")
        }
    }
}

/// What a handler sees: its arguments, where its reply goes, the services of the client's partition, the services
/// every client shares and the client's own settings.
///
/// Nothing else: no handler reaches the client or the server behind them.
public struct CommandContext {
    /// The command's arguments.
    public let arguments: [String]
    /// Where the reply goes.
    let reply: any ReplySink
    /// The services of the client's partition.
    let partition: Partition
    /// The services every client shares: settings, log, music and sticker databases.
    let services: SharedServices
    /// The client's own settings: permissions, tag mask, binary limit, subscriptions, messages.
    let session: SessionSettings

    /// The context of a command `client` runs with `arguments`, in the client's partition.
    init(client: Client, server: Server, arguments: [String]) {
        self.init(
            arguments: arguments, reply: client, partition: client.partition, services: server.services,
            session: client.settings)
    }

    /// A context of its own parts: a test's, with a buffer for the reply.
    init(
        arguments: [String], reply: any ReplySink, partition: Partition, services: SharedServices,
        session: SessionSettings
    ) {
        self.arguments = arguments
        self.reply = reply
        self.partition = partition
        self.services = services
        self.session = session
    }

    /// Appends `key: value\n` to the reply.
    func write(_ key: String, _ value: some CustomStringConvertible) {
        self.reply.write("\(key): \(value)\n")
    }

    /// Appends raw text to the reply.
    func write(raw text: String) {
        self.reply.write(text)
    }
}
