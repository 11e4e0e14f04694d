// SPDX-License-Identifier: GPL-3.0-or-later

import EventLoop
import Posix

/// The monotonic clock that paces the outputs without a device clock, times the player's output retries and
/// schedules the state file's writes: `SystemClock` in the server, a clock the test advances by hand in tests,
/// so that no test depends on how fast the machine runs.
///
/// Any thread. `now()` and `sleep(until:on:unless:)` run on the audio threads: they must not allocate, lock or
/// log in the server's clock.
public protocol PlaybackClock: Sendable {
    /// Nanoseconds since an arbitrary fixed point; never goes back.
    func now() -> UInt64

    /// Sleeps on `wakeup` until the clock reaches `deadline` or `wakeup` is signalled, unless `ready()` already
    /// holds. May return early: callers re-check their condition in a loop. One thread at a time per `wakeup`.
    func sleep(until deadline: UInt64, on wakeup: PlayerWakeup, unless ready: () -> Bool)

    /// Runs `body` on `loop` once the clock reaches `deadline`. Loop thread.
    ///
    /// - Returns: the timer, which the loop thread may cancel until it fired.
    func schedule(on loop: EventLoop, at deadline: UInt64, _ body: @escaping () -> Void) -> ClockTimer
}

/// A body scheduled on an event loop by a `PlaybackClock`.
public struct ClockTimer {
    private let cancelBody: () -> Void

    /// Creates a timer that `cancel` cancels.
    public init(cancel: @escaping () -> Void) { self.cancelBody = cancel }

    /// Keeps the body from running if it has not run yet. Loop thread.
    public func cancel() { self.cancelBody() }
}

extension PlaybackClock {
    /// Runs `body` on `loop` after `seconds` of this clock. Loop thread.
    public func schedule(on loop: EventLoop, afterSeconds seconds: Double, _ body: @escaping () -> Void) -> ClockTimer {
        self.schedule(on: loop, at: self.now() + UInt64(max(0, seconds) * 1e9), body)
    }
}

/// The server's clock: `CLOCK_MONOTONIC`, semaphore timeouts and the event loop's timers.
public struct SystemClock: PlaybackClock {
    /// Creates the clock.
    public init() {}

    @inline(__always)
    public func now() -> UInt64 { MonotonicClock.now() }

    public func sleep(until deadline: UInt64, on wakeup: PlayerWakeup, unless ready: () -> Bool) {
        let now = MonotonicClock.now()
        guard deadline > now else { return }
        wakeup.wait(unless: ready, timeoutNanoseconds: deadline - now)
    }

    public func schedule(on loop: EventLoop, at deadline: UInt64, _ body: @escaping () -> Void) -> ClockTimer {
        let timer = loop.schedule(at: deadline, body)
        return ClockTimer { loop.cancel(timer) }
    }
}
