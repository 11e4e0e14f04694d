// SPDX-License-Identifier: GPL-3.0-or-later

import EventLoop
import Model
import Posix

/// What a `Connection` tells its owner. Every call happens on the loop thread.
public protocol ConnectionDelegate: AnyObject {
    /// New input arrived, or the peer ended its side (`inputEnded`). Consume what can be handled now.
    func connectionDidRead(_ connection: Connection)
    /// Pending output fell below the low-water mark: a paused producer may write more.
    func connectionDidDrain(_ connection: Connection)
    /// The connection is closed; the delegate should drop it.
    func connectionDidClose(_ connection: Connection)
}

/// A non-blocking stream socket with a bounded input buffer and a queued output buffer.
///
/// Reading stops while the input buffer is full or while the owner pauses it, so a client that sends
/// faster than we answer is held back by TCP rather than by our memory. Output is written as the
/// socket drains; the owner watches `pendingOutputCount` to stop producing.
///
/// Loop-confined: every method must be called on the loop thread.
public final class Connection {
    /// The peer's address.
    public let peer: SocketAddress?
    /// Whether the peer came in over a Unix-domain socket.
    public let isLocal: Bool
    /// The user id of a local (Unix-socket) peer, when the kernel tells it; `nil` for TCP peers.
    public let peerUserID: UInt32?
    /// A small number for logs, unique within the process.
    public let id: Int
    /// The delegate; held weakly.
    public weak var delegate: (any ConnectionDelegate)?

    /// Pending output above which owners should stop producing (bytes).
    public var lowWaterMark = 64 * 1024
    /// The socket send buffer asked for at first (the kernel doubles it for its bookkeeping).
    public static let sendBufferSize = 128 * 1024
    /// The largest send buffer asked for: the buffer doubles up to this each time a full one drained (the peer
    /// reads), as the kernel's auto-tuning would for a reader (up to 4 MiB), never for a peer that does not read.
    public static let largestSendBufferSize = 1024 * 1024

    private let fd: FileDescriptor
    private let loop: EventLoop
    /// The send buffer asked for now.
    private var currentSendBufferSize = Connection.sendBufferSize
    private var registration: EventLoop.Registration?

    private var input: [UInt8]
    private var inputStart = 0
    private var inputEnd = 0
    private var output: [UInt8] = []
    private var outputStart = 0

    private var closeAfterFlush = false
    private var dispatching = false
    private var resumeScheduled = false

    /// Whether the peer has closed its writing side (no more input will come).
    public private(set) var inputEnded = false
    /// Whether the connection is closed.
    public private(set) var isClosed = false
    /// Whether the owner has asked to stop reading.
    public var isReadingPaused = false {
        didSet { self.updateInterest() }
    }

    /// Wraps an accepted socket and registers it with `loop`.
    ///
    /// - Parameters:
    ///   - inputCapacity: the input buffer size; a peer can make us buffer no more than this.
    /// - Throws: `SystemCallError` from `epoll_ctl`; the socket is then closed.
    public init(
        loop: EventLoop, fd: FileDescriptor, peer: SocketAddress?, id: Int, inputCapacity: Int
    ) throws(SystemCallError) {
        loop.preconditionOnLoop()
        self.loop = loop
        self.fd = fd
        self.peer = peer
        self.isLocal = peer?.isLocal ?? true
        self.peerUserID = self.isLocal ? Socket.peerUserID(fd) : nil
        self.id = id
        self.input = [UInt8](repeating: 0, count: inputCapacity)
        if !self.isLocal {
            try? Socket.setNoDelay(fd)
        }
        // A send buffer of our own instead of the kernel's auto-tuning (up to 4 MiB): a client that stops reading
        // then costs at most this much kernel memory and reply production, not megabytes of each. It grows
        // while the client reads (`handle(_:)`).
        try? Socket.setSendBufferSize(fd, Self.sendBufferSize)
        do {
            self.registration = try loop.register(fd, events: [.input, .readHangUp]) { [unowned self] events in
                self.handle(events)
            }
        } catch {
            fd.close()
            self.isClosed = true
            throw error
        }
    }

    deinit {
        assert(self.isClosed, "Connection \(self.id) was not closed")
    }

    // MARK: - Input

    /// The unconsumed input bytes.
    public var inputBytes: ArraySlice<UInt8> { self.input[self.inputStart..<self.inputEnd] }

    /// Whether the input buffer has no free space left.
    public var isInputFull: Bool { self.inputStart == 0 && self.inputEnd == self.input.count }

    /// Drops `count` bytes from the front of the input.
    public func consumeInput(_ count: Int) {
        precondition(count <= self.inputEnd - self.inputStart)
        self.inputStart += count
        if self.inputStart == self.inputEnd {
            self.inputStart = 0
            self.inputEnd = 0
        }
    }

    // MARK: - Output

    /// The number of queued bytes not yet accepted by the kernel.
    public var pendingOutputCount: Int { self.output.count - self.outputStart }

    /// Queues bytes for the peer. Call `flush()` (or return from a delegate call) to send them.
    public func write(_ bytes: some Sequence<UInt8>) {
        guard !self.isClosed && !self.closeAfterFlush else { return }
        self.output.append(contentsOf: bytes)
    }

    /// Queues what `body` writes, at most `capacity` bytes (more traps), straight into the output buffer: a reply
    /// of megabytes made in place rather than built elsewhere and copied in.
    public func write(atMost capacity: Int, _ body: (inout ByteWriter) -> Void) {
        guard !self.isClosed && !self.closeAfterFlush else { return }
        self.output.append(writingAtMost: capacity, body)
    }

    /// Queues what `body` appends to the output buffer it is given, made there rather than elsewhere and copied
    /// in. `body` must only append (the bytes it finds are queued already, or sent) and must not call back into
    /// the connection, whose buffer it holds.
    public func appendInPlace(_ body: (inout [UInt8]) -> Void) {
        guard !self.isClosed && !self.closeAfterFlush else { return }
        let before = self.output.count
        body(&self.output)
        assert(self.output.count >= before, "appendInPlace's body removed queued output")
    }

    /// Queues a string's UTF-8 bytes.
    public func write(_ text: String) {
        guard !self.isClosed && !self.closeAfterFlush else { return }
        self.output.append(contentsOf: text.utf8)
    }

    /// Sends as much queued output as the socket takes now; waits for writability for the rest.
    public func flush() {
        guard !self.isClosed else { return }
        while self.pendingOutputCount > 0 {
            let result: IOResult<Int>
            do {
                result = try self.output.withUnsafeBytes { raw throws(SystemCallError) in
                    try Socket.send(self.fd, UnsafeRawBufferPointer(rebasing: raw[self.outputStart...]))
                }
            } catch {
                // EPIPE, ECONNRESET and the like: the peer is gone.
                self.closeNow()
                return
            }
            guard case .processed(let count) = result else { break }
            self.outputStart += count
        }
        if self.pendingOutputCount == 0 {
            self.output.removeAll(keepingCapacity: self.output.capacity <= 256 * 1024)
            self.outputStart = 0
            if self.closeAfterFlush {
                self.closeNow()
                return
            }
        } else if self.outputStart > 64 * 1024 && self.outputStart > self.output.count / 2 {
            self.output.removeFirst(self.outputStart)
            self.outputStart = 0
        }
        self.updateInterest()
    }

    // MARK: - Closing

    /// Stops reading, sends what is queued, then closes.
    public func closeAfterFlushing() {
        guard !self.isClosed else { return }
        self.closeAfterFlush = true
        self.updateInterest()
        if !self.dispatching { self.flush() }
    }

    /// Closes at once, discarding queued output.
    public func closeNow() {
        guard !self.isClosed else { return }
        self.isClosed = true
        if let registration { self.loop.deregister(registration) }
        self.registration = nil
        self.fd.close()
        self.output = []
        self.input = []
        self.inputStart = 0
        self.inputEnd = 0
        self.delegate?.connectionDidClose(self)
    }

    // MARK: - Events

    private func handle(_ events: Epoll.Events) {
        guard !self.isClosed else { return }
        if events.contains(.output) {
            // Writable again after a send filled the buffer: the client reads, so a bigger buffer lets a reply of
            // megabytes go in fewer turns (over fresh connections, whose receive windows start small, a server
            // that makes its reply quickly took a quarter longer with 128 KiB throughout).
            if self.currentSendBufferSize < Self.largestSendBufferSize {
                self.currentSendBufferSize *= 2
                try? Socket.setSendBufferSize(self.fd, self.currentSendBufferSize)
            }
            let wasAboveLowWater = self.pendingOutputCount >= self.lowWaterMark
            self.flush()
            if self.isClosed { return }
            if wasAboveLowWater && self.pendingOutputCount < self.lowWaterMark && !self.closeAfterFlush {
                self.dispatch { $0.connectionDidDrain(self) }
            }
        }
        if events.contains(.input) || events.contains(.readHangUp) || events.contains(.hangUp)
            || events.contains(.error)
        {
            self.readAvailable(events)
        }
    }

    private func readAvailable(_ events: Epoll.Events) {
        guard !self.isClosed && !self.closeAfterFlush && !self.inputEnded else {
            if events.contains(.error) || events.contains(.hangUp) { self.closeNow() }
            return
        }
        if self.inputEnd == self.input.count && self.inputStart > 0 {
            // Move the partial line to the front to make room.
            let count = self.inputEnd - self.inputStart
            for index in 0..<count { self.input[index] = self.input[self.inputStart + index] }
            self.inputStart = 0
            self.inputEnd = count
        }
        let free = self.input.count - self.inputEnd
        if free > 0 && !self.isReadingPaused {
            let result: IOResult<Int>
            do {
                result = try self.input.withUnsafeMutableBytes { raw throws(SystemCallError) in
                    try self.fd.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[self.inputEnd...]))
                }
            } catch {
                self.closeNow()
                return
            }
            switch result {
            case .wouldBlock:
                if events.contains(.error) || events.contains(.hangUp) {
                    self.closeNow()
                    return
                }
            case .processed(0):
                self.inputEnded = true
            case .processed(let count):
                self.inputEnd += count
            }
        }
        self.dispatch { $0.connectionDidRead(self) }
    }

    /// Calls the delegate, then flushes what it wrote in one go.
    ///
    /// When the delegate stopped because output piled up and the kernel then took all of it at once, no
    /// writability event will come to wake it: a resume is posted to the loop instead, after the other
    /// ready descriptors, so one client with a long pipeline cannot starve the rest. Only then: a delegate that
    /// paused with nothing to write (it waits for work of its own, a deferred reply) is not woken again and
    /// again while it waits.
    private func dispatch(_ body: (any ConnectionDelegate) -> Void) {
        guard let delegate = self.delegate else { return }
        self.dispatching = true
        body(delegate)
        self.dispatching = false
        guard !self.isClosed else { return }
        let hadOutput = self.pendingOutputCount > 0
        self.flush()
        if hadOutput && !self.isClosed && self.isReadingPaused && self.pendingOutputCount < self.lowWaterMark
            && !self.resumeScheduled
        {
            self.resumeScheduled = true
            LoopBound(self, loop: self.loop).execute { connection in
                connection.resumeScheduled = false
                guard !connection.isClosed else { return }
                connection.dispatch { $0.connectionDidDrain(connection) }
            }
        }
    }

    private func updateInterest() {
        guard let registration = self.registration, !self.isClosed else { return }
        var events: Epoll.Events = []
        let canRead = !self.isReadingPaused && !self.closeAfterFlush && !self.inputEnded && !self.isInputFull
        if canRead { events.insert([.input, .readHangUp]) }
        if self.pendingOutputCount > 0 { events.insert(.output) }
        self.loop.modify(registration, events: events)
    }
}
