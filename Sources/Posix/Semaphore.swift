// SPDX-License-Identifier: GPL-3.0-or-later

import CLinux
import Glibc

/// A POSIX semaphore (`sem_t`), for waking audio threads without a lock.
///
/// Any thread. `@unchecked Sendable`: the `sem_t` lives at a stable heap address and is touched only by
/// `sem_*` calls, which are thread-safe.
public final class Semaphore: @unchecked Sendable {
    private let semaphore: UnsafeMutablePointer<sem_t>

    /// Creates a semaphore with the count 0.
    public init() {
        self.semaphore = .allocate(capacity: 1)
        sem_init(self.semaphore, 0, 0)
    }

    deinit {
        sem_destroy(self.semaphore)
        self.semaphore.deallocate()
    }

    /// Adds one to the count, waking a waiter. The corresponding C function is `sem_post`.
    @inline(__always)
    public func post() { sem_post(self.semaphore) }

    /// Waits until the count is positive, then takes one. The corresponding C function is `sem_wait`
    /// (an interruption by a signal returns early; callers re-check their condition).
    public func wait() { _ = sem_wait(self.semaphore) }

    /// Like `wait()`, but gives up after `nanoseconds`. The corresponding C function is `sem_timedwait`,
    /// which takes a `CLOCK_REALTIME` deadline: a clock step costs at most one wait.
    public func wait(timeoutNanoseconds nanoseconds: UInt64) {
        var deadline = clockDeadline(CLOCK_REALTIME, afterNanoseconds: nanoseconds)
        _ = sem_timedwait(self.semaphore, &deadline)
    }
}
