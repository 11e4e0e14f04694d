// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Posix
import Synchronization

/// A single-threaded reactor: epoll for readiness, an eventfd for cross-thread tasks, a timerfd for timers.
///
/// Everything but `execute(_:)`, `stop()` and `isOnLoop` must be called on the loop thread, the thread that
/// called `run()`. Handlers and timers run on that thread, one at a time, in the order their events arrive.
///
/// `@unchecked Sendable`: its mutable state is touched only on the loop thread (asserted with
/// `preconditionOnLoop()`); the task queue, the only state other threads reach, is behind a `Mutex`.
public final class EventLoop: @unchecked Sendable {
    /// Identifies a registered descriptor. Tags are never reused, so a stale event for a closed and
    /// reused descriptor number finds no handler and is dropped.
    public struct Registration: Hashable, Sendable {
        fileprivate let tag: UInt64
    }

    /// Identifies a scheduled timer.
    public struct Timer: Hashable, Sendable {
        fileprivate let id: UInt64
    }

    private struct Handler {
        var fd: FileDescriptor
        var events: Epoll.Events
        var body: (Epoll.Events) -> Void
    }

    private struct PendingTimer: Comparable {
        var deadline: UInt64
        var id: UInt64
        static func < (lhs: PendingTimer, rhs: PendingTimer) -> Bool {
            (lhs.deadline, lhs.id) < (rhs.deadline, rhs.id)
        }
    }

    private static let wakeTag: UInt64 = 0
    private static let timerTag: UInt64 = 1

    private let epoll: FileDescriptor
    private let wakeFD: FileDescriptor
    private let timerFD: FileDescriptor
    private let tasks = Mutex<[@Sendable () -> Void]>([])
    private let running = Atomic<Bool>(false)
    private let loopThread = Atomic<UInt>(0)
    /// The thread inside `run()`, 0 outside it: only its own posts take the `postedOnLoop` path (a task posted by
    /// the thread that made the loop before another thread runs it must still wake it).
    private let runningThread = Atomic<UInt>(0)

    private var handlers: [UInt64: Handler] = [:]
    private var nextTag: UInt64 = 2
    private var timerHeap = Heap<PendingTimer>()
    private var timerBodies: [UInt64: () -> Void] = [:]
    private var nextTimerID: UInt64 = 1
    private var armedDeadline: UInt64?
    /// Whether a task was posted from the loop thread itself since the tasks last ran: it runs at the end of the
    /// next turn, after one look at the descriptors (`epoll_wait` without waiting), with no write to the eventfd and
    /// no read of it (a reply of megabytes posts its next piece so, a few dozen times).
    private var postedOnLoop = false

    /// Creates the loop's descriptors. Call from the thread that will run it.
    ///
    /// - Throws: `SystemCallError` when the kernel refuses an epoll, eventfd or timerfd.
    public init() throws(SystemCallError) {
        self.epoll = try Epoll.epoll_create()
        self.wakeFD = try EventFD.eventfd()
        self.timerFD = try TimerFD.timerfd_create()
        try Epoll.epoll_ctl(self.epoll, .add, self.wakeFD, events: .input, tag: Self.wakeTag)
        try Epoll.epoll_ctl(self.epoll, .add, self.timerFD, events: .input, tag: Self.timerTag)
        self.loopThread.store(UInt(pthread_self()), ordering: .relaxed)
    }

    deinit {
        self.epoll.close()
        self.wakeFD.close()
        self.timerFD.close()
    }

    /// Whether the caller is on the loop thread.
    public var isOnLoop: Bool { self.loopThread.load(ordering: .relaxed) == UInt(pthread_self()) }

    /// Traps unless called on the loop thread.
    @inline(__always)
    public func preconditionOnLoop(file: StaticString = #fileID, line: UInt = #line) {
        precondition(self.isOnLoop, "must be called on the event loop thread", file: file, line: line)
    }

    // MARK: - Running

    /// Runs the loop on the calling thread until `stop()` is called.
    ///
    /// - Throws: `SystemCallError` if `epoll_wait` itself fails.
    public func run() throws(SystemCallError) {
        self.loopThread.store(UInt(pthread_self()), ordering: .relaxed)
        self.runningThread.store(UInt(pthread_self()), ordering: .relaxed)
        self.running.store(true, ordering: .relaxed)
        var buffer = Epoll.EventBuffer(capacity: 256)
        while self.running.load(ordering: .relaxed) {
            let count = try Epoll.epoll_wait(
                self.epoll, into: &buffer, timeoutMilliseconds: self.postedOnLoop ? 0 : -1)
            let runPosted = self.postedOnLoop
            for index in 0..<count {
                let event = buffer[index]
                switch event.tag {
                case Self.wakeTag:
                    EventFD.drain(self.wakeFD)
                    self.runTasks()
                case Self.timerTag:
                    TimerFD.drain(self.timerFD)
                    self.armedDeadline = nil
                    self.fireTimers()
                default:
                    // A handler run earlier in this batch may have removed this registration.
                    guard let handler = self.handlers[event.tag] else { continue }
                    handler.body(event.events)
                }
            }
            // The tasks posted on the loop before this turn's look at the descriptors (those posted during it wait
            // for the next look, so a task that posts itself again never keeps the descriptors waiting).
            if runPosted { self.runTasks() }
        }
        self.runningThread.store(0, ordering: .relaxed)
        self.runTasks()
    }

    /// Asks the loop to return from `run()` after the current batch. Safe from any thread.
    public func stop() {
        self.running.store(false, ordering: .relaxed)
        EventFD.signal(self.wakeFD)
    }

    /// Runs `task` on the loop thread soon, after the tasks posted before it. Safe from any thread.
    public func execute(_ task: @escaping @Sendable () -> Void) {
        self.tasks.withLock { $0.append(task) }
        if self.runningThread.load(ordering: .relaxed) == UInt(pthread_self()) {
            self.postedOnLoop = true
        } else {
            EventFD.signal(self.wakeFD)
        }
    }

    private func runTasks() {
        self.postedOnLoop = false
        let batch = self.tasks.withLock { tasks -> [@Sendable () -> Void] in
            let batch = tasks
            tasks.removeAll(keepingCapacity: true)
            return batch
        }
        for task in batch { task() }
    }

    // MARK: - Descriptors

    /// Registers `fd` for `events`; `body` runs on the loop with the ready events.
    ///
    /// - Throws: `SystemCallError` from `epoll_ctl`.
    public func register(
        _ fd: FileDescriptor, events: Epoll.Events, _ body: @escaping (Epoll.Events) -> Void
    ) throws(SystemCallError) -> Registration {
        self.preconditionOnLoop()
        let tag = self.nextTag
        self.nextTag += 1
        try Epoll.epoll_ctl(self.epoll, .add, fd, events: events, tag: tag)
        self.handlers[tag] = Handler(fd: fd, events: events, body: body)
        return Registration(tag: tag)
    }

    /// Changes the events a registration waits for. Does nothing if they are unchanged.
    public func modify(_ registration: Registration, events: Epoll.Events) {
        self.preconditionOnLoop()
        guard var handler = self.handlers[registration.tag], handler.events != events else { return }
        handler.events = events
        self.handlers[registration.tag] = handler
        // Modifying a registered, open descriptor only fails on our own bugs.
        do {
            try Epoll.epoll_ctl(self.epoll, .modify, handler.fd, events: events, tag: registration.tag)
        } catch {
            preconditionFailure("epoll_ctl(MOD) failed: \(error)")
        }
    }

    /// Removes a registration. Call before closing its descriptor.
    public func deregister(_ registration: Registration) {
        self.preconditionOnLoop()
        guard let handler = self.handlers.removeValue(forKey: registration.tag) else { return }
        try? Epoll.epoll_ctl(self.epoll, .delete, handler.fd, events: [], tag: registration.tag)
    }

    /// The number of registered descriptors (listeners and connections).
    public var registrationCount: Int { self.handlers.count }

    // MARK: - Timers

    /// Runs `body` on the loop once the monotonic clock reaches `deadline` (nanoseconds).
    @discardableResult
    public func schedule(at deadline: UInt64, _ body: @escaping () -> Void) -> Timer {
        self.preconditionOnLoop()
        let id = self.nextTimerID
        self.nextTimerID += 1
        self.timerBodies[id] = body
        self.timerHeap.insert(PendingTimer(deadline: deadline, id: id))
        self.rearm()
        return Timer(id: id)
    }

    /// Runs `body` on the loop after `seconds`.
    @discardableResult
    public func schedule(afterSeconds seconds: Double, _ body: @escaping () -> Void) -> Timer {
        self.schedule(at: MonotonicClock.now() + UInt64(max(0, seconds) * 1e9), body)
    }

    /// Cancels a timer that has not fired yet. Cancelling a fired or cancelled timer does nothing.
    public func cancel(_ timer: Timer) {
        self.preconditionOnLoop()
        // The heap entry stays until it surfaces; it then finds no body and is skipped.
        self.timerBodies.removeValue(forKey: timer.id)
    }

    private func fireTimers() {
        let now = MonotonicClock.now()
        while let first = self.timerHeap.min, first.deadline <= now {
            _ = self.timerHeap.popMin()
            if let body = self.timerBodies.removeValue(forKey: first.id) { body() }
        }
        self.rearm()
    }

    private func rearm() {
        while let first = self.timerHeap.min, self.timerBodies[first.id] == nil { _ = self.timerHeap.popMin() }
        let deadline = self.timerHeap.min?.deadline
        guard deadline != self.armedDeadline else { return }
        self.armedDeadline = deadline
        TimerFD.timerfd_settime(self.timerFD, deadline: deadline)
    }
}
