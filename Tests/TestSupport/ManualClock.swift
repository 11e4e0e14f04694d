// SPDX-License-Identifier: GPL-3.0-or-later

import EventLoop
import Glibc
import Playback
import Posix
import Synchronization

/// A `PlaybackClock` that stands still until the test advances it: outputs paced by it play exactly as much as
/// the test lets time pass, whatever the machine's load, and event-loop timers on it fire when the test says.
///
/// Any thread. Sleepers wait for a signal of their wake-up, which `advance` sends once their deadline passed
/// (`PlayerWakeup` checks the clock after it marked itself sleeping, so an advance in between is not missed).
public final class ManualClock: PlaybackClock, @unchecked Sendable {  // test double: state behind a Mutex
    private struct Sleeper {
        var deadline: UInt64
        var wakeup: PlayerWakeup
    }

    private final class Timer: @unchecked Sendable {  // `cancelled` and `body` are touched on `loop` only
        let deadline: UInt64
        let loop: EventLoop
        let body: () -> Void
        var cancelled = false

        init(deadline: UInt64, loop: EventLoop, body: @escaping () -> Void) {
            self.deadline = deadline
            self.loop = loop
            self.body = body
        }
    }

    private struct State {
        var now: UInt64
        var sleepers: [ObjectIdentifier: Sleeper] = [:]
        var timers: [Timer] = []
    }

    private let state: Mutex<State>

    /// Creates a clock at `start` nanoseconds (not 0, so that nothing mistakes the start for "never").
    public init(start: UInt64 = 1_000_000_000) { self.state = Mutex(State(now: start)) }

    public func now() -> UInt64 { self.state.withLock { $0.now } }

    /// Moves the clock on by `seconds`: wakes the sleepers whose deadline passed and runs the due timers on
    /// their loops (in deadline order).
    public func advance(seconds: Double) { self.advance(nanoseconds: UInt64(max(0, seconds) * 1e9)) }

    /// Moves the clock on by `nanoseconds`.
    public func advance(nanoseconds: UInt64) {
        let (woken, due) = self.state.withLock { state -> ([PlayerWakeup], [Timer]) in
            state.now += nanoseconds
            let now = state.now
            let woken = state.sleepers.values.filter { $0.deadline <= now }.map(\.wakeup)
            let due = state.timers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            state.timers.removeAll { $0.deadline <= now }
            return (woken, due)
        }
        for wakeup in woken { wakeup.signal() }
        for timer in due {
            timer.loop.execute {
                if !timer.cancelled { timer.body() }
            }
        }
    }

    /// How many threads sleep on this clock now until a time still to come.
    public var sleeperCount: Int {
        self.state.withLock { state in state.sleepers.values.count { $0.deadline > state.now } }
    }

    /// Waits (up to `timeoutSeconds` of real time, polling) until at least `count` threads sleep on this clock
    /// until a time still to come: a paced output that does so has written everything due and stands still.
    @discardableResult
    public func waitForSleepers(_ count: Int = 1, timeoutSeconds: Double = 10) -> Bool {
        let deadline = MonotonicClock.now() + UInt64(timeoutSeconds * 1e9)
        while self.sleeperCount < count {
            if MonotonicClock.now() > deadline { return false }
            usleep(1000)
        }
        return true
    }

    /// Runs `body` on a thread of its own and advances the clock by `stepSeconds` whenever something sleeps on
    /// it, until `body` returns: time passes as fast as the code under test can keep up.
    ///
    /// - Returns: what `body` returned, or `nil` when it had not returned after `timeoutSeconds` of real time.
    public func drive<T: Sendable>(
        stepSeconds: Double, timeoutSeconds: Double = 10, _ body: @escaping @Sendable () -> T
    )
        -> T?
    {
        let result = Mutex<T?>(nil)
        let done = Atomic<Bool>(false)
        let thread = NamedThread("manual clock") {
            let value = body()
            result.withLock { $0 = value }
            done.store(true, ordering: .releasing)
        }
        let deadline = MonotonicClock.now() + UInt64(timeoutSeconds * 1e9)
        while !done.load(ordering: .acquiring), MonotonicClock.now() < deadline {
            if self.sleeperCount > 0 { self.advance(seconds: stepSeconds) } else { usleep(500) }
        }
        if done.load(ordering: .acquiring) { thread.join() } else { thread.detach() }
        return result.withLock { $0 }
    }

    public func sleep(until deadline: UInt64, on wakeup: PlayerWakeup, unless ready: () -> Bool) {
        let key = ObjectIdentifier(wakeup)
        self.state.withLock { $0.sleepers[key] = Sleeper(deadline: deadline, wakeup: wakeup) }
        defer { _ = self.state.withLock { $0.sleepers.removeValue(forKey: key) } }
        wakeup.wait(unless: { ready() || self.now() >= deadline })
    }

    public func schedule(on loop: EventLoop, at deadline: UInt64, _ body: @escaping () -> Void) -> ClockTimer {
        let timer = Timer(deadline: deadline, loop: loop, body: body)
        let now = self.state.withLock { state in
            state.timers.append(timer)
            return state.now
        }
        if deadline <= now { self.advance(nanoseconds: 0) }
        return ClockTimer { timer.cancelled = true }
    }
}
