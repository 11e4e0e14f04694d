// SPDX-License-Identifier: GPL-3.0-or-later

import CAvahi
import Glibc
import Model
import Synchronization

/// Announces a ``ZeroconfService`` through `avahi-daemon` until stopped.
///
/// All Avahi work happens on the publisher's own thread, an `AvahiThreadedPoll`: creating the client (whose
/// first D-Bus call blocks), publishing, renaming on collisions, reconnecting. Nothing here can stop the server:
/// a missing D-Bus bus or daemon, a daemon restart, a name collision or a refused registration is logged once
/// and retried (see `PublisherStateMachine` for the delays). The only state other threads see is ``status``.
///
/// Call ``start()`` and ``stop()`` from one owning thread (the daemon's main thread), `start` after the
/// process's signal mask is set, since the Avahi thread inherits it. ``status`` is safe from any thread.
///
/// `@unchecked Sendable`: the Avahi session is confined to the Avahi thread while it runs and to the owning
/// thread before ``start()`` and after ``stop()`` (which joins that thread); `status` is behind a `Mutex`.
public final class ZeroconfPublisher: @unchecked Sendable {
    /// Where the publisher stands.
    public enum Status: Sendable, Hashable {
        /// Not started, stopped, or Avahi's poll could not be created.
        case stopped
        /// The D-Bus system bus cannot be reached (yet); retrying.
        case waitingForBus
        /// On the bus, but `avahi-daemon` is not running (or is restarting); publishing when it appears.
        case waitingForDaemon
        /// Avahi is registering the service under this name.
        case registering(String)
        /// The service is announced under this name.
        case published(String)
    }

    /// The service announced (its name as configured; ``status`` shows the name in use after collisions).
    public let service: ZeroconfService
    private let logger: Logger
    private let statusCell = StatusCell()
    private var poll: OpaquePointer?
    private var session: AvahiSession?

    /// Creates a publisher for `service`, logging to `logger`; nothing happens before ``start()``. Any thread.
    public init(service: ZeroconfService, logger: Logger) {
        self.service = service
        self.logger = logger
    }

    deinit {
        precondition(self.poll == nil, "ZeroconfPublisher released while running: call stop() first")
    }

    /// The current state. Safe from any thread.
    public var status: Status { self.statusCell.value }

    /// Starts the Avahi thread, which connects and publishes in the background. Owning thread only; at most
    /// once before ``stop()``. Never fails: if Avahi cannot even start its thread, that is logged and the
    /// server runs without zeroconf.
    public func start() {
        precondition(self.poll == nil, "ZeroconfPublisher started twice")
        guard let poll = avahi_threaded_poll_new() else {
            self.logger.error("cannot create Avahi's poll thread; zeroconf disabled")
            return
        }
        let session = AvahiSession(
            service: self.service, poll: poll, logger: self.logger,
            statusChanged: { [statusCell] status in statusCell.value = status })
        // Arms the first timer; the thread is not running yet, so no lock is needed.
        session.handle(.start)
        guard avahi_threaded_poll_start(poll) >= 0 else {
            self.logger.error("cannot start Avahi's poll thread; zeroconf disabled")
            session.handle(.stop)
            avahi_threaded_poll_free(poll)
            return
        }
        self.poll = poll
        self.session = session
    }

    /// Withdraws the service and ends the Avahi thread. Owning thread only; blocks until the thread has
    /// joined and the daemon was told (a local D-Bus call). Does nothing when not started.
    public func stop() {
        guard let poll = self.poll, let session = self.session else { return }
        // Joins the Avahi thread: from here the session is the owning thread's.
        avahi_threaded_poll_stop(poll)
        session.handle(.stop)
        // Frees the session's timer along with the poll.
        avahi_threaded_poll_free(poll)
        self.poll = nil
        self.session = nil
    }
}

/// The publisher's status, written on the Avahi thread and read anywhere.
private final class StatusCell: Sendable {
    private let mutex = Mutex(ZeroconfPublisher.Status.stopped)

    var value: ZeroconfPublisher.Status {
        get { self.mutex.withLock { $0 } }
        set { self.mutex.withLock { $0 = newValue } }
    }
}

/// The Avahi handles and the state machine, driven by Avahi's callbacks.
///
/// Every method runs on the Avahi thread with the poll's lock held (Avahi calls its callbacks so), or on the
/// owning thread while the Avahi thread is not running.
///
/// `@unchecked Sendable`: confined as just described; `Unmanaged` userdata hands it to C callbacks.
private final class AvahiSession: @unchecked Sendable {
    private let service: ZeroconfService
    private let api: UnsafePointer<AvahiPoll>
    private let logger: Logger
    private let statusChanged: (ZeroconfPublisher.Status) -> Void
    private var machine: PublisherStateMachine
    private var client: OpaquePointer?
    private var group: OpaquePointer?
    private var timer: OpaquePointer?
    private var queue: [PublisherStateMachine.Event] = []
    private var handling = false
    private var lastStatus = ZeroconfPublisher.Status.stopped

    init(
        service: ZeroconfService, poll: OpaquePointer, logger: Logger,
        statusChanged: @escaping (ZeroconfPublisher.Status) -> Void
    ) {
        self.service = service
        self.api = avahi_threaded_poll_get(poll)
        self.logger = logger
        self.statusChanged = statusChanged
        self.machine = PublisherStateMachine(name: service.name, alternative: AvahiName.alternative)
    }

    /// The userdata handed to C: unretained, because the publisher keeps the session alive until the poll
    /// (and with it every callback source) is freed.
    private var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private static func from(_ userdata: UnsafeMutableRawPointer?) -> AvahiSession? {
        guard let userdata else { return nil }
        return Unmanaged<AvahiSession>.fromOpaque(userdata).takeUnretainedValue()
    }

    private static func message(_ code: Int32) -> String { String(cString: avahi_strerror(code)) }

    // MARK: - Events

    /// Feeds `event` to the machine and performs its actions. Events raised while performing (Avahi calls
    /// back synchronously from `avahi_client_new` and `avahi_entry_group_new`) are queued and handled after.
    func handle(_ event: PublisherStateMachine.Event) {
        self.queue.append(event)
        guard !self.handling else { return }
        self.handling = true
        while !self.queue.isEmpty {
            let next = self.queue.removeFirst()
            for action in self.machine.handle(next) { self.perform(action) }
        }
        self.handling = false
        let status = self.machine.status
        if status != self.lastStatus {
            self.lastStatus = status
            self.statusChanged(status)
        }
    }

    /// Client callback. Runs on the Avahi thread (or inside `avahi_client_new`, on the thread calling it).
    private func clientChanged(_ client: OpaquePointer?, _ state: AvahiClientState) {
        switch state {
        case AVAHI_CLIENT_CONNECTING: self.handle(.client(.connecting))
        case AVAHI_CLIENT_S_REGISTERING: self.handle(.client(.registering))
        case AVAHI_CLIENT_S_RUNNING: self.handle(.client(.running))
        case AVAHI_CLIENT_S_COLLISION: self.handle(.client(.collision))
        case AVAHI_CLIENT_FAILURE:
            let code = client.map { avahi_client_errno($0) } ?? Int32(AVAHI_ERR_FAILURE)
            self.handle(
                .client(.failure(disconnected: code == Int32(AVAHI_ERR_DISCONNECTED), reason: Self.message(code))))
        default: break
        }
    }

    /// Entry group callback. Runs on the Avahi thread (or inside `avahi_entry_group_new`).
    private func groupChanged(_ state: AvahiEntryGroupState) {
        switch state {
        case AVAHI_ENTRY_GROUP_ESTABLISHED: self.handle(.groupEstablished)
        case AVAHI_ENTRY_GROUP_COLLISION: self.handle(.collision)
        case AVAHI_ENTRY_GROUP_FAILURE: self.handle(.groupFailure(reason: self.clientError()))
        default: break
        }
    }

    private func clientError() -> String {
        guard let client = self.client else { return "no client" }
        return Self.message(avahi_client_errno(client))
    }

    // MARK: - Actions

    private func perform(_ action: PublisherStateMachine.Action) {
        switch action {
        case .createClient: self.createClient()
        case .freeClient: self.freeClient()
        case .publish(let name): self.publish(name)
        case .withdraw:
            if let group = self.group { avahi_entry_group_reset(group) }
        case .armTimer(let milliseconds): self.arm(milliseconds)
        case .report(let report): self.log(report)
        }
    }

    private func createClient() {
        var error: Int32 = 0
        let created = avahi_client_new(
            self.api, AVAHI_CLIENT_NO_FAIL,
            { client, state, userdata in AvahiSession.from(userdata)?.clientChanged(client, state) },
            self.userdata, &error)
        guard let created else {
            // States reported from inside the failed constructor concern a client that no longer exists.
            self.queue.removeAll { if case .client = $0 { true } else { false } }
            self.queue.append(.clientCreationFailed(reason: Self.message(error)))
            return
        }
        self.client = created
    }

    private func freeClient() {
        if let group = self.group {
            // Tells a still-connected daemon to withdraw the service now.
            avahi_entry_group_free(group)
            self.group = nil
        }
        if let client = self.client {
            avahi_client_free(client)
            self.client = nil
        }
    }

    private func publish(_ name: String) {
        guard let client = self.client else { return }
        if let group = self.group {
            avahi_entry_group_reset(group)
        } else {
            guard
                let group = avahi_entry_group_new(
                    client, { _, state, userdata in AvahiSession.from(userdata)?.groupChanged(state) },
                    self.userdata)
            else {
                self.queue.append(.groupFailure(reason: Self.message(avahi_client_errno(client))))
                return
            }
            self.group = group
        }
        guard let group = self.group else { return }
        let interface: AvahiIfIndex
        switch self.service.scope {
        case .everywhere: interface = Int32(AVAHI_IF_UNSPEC)
        case .loopback:
            let index = if_nametoindex("lo")
            interface = index == 0 ? Int32(AVAHI_IF_UNSPEC) : AvahiIfIndex(index)
        }
        let added = avahi_entry_group_add_service_strlst(
            group, interface, Int32(AVAHI_PROTO_UNSPEC), AvahiPublishFlags(0), name, self.service.type, nil,
            nil, self.service.port, nil)
        if added == Int32(AVAHI_ERR_COLLISION) {
            self.queue.append(.collision)
            return
        }
        guard added >= 0 else {
            self.queue.append(.groupFailure(reason: Self.message(added)))
            return
        }
        let committed = avahi_entry_group_commit(group)
        if committed < 0 {
            self.queue.append(.groupFailure(reason: Self.message(committed)))
        }
    }

    private func arm(_ milliseconds: Int) {
        var when = timeval()
        avahi_elapse_time(&when, UInt32(milliseconds), 0)
        if let timer = self.timer {
            self.api.pointee.timeout_update(timer, &when)
        } else {
            self.timer = self.api.pointee.timeout_new(
                self.api, &when, { _, userdata in AvahiSession.from(userdata)?.handle(.timer) }, self.userdata)
            if self.timer == nil {
                self.logger.error("cannot arm Avahi's timer; zeroconf retries disabled")
            }
        }
    }

    private func log(_ report: PublisherStateMachine.Report) {
        let type = self.service.type
        let port = "\(self.service.port)"
        switch report {
        case .busUnreachable(let reason):
            self.logger.warning(
                "cannot reach the D-Bus system bus; zeroconf retries in the background", ["error": reason])
        case .daemonAbsent:
            self.logger.notice("avahi-daemon is not running; publishing when it starts", ["type": type])
        case .daemonLost(let reason):
            self.logger.notice("lost the connection to avahi-daemon; reconnecting", ["error": reason])
        case .clientFailed(let reason):
            self.logger.error("Avahi client failed; retrying", ["error": reason])
        case .published(let name):
            self.logger.notice("published", ["name": name, "type": type, "port": port])
        case .renamed(let from, let to):
            self.logger.warning("service name collision; using Avahi's alternative name", ["from": from, "to": to])
        case .publishFailed(let reason):
            self.logger.error("cannot publish; retrying", ["error": reason, "type": type, "port": port])
        case .withdrawn(let name):
            self.logger.notice("withdrawn", ["name": name, "type": type])
        }
    }
}
