// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Synchronization

/// Paces an output that has no device clock (null, fifo) in real time, as `mpd`'s output timer does: the
/// target time grows by the duration of every write, measured on the monotonic clock, and a write waits until
/// the previous one would have been heard. The clock is `SystemClock` unless a test gives its own.
///
/// Output thread, except `interrupt()` (any thread). No allocation. Public for output plugins in other modules
/// (shout).
public struct OutputTimer: ~Copyable {
    private var bytesPerSecond = 1
    private var frameSize = 1
    private var target: UInt64 = 0
    private var started = false
    /// While held (a pause): the nanoseconds that were still to be heard when the hold began.
    private var held: UInt64?
    private let clock: any PlaybackClock

    /// Creates a timer for no stream yet, on `clock`.
    public init(clock: any PlaybackClock = SystemClock()) { self.clock = clock }

    /// Starts a stream in `format` (the first write does not wait).
    public mutating func open(_ format: AudioFormat) {
        self.bytesPerSecond = max(1, format.sampleRate * format.frameSize)
        self.frameSize = max(1, format.frameSize)
        self.started = false
        self.held = nil
    }

    /// Forgets the target (cancel, close): the next write starts the clock again.
    public mutating func reset() {
        self.started = false
        self.held = nil
    }

    /// Stops the clock (a pause): what was written and not heard yet stays to be heard, from the next write or
    /// drain on. Calling it again while held changes nothing.
    public mutating func hold() {
        guard self.held == nil else { return }
        self.held = self.delayNanoseconds()
    }

    /// Ends a hold at `now`: the clock runs again with what was left to hear.
    private mutating func release(now: UInt64) {
        guard let held = self.held else { return }
        self.held = nil
        self.started = true
        self.target = now + held
    }

    /// Nanoseconds until the data written so far is heard.
    public func delayNanoseconds() -> UInt64 { self.delayNanoseconds(now: self.clock.now()) }

    /// Nanoseconds from `now` (a time of the timer's clock) until the data written so far is heard.
    public func delayNanoseconds(now: UInt64) -> UInt64 {
        if let held = self.held { return held }
        return self.started && self.target > now ? self.target - now : 0
    }

    /// Frames written and not yet heard.
    public var delayFrames: Int {
        Int(self.delayNanoseconds() * UInt64(self.bytesPerSecond) / 1_000_000_000) / self.frameSize
    }

    /// Waits (through `wakeup`, so `interrupted` cuts it short) until the previous write is heard, then adds
    /// `bytes` to the target.
    public mutating func wait(thenAdd bytes: Int, wakeup: PlayerWakeup, interrupted: borrowing Atomic<Bool>) {
        self.wait(ahead: 0, wakeup: wakeup, interrupted: interrupted)
        self.add(bytes)
    }

    /// Waits (through `wakeup`, so `interrupted` cuts it short) until no more than `ahead` nanoseconds of what
    /// was written are still to be heard; the first write after `open` or `reset` starts the clock. Then the
    /// caller writes and counts what it wrote with ``add(_:)``.
    public mutating func wait(ahead: UInt64, wakeup: PlayerWakeup, interrupted: borrowing Atomic<Bool>) {
        var now = self.clock.now()
        self.release(now: now)
        if !self.started {
            self.started = true
            self.target = now
        }
        while self.target > now + ahead, !interrupted.load(ordering: .acquiring) {
            self.clock.sleep(until: self.target - ahead, on: wakeup, unless: { interrupted.load(ordering: .acquiring) })
            now = self.clock.now()
        }
        // After an underrun, do not race to catch up with the past.
        if self.target + 100_000_000 < now { self.target = now }
    }

    /// Counts `bytes` written: they are heard once everything written before them is.
    public mutating func add(_ bytes: Int) { self.target += self.nanoseconds(of: bytes) }

    /// How far ahead of the clock a writer into a pipe (fifo, pipe) runs, in nanoseconds of the stream's format:
    /// 100 ms, at most 20 KiB (less than a third of a pipe, so a chunk and a tick of a reader's more still fit,
    /// and a reader taking its data in ticks of its own, as snapserver's 20 ms, always finds a tick's worth).
    public var pipeLead: UInt64 { min(100_000_000, self.nanoseconds(of: 20480)) }

    /// Nanoseconds `bytes` take to be heard.
    public func nanoseconds(of bytes: Int) -> UInt64 { UInt64(bytes) * 1_000_000_000 / UInt64(self.bytesPerSecond) }

    /// Waits until everything written is heard, then forgets the target (`drain`).
    ///
    /// - Returns: `false` when `interrupted` cut it short (what is not heard yet stays counted).
    public mutating func drain(wakeup: PlayerWakeup, interrupted: borrowing Atomic<Bool>) -> Bool {
        self.release(now: self.clock.now())
        while self.delayNanoseconds() > 0 {
            if interrupted.exchange(false, ordering: .acquiringAndReleasing) { return false }
            self.clock.sleep(until: self.target, on: wakeup, unless: { interrupted.load(ordering: .acquiring) })
        }
        interrupted.store(false, ordering: .releasing)
        self.reset()
        return true
    }
}
