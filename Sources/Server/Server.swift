// SPDX-License-Identifier: GPL-3.0-or-later

import EventLoop
import Library
import MPDProtocol
import Model
import Network
import Playback
import Posix
import Sticker

/// The MPD server: listeners, client sessions, the command table and idle fan-out.
///
/// Loop-confined: create it and call every method on the event loop thread.
public final class Server {
    /// The protocol version in the greeting: `mpd` 0.23.12 sends `0.23.5`.
    public static let protocolVersion = "0.23.5"

    /// The loop that owns every socket.
    public let loop: EventLoop
    /// The settings in force.
    public let options: ServerOptions
    let logger: Logger
    /// The clock of the connection timeout: the system's monotonic clock, or a test's.
    let clock: any PlaybackClock
    let commands: CommandTable
    let startTime = MonotonicClock.now()
    /// Every partition, `default` first.
    private(set) var partitions: PartitionList!
    /// The partition every client starts in, whose state the state file keeps.
    var defaultPartition: Partition { self.partitions.defaultPartition }
    /// Raises an idle event for every client (``SharedServices/emit(_:)``).
    private lazy var raiseForEveryone: (IdleEvent) -> Void = { [unowned self] event in self.emit(event) }
    /// Every connected client's settings (``SharedServices/allSessions``).
    private lazy var everySession: () -> [SessionSettings] = { [unowned self] in self.clients.values.map(\.settings) }
    /// The music database, when a music directory is configured.
    private(set) var library: LibraryService?
    /// The sticker database, when `sticker_file` is set; opened by `start()`.
    private(set) var stickers: StickerDatabase?
    /// The state file, when `state_file` is set; restored by `start()`.
    private(set) var stateFile: StateFileService?
    /// The services every client's commands share: made once, and again when `start()` opens the stickers.
    private(set) lazy var services = self.makeServices()
    /// The stored playlists' worker (``SharedServices/playlistWorker``), kept across remakes of `services`.
    private let playlistWorker = SerialWorker("playlists")

    private func makeServices() -> SharedServices {
        SharedServices(
            startTime: self.startTime, options: self.options, logger: self.logger, library: self.library,
            stickers: self.stickers, commands: self.commands, partitions: self.partitions, clock: self.clock,
            playlistWorker: self.playlistWorker, raise: self.raiseForEveryone, sessions: self.everySession)
    }

    private var listeners: [Listener] = []
    /// Idle events for every client raised and not yet delivered (see `emit`).
    private var pendingIdle: IdleMask = []
    /// Idle events for the clients of one partition raised and not yet delivered.
    private var pendingPartitionIdle: [ObjectIdentifier: IdleMask] = [:]
    private var idleDeliveryScheduled = false
    /// Whether a delivery found a reply holding idle events back (``releaseIdle()`` delivers them).
    private var idleHeld = false
    private(set) var clients: [Int: Client] = [:]
    private var nextClientID = 1
    private var onKill: () -> Void = {}

    /// Creates a server; nothing listens until `start()`.
    ///
    /// - Parameters:
    ///   - player: the player the default partition's queue drives (the real one, or a fake in tests), with every
    ///     configured output; loop-confined.
    ///   - newPlayer: makes the player of a partition `newpartition` adds, with no output (outputs join it
    ///     through `moveoutput`).
    ///   - clock: the clock of the connection timeout (a test's, or the system's).
    ///   - onKill: runs on the loop when a client sends `kill`.
    public init(
        loop: EventLoop, options: ServerOptions, logger: Logger, player: any PlayerControl,
        newPlayer: @escaping () -> any PlayerControl, clock: any PlaybackClock = SystemClock(),
        onKill: @escaping () -> Void = {}
    ) {
        loop.preconditionOnLoop()
        self.loop = loop
        self.options = options
        self.logger = logger
        self.clock = clock
        self.commands = CommandTable.standard
        self.onKill = onKill
        self.partitions = PartitionList(default: self.makePartition(name: "default", player: player)) {
            [unowned self] name in self.makePartition(name: name, player: newPlayer())
        }
        if let library = options.library {
            let service = LibraryService(
                configuration: .init(
                    updater: library.updater, databaseFile: library.databaseFile, metadata: options.metadataToUse,
                    compress: library.compressDatabaseFile, hidePlaylistTargets: library.hidePlaylistTargets,
                    autoUpdate: library.autoUpdate, autoUpdateDepth: library.autoUpdateDepth,
                    cacheDirectory: library.cacheDirectory),
                loop: loop, logger: logger)
            service.onEvent = { [unowned self] event in self.libraryReported(event) }
            self.library = service
        }
        if let stateFile = options.stateFile { self.stateFile = StateFileService(options: stateFile, server: self) }
    }

    /// A partition named `name` with an empty queue driving `player`.
    private func makePartition(name: String, player: any PlayerControl) -> Partition {
        let musicDirectory = self.options.musicDirectory ?? ""
        let playlist = Playlist(
            queue: Queue(maximumLength: self.options.maxPlaylistLength), player: player,
            resolvePath: { [unowned self] uri in
                // A song of a mounted storage is opened from the storage (`MOUNT/path` → the storage's URI).
                if let mounted = self.library?.mountedURI(for: uri) { return mounted }
                return uri.hasPrefix("/") || musicDirectory.isEmpty || URIScheme.hasScheme(uri)
                    ? uri : musicDirectory + "/" + uri
            })
        playlist.replayGainMode = self.options.replayGainMode
        let partition = Partition(name: name, playlist: playlist) { [unowned self] event, partition in
            self.emit(event, in: partition)
        }
        playlist.onChange = { [unowned self, unowned partition] changes in
            self.playlistChanged(changes, in: partition)
        }
        return partition
    }

    /// The addresses the server listens on (ports resolved).
    public var boundAddresses: [SocketAddress] { self.listeners.map(\.address) }

    /// The number of connected clients.
    public var clientCount: Int { self.clients.count }

    /// Binds every configured address, or adopts the listening sockets systemd passed instead (socket activation:
    /// the configured addresses are then ignored, as in `mpd`), then starts as ``start(listening:)`` does.
    ///
    /// - Parameter inherited: listening sockets handed over by systemd (`LISTEN_FDS`).
    /// - Throws: `StartError` naming the sticker file or the address that could not be bound.
    public func start(inherited: [FileDescriptor] = []) throws(StartError) {
        try self.start(listening: Self.bind(self.options, inherited: inherited))
    }

    /// Opens the sticker database, loads the database, listens on `sockets`, then restores the state file.
    ///
    /// As in `mpd`, a sticker database that cannot be opened stops the start (the sockets are closed).
    /// - Parameter sockets: what ``bind(_:inherited:)`` returned, maybe before the process gave up root.
    /// - Throws: `StartError` naming the sticker file or a socket that could not be registered.
    public func start(listening sockets: [BoundSocket]) throws(StartError) {
        if let path = self.options.stickerFile {
            do {
                self.stickers = try StickerDatabase(path: path)
                self.services = self.makeServices()
            } catch {
                for socket in sockets { socket.close() }
                throw StartError(failure: error.message)
            }
        }
        // The database is loaded before the first client is accepted.
        self.library?.start()
        for (index, socket) in sockets.enumerated() {
            do {
                try self.listen(on: socket)
            } catch {
                self.stopListening()
                for rest in sockets[(index + 1)...] { rest.close() }
                throw StartError(failure: "Failed to listen on '\(socket.address)': \(error)")
            }
        }
        // As mpd: after the database, before the first client (the loop has not run yet).
        self.stateFile?.restore()
    }

    /// Binds every address `options` lists (every interface when none), or adopts `inherited` instead when systemd
    /// passed sockets. Needs no server: the daemon calls it while it may still be root.
    ///
    /// As `mpd` binds them (``ListenAddress/bind(_:warning:)``): the addresses one setting resolves to succeed
    /// together when one of them binds, the others' failures passed to `warning`.
    /// - Throws: `StartError`, in `mpd`'s words: which setting did not resolve (``StartError/listenIndex``), or which
    ///   address could not be bound; nothing stays bound.
    public static func bind(
        _ options: ServerOptions, inherited: [FileDescriptor], warning: (String) -> Void = { _ in }
    ) throws(StartError) -> [BoundSocket] {
        if !inherited.isEmpty { return inherited.map(BoundSocket.adopt) }
        let addresses =
            options.listenAddresses.isEmpty ? [ListenAddress.any(port: options.port)] : options.listenAddresses
        do {
            return try ListenAddress.bind(addresses, warning: warning)
        } catch {
            if case .unresolved(let index, let message) = error {
                throw StartError(listenIndex: options.listenAddresses.isEmpty ? nil : index, reason: message)
            }
            throw StartError(failure: error.description)
        }
    }

    /// Registers a bound socket with the loop.
    ///
    /// - Throws: `SystemCallError` if it cannot be registered.
    private func listen(on socket: BoundSocket) throws {
        let listener = try Listener(
            loop: self.loop, bound: socket,
            onAccept: { [unowned self] fd, peer in self.accept(fd, peer: peer) },
            onError: { [unowned self] error in self.logger.error("accept failed", ["error": "\(error)"]) })
        self.listeners.append(listener)
        self.logger.info(
            socket.removesSocketFile ? "listening" : "listening on inherited socket",
            ["address": listener.address.description])
    }

    private func stopListening() {
        for listener in self.listeners { listener.close() }
        self.listeners = []
    }

    /// Stops listening, closes every client, then the mounted storages (which may wait on a bus).
    public func shutdown() {
        self.stateFile?.shutdown()
        for partition in self.partitions.all { partition.player.shutdown() }
        self.library?.stopWatching()
        self.stopListening()
        for client in Array(self.clients.values) { client.close() }
        self.clients = [:]
        self.library?.finishSaving()
        self.library?.closeStorages()
    }

    func kill() {
        self.logger.notice("kill requested by a client")
        self.onKill()
    }

    // MARK: - Clients

    private func accept(_ fd: FileDescriptor, peer: SocketAddress?) {
        if self.clients.count >= self.options.maxConnections {
            // mpd closes the extra connection at once, with no greeting.
            self.logger.info("max connections reached, refusing client", ["peer": peer?.description ?? "?"])
            fd.close()
            return
        }
        let id = self.nextClientID
        self.nextClientID += 1
        let connection: Connection
        do {
            connection = try Connection(loop: self.loop, fd: fd, peer: peer, id: id, inputCapacity: 8192)
        } catch {
            self.logger.error("cannot register client", ["error": "\(error)"])
            return
        }
        let permissions: Permission
        if connection.isLocal {
            permissions = self.options.localPermissions
        } else if let host = peer?.numericHost, let granted = self.options.hostPermissions[host] {
            permissions = granted
        } else {
            permissions = self.options.defaultPermissions
        }
        let client = Client(connection: connection, server: self, permissions: permissions)
        self.clients[id] = client
        self.logger.debug("client connected", ["client": "\(id)", "peer": peer?.description ?? "local"])
        client.start()
    }

    /// Forgets a closed client. Its subscriptions go with it and, as in `mpd`, without an idle `subscription`
    /// (only the `subscribe` and `unsubscribe` commands raise that).
    func clientDidClose(_ client: Client) {
        self.clients.removeValue(forKey: client.id)
        if client.holdsIdle { self.releaseIdle() }
        self.logger.debug("client closed", ["client": "\(client.id)"])
    }

    // MARK: - Idle

    /// Raises `event` for every client, whatever its partition.
    ///
    /// Delivered after the loop's current work, as `mpd` delivers idle events: the events of several commands
    /// that arrived together (`pause 0` then `pause 1`) reach a waiting client as one reply.
    public func emit(_ event: IdleEvent) {
        self.pendingIdle.insert(IdleMask(event))
        self.scheduleIdleDelivery(event)
    }

    /// Raises `event` for the clients of `partition` only, as `mpd`'s `Partition::EmitIdle`.
    func emit(_ event: IdleEvent, in partition: Partition) {
        self.pendingPartitionIdle[ObjectIdentifier(partition), default: []].insert(IdleMask(event))
        self.scheduleIdleDelivery(event)
    }

    private func scheduleIdleDelivery(_ event: IdleEvent) {
        switch event {
        case .playlist, .player, .options, .mixer, .output, .partition, .mount: self.stateFile?.changed()
        default: break
        }
        guard !self.idleDeliveryScheduled else { return }
        self.idleDeliveryScheduled = true
        LoopBound(self, loop: self.loop).execute { server in server.deliverIdle() }
    }

    /// A reply that held idle events back is done: deliver them, after the loop's current work, unless another
    /// still holds them.
    func releaseIdle() {
        guard self.idleHeld else { return }
        self.idleHeld = false
        self.idleDeliveryScheduled = true
        LoopBound(self, loop: self.loop).execute { server in server.deliverIdle() }
    }

    private func deliverIdle() {
        // As while `mpd`'s main thread waits for its player thread: nothing is delivered (``releaseIdle()``).
        if self.clients.values.contains(where: \.holdsIdle) {
            self.idleDeliveryScheduled = false
            self.idleHeld = true
            return
        }
        let events = self.pendingIdle
        let byPartition = self.pendingPartitionIdle
        self.pendingIdle = []
        self.pendingPartitionIdle = [:]
        self.idleDeliveryScheduled = false
        for client in Array(self.clients.values) {
            let mine = byPartition[ObjectIdentifier(client.partition)].map { events.union($0) } ?? events
            if !mine.isEmpty { client.notify(mine) }
        }
    }
}

/// The server could not start: an address it could not resolve or bind, or the sticker database.
public struct StartError: Error, CustomStringConvertible {
    /// Which of the configured listen addresses did not resolve (its position in
    /// ``ServerOptions/listenAddresses``), for the caller to name its setting.
    public var listenIndex: Int?
    /// Why, in `mpd`'s words (`Failed to bind to '127.0.0.1:6600'; Failed to bind socket: Address already in use`).
    public var reason: String

    /// One line for the user: the reason.
    public var description: String { self.reason }

    /// A failure described by `reason` alone.
    init(failure reason: String) {
        self.reason = reason
    }

    /// A listen address that did not resolve.
    init(listenIndex: Int?, reason: String) {
        self.listenIndex = listenIndex
        self.reason = reason
    }
}
