// SPDX-License-Identifier: GPL-3.0-or-later

/// The publisher's decisions, free of Avahi: events from the Avahi client, its entry group and the retry timer
/// go in, actions for the I/O code come out.
///
/// Life cycle it implements: create a client (`AVAHI_CLIENT_NO_FAIL`, so a missing daemon is a state, not an
/// error); publish when the client runs; withdraw while the daemon re-establishes its host name; on a name
/// collision take Avahi's alternative name; when the daemon goes away, replace the dead client after
/// ``reconnectDelay``; when even the D-Bus system bus is unreachable, retry every ``busRetryDelay``. Each
/// problem is reported once per episode, not on every retry.
///
/// A value type without I/O; the owner confines it to one thread (the Avahi thread).
struct PublisherStateMachine {
    /// What the Avahi client reported (`AvahiClientState`).
    enum ClientState: Equatable {
        /// `AVAHI_CLIENT_CONNECTING`: on the bus, waiting for `avahi-daemon` to appear.
        case connecting
        /// `AVAHI_CLIENT_S_REGISTERING`: the daemon is (re)establishing its host name.
        case registering
        /// `AVAHI_CLIENT_S_RUNNING`: services can be published.
        case running
        /// `AVAHI_CLIENT_S_COLLISION`: the daemon's host name collided; it will pick another.
        case collision
        /// `AVAHI_CLIENT_FAILURE`: the client is dead; `disconnected` when the daemon or the bus went away.
        case failure(disconnected: Bool, reason: String)
    }

    /// Something that happened.
    enum Event: Equatable {
        /// The owner started the publisher.
        case start
        /// `avahi_client_new` returned nothing (the D-Bus system bus is unreachable, most likely).
        case clientCreationFailed(reason: String)
        /// The client changed state.
        case client(ClientState)
        /// The entry group reached `AVAHI_ENTRY_GROUP_ESTABLISHED`.
        case groupEstablished
        /// The entry group reached `AVAHI_ENTRY_GROUP_COLLISION`, or adding the service met a local collision.
        case collision
        /// The entry group failed, or Avahi refused to create, fill or commit it.
        case groupFailure(reason: String)
        /// The retry timer fired.
        case timer
        /// The owner stopped the publisher (the Avahi thread is no longer running).
        case stop
    }

    /// What the I/O code must do, in order.
    enum Action: Equatable {
        /// Create an Avahi client with `AVAHI_CLIENT_NO_FAIL`.
        case createClient
        /// Free the entry group, then the client (withdrawing the service if the daemon is still there).
        case freeClient
        /// Fill the entry group (created on first use, reset otherwise) with the service under this name and
        /// commit it.
        case publish(name: String)
        /// Reset the entry group, withdrawing the service.
        case withdraw
        /// Fire ``Event/timer`` after this many milliseconds (replacing any earlier arming).
        case armTimer(milliseconds: Int)
        /// Tell the user.
        case report(Report)
    }

    /// What is worth a log line.
    enum Report: Equatable {
        /// The D-Bus system bus cannot be reached; retrying.
        case busUnreachable(reason: String)
        /// `avahi-daemon` is not running; the service will be published when it appears.
        case daemonAbsent
        /// The connection to `avahi-daemon` was lost; reconnecting.
        case daemonLost(reason: String)
        /// The client failed for another reason; reconnecting later.
        case clientFailed(reason: String)
        /// The service is announced under this name.
        case published(name: String)
        /// The name collided with another service; trying the alternative.
        case renamed(from: String, to: String)
        /// Publishing failed; retrying later.
        case publishFailed(reason: String)
        /// The service was withdrawn at shutdown.
        case withdrawn(name: String)
    }

    /// The publisher's state as its owner shows it.
    typealias Status = ZeroconfPublisher.Status

    /// Delay before retrying when the D-Bus system bus is unreachable.
    static let busRetryDelay = 2000
    /// Delay before replacing a client whose daemon went away (a restart usually takes about a second).
    static let reconnectDelay = 1000
    /// Delay before retrying after any other failure.
    static let failureRetryDelay = 10_000
    /// Collisions in a row after which the publisher pauses for ``failureRetryDelay`` before renaming again.
    static let maximumRenames = 32

    private enum Phase: Equatable {
        case idle, creating, noBus, connecting, registering, running, failed, stopped
    }

    private enum TimerPurpose {
        case createClient, reconnect, republish
    }

    private var phase = Phase.idle
    private var timer: TimerPurpose?
    /// The name to publish: the configured one, or the alternative after collisions.
    private(set) var name: String
    /// Whether the entry group holds the service (committed or being committed).
    private var filled = false
    private var established = false
    private var renames = 0
    private var busFailureReported = false
    private var daemonAbsenceReported = false
    private let alternative: (String) -> String

    /// Creates the machine for a service called `name`; `alternative` gives the next name after a collision
    /// (Avahi's `avahi_alternative_service_name`: `name #2`, `name #3`…).
    init(name: String, alternative: @escaping (String) -> String) {
        self.name = name
        self.alternative = alternative
    }

    /// The state to show.
    var status: Status {
        switch self.phase {
        case .idle, .stopped: .stopped
        case .creating, .noBus: .waitingForBus
        case .connecting, .failed: .waitingForDaemon
        case .registering: .registering(self.name)
        case .running: self.established ? .published(self.name) : .registering(self.name)
        }
    }

    /// Feeds one event; returns what to do.
    mutating func handle(_ event: Event) -> [Action] {
        if self.phase == .stopped { return [] }
        switch event {
        case .start:
            guard self.phase == .idle else { return [] }
            self.phase = .creating
            return self.arm(.createClient, after: 0)
        case .clientCreationFailed(let reason):
            self.phase = .noBus
            var actions: [Action] = []
            if !self.busFailureReported {
                self.busFailureReported = true
                actions.append(.report(.busUnreachable(reason: reason)))
            }
            return actions + self.arm(.createClient, after: Self.busRetryDelay)
        case .client(let state):
            return self.clientChanged(state)
        case .groupEstablished:
            guard self.phase == .running, self.filled else { return [] }
            self.established = true
            self.renames = 0
            return [.report(.published(name: self.name))]
        case .collision:
            guard self.phase == .running else { return [] }
            return self.rename()
        case .groupFailure(let reason):
            guard self.phase == .running else { return [] }
            self.filled = false
            self.established = false
            return [.report(.publishFailed(reason: reason))] + self.arm(.republish, after: Self.failureRetryDelay)
        case .timer:
            return self.timerFired()
        case .stop:
            let wasPublished = self.established
            self.phase = .stopped
            self.timer = nil
            self.filled = false
            self.established = false
            return [.freeClient] + (wasPublished ? [.report(.withdrawn(name: self.name))] : [])
        }
    }

    private mutating func clientChanged(_ state: ClientState) -> [Action] {
        // A dead client waiting to be replaced has nothing more to say.
        guard self.phase != .failed else { return [] }
        self.busFailureReported = false
        switch state {
        case .connecting:
            self.phase = .connecting
            guard !self.daemonAbsenceReported else { return [] }
            self.daemonAbsenceReported = true
            return [.report(.daemonAbsent)]
        case .registering, .collision:
            self.phase = .registering
            return self.withdraw()
        case .running:
            self.daemonAbsenceReported = false
            if self.phase == .running && self.filled { return [] }
            self.phase = .running
            return self.publish()
        case .failure(let disconnected, let reason):
            self.phase = .failed
            // The client's entry group died with it.
            self.filled = false
            self.established = false
            if disconnected {
                return [.report(.daemonLost(reason: reason))] + self.arm(.reconnect, after: Self.reconnectDelay)
            }
            return [.report(.clientFailed(reason: reason))] + self.arm(.reconnect, after: Self.failureRetryDelay)
        }
    }

    private mutating func timerFired() -> [Action] {
        guard let purpose = self.timer else { return [] }
        self.timer = nil
        switch purpose {
        case .createClient:
            self.phase = .creating
            return [.createClient]
        case .reconnect:
            self.phase = .creating
            return [.freeClient, .createClient]
        case .republish:
            guard self.phase == .running else { return [] }
            return self.publish()
        }
    }

    private mutating func publish() -> [Action] {
        self.filled = true
        self.established = false
        return [.publish(name: self.name)]
    }

    private mutating func withdraw() -> [Action] {
        guard self.filled else { return [] }
        self.filled = false
        self.established = false
        return [.withdraw]
    }

    private mutating func rename() -> [Action] {
        let old = self.name
        self.name = self.alternative(old)
        self.renames += 1
        let report = Action.report(.renamed(from: old, to: self.name))
        if self.renames >= Self.maximumRenames {
            self.renames = 0
            self.filled = false
            self.established = false
            return [report] + self.arm(.republish, after: Self.failureRetryDelay)
        }
        return [report] + self.publish()
    }

    private mutating func arm(_ purpose: TimerPurpose, after milliseconds: Int) -> [Action] {
        self.timer = purpose
        return [.armTimer(milliseconds: milliseconds)]
    }
}
