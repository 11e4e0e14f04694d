// SPDX-License-Identifier: GPL-3.0-or-later

import EventLoop
import Posix

/// A listening socket registered with the event loop, handing each accepted connection to a callback.
///
/// Loop-confined: create, use and close it on the loop thread.
public final class Listener {
    /// The address the socket is bound to (with the real port when 0 was asked for).
    public let address: SocketAddress
    private let fd: FileDescriptor
    private let loop: EventLoop
    private var registration: EventLoop.Registration?
    private let onAccept: (FileDescriptor, SocketAddress?) -> Void
    private let onError: (SystemCallError) -> Void
    private var isClosed = false

    /// Binds and listens on `address`, then registers with `loop`.
    ///
    /// - Parameters:
    ///   - onAccept: called on the loop for each accepted socket (non-blocking, close-on-exec) and its peer.
    ///   - onError: called on the loop when `accept` fails for a reason other than "nothing pending".
    /// - Throws: `SystemCallError` (e.g. `EADDRINUSE` from `bind`) or `SocketAddressError`.
    public convenience init(
        loop: EventLoop, address: SocketAddress,
        onAccept: @escaping (FileDescriptor, SocketAddress?) -> Void,
        onError: @escaping (SystemCallError) -> Void
    ) throws {
        let fd = try Socket.listen(on: address)
        try self.init(loop: loop, listening: fd, onAccept: onAccept, onError: onError)
        self.removesSocketFile = true
    }

    /// Registers a socket bound earlier by ``BoundSocket/listen(on:)`` (before the process gave up root); closing
    /// the listener removes its Unix socket file, as for one it bound itself.
    ///
    /// - Throws: `SystemCallError` from making it non-blocking or registering it.
    public convenience init(
        loop: EventLoop, bound: BoundSocket,
        onAccept: @escaping (FileDescriptor, SocketAddress?) -> Void,
        onError: @escaping (SystemCallError) -> Void
    ) throws {
        try self.init(loop: loop, listening: bound.fd, onAccept: onAccept, onError: onError)
        self.removesSocketFile = bound.removesSocketFile
    }

    /// Adopts an already listening socket (for example one passed by systemd).
    ///
    /// - Throws: `SystemCallError` from making it non-blocking or registering it.
    public init(
        loop: EventLoop, listening fd: FileDescriptor,
        onAccept: @escaping (FileDescriptor, SocketAddress?) -> Void,
        onError: @escaping (SystemCallError) -> Void
    ) throws {
        loop.preconditionOnLoop()
        self.fd = fd
        self.loop = loop
        self.onAccept = onAccept
        self.onError = onError
        try fd.setNonBlocking()
        try fd.setCloseOnExec()
        self.address = (try? Socket.localAddress(fd)).flatMap { $0 } ?? .unix(path: "")
        self.registration = try loop.register(fd, events: .input) { [unowned self] _ in self.acceptAll() }
    }

    deinit {
        assert(self.isClosed, "Listener for \(self.address) was not closed")
    }

    private func acceptAll() {
        // Bounded, so one busy listener cannot starve every connection behind it in the loop.
        for _ in 0..<64 {
            do {
                switch try Socket.accept(self.fd) {
                case .wouldBlock:
                    return
                case .processed(let (client, peer)):
                    self.onAccept(client, peer)
                }
            } catch {
                if error.errno == .connectionAborted { continue }
                self.onError(error)
                if error.errno == .tooManyOpenFiles || error.errno == .tooManyOpenFilesInSystem {
                    // Out of descriptors: stop accepting for a moment instead of spinning on a readable listener.
                    self.pause(seconds: 0.1)
                }
                return
            }
        }
    }

    private func pause(seconds: Double) {
        guard let registration = self.registration else { return }
        self.loop.modify(registration, events: [])
        self.loop.schedule(afterSeconds: seconds) { [weak self] in
            guard let self, !self.isClosed, let registration = self.registration else { return }
            self.loop.modify(registration, events: .input)
        }
    }

    /// Whether `close()` removes a Unix socket's file: only for sockets this listener bound itself. An adopted
    /// socket's file belongs to whoever made it (systemd re-uses it for the next activation).
    private var removesSocketFile = false

    /// Stops listening and closes the socket; the file of a Unix socket it bound itself is removed.
    public func close() {
        guard !self.isClosed else { return }
        self.isClosed = true
        if let registration { self.loop.deregister(registration) }
        self.registration = nil
        self.fd.close()
        if self.removesSocketFile, case .unix(let path) = self.address, !path.isEmpty { _ = unlinkPath(path) }
    }
}

/// A listening socket not yet registered with a loop: bound by this process (``listen(on:)``) or passed by systemd
/// (``adopt(_:)``). The daemon binds its addresses while it still has the privileges a port below 1024 needs, then
/// gives them to the server (``Listener/init(loop:bound:onAccept:onError:)``). A value type; any thread.
public struct BoundSocket: Sendable {
    /// The listening socket.
    public let fd: FileDescriptor
    /// The address it is bound to (with the real port when 0 was asked for).
    public let address: SocketAddress
    /// Whether closing it removes its Unix socket file: only for sockets this process bound.
    public let removesSocketFile: Bool

    /// Binds and listens on `address`.
    ///
    /// - Throws: `SystemCallError` (e.g. `EADDRINUSE` from `bind`) or `SocketAddressError`.
    public static func listen(on address: SocketAddress) throws -> BoundSocket {
        let fd = try Socket.listen(on: address)
        return BoundSocket(
            fd: fd, address: (try? Socket.localAddress(fd)).flatMap { $0 } ?? address, removesSocketFile: true)
    }

    /// A socket passed already listening (systemd socket activation).
    public static func adopt(_ fd: FileDescriptor) -> BoundSocket {
        BoundSocket(
            fd: fd, address: (try? Socket.localAddress(fd)).flatMap { $0 } ?? .unix(path: ""), removesSocketFile: false)
    }

    /// Closes a socket that never became a ``Listener`` (start-up failed), removing its Unix socket file when this
    /// process bound it.
    public func close() {
        self.fd.close()
        if self.removesSocketFile, case .unix(let path) = self.address, !path.isEmpty { _ = unlinkPath(path) }
    }
}
