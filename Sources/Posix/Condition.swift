// SPDX-License-Identifier: GPL-3.0-or-later

import CLinux
import Glibc

/// A mutex with a condition variable: a mailbox between threads, locked around each exchange.
///
/// Any thread. `@unchecked Sendable`: the `pthread_mutex_t` and `pthread_cond_t` live at stable heap addresses
/// and are touched only by `pthread_*` calls, which are thread-safe. Timed waits measure `CLOCK_MONOTONIC`, so a
/// step of the wall clock does not stretch or cut them.
public final class Condition: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    /// Creates an unlocked mutex and its condition.
    ///
    /// The corresponding C functions are `pthread_mutex_init` and `pthread_cond_init`.
    public init() {
        self.mutex = .allocate(capacity: 1)
        self.mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(self.mutex, nil)
        self.condition = .allocate(capacity: 1)
        self.condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(self.condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(self.condition)
        pthread_mutex_destroy(self.mutex)
        self.condition.deallocate()
        self.mutex.deallocate()
    }

    /// Takes the mutex, waiting for it. The corresponding C function is `pthread_mutex_lock`.
    public func lock() { pthread_mutex_lock(self.mutex) }

    /// Releases the mutex. The corresponding C function is `pthread_mutex_unlock`.
    public func unlock() { pthread_mutex_unlock(self.mutex) }

    /// Releases the mutex until signalled, then takes it again; with the mutex held. Wake-ups may be spurious:
    /// callers re-check their condition. The corresponding C function is `pthread_cond_wait`.
    public func wait() { pthread_cond_wait(self.condition, self.mutex) }

    /// Like ``wait()``, but gives up after `nanoseconds`.
    ///
    /// The corresponding C function is `pthread_cond_timedwait`.
    /// - Returns: `false` when the time ran out.
    @discardableResult
    public func wait(timeoutNanoseconds nanoseconds: UInt64) -> Bool {
        var deadline = clockDeadline(CLOCK_MONOTONIC, afterNanoseconds: nanoseconds)
        return pthread_cond_timedwait(self.condition, self.mutex, &deadline) != ETIMEDOUT
    }

    /// Wakes one waiting thread. The corresponding C function is `pthread_cond_signal`.
    public func signal() { pthread_cond_signal(self.condition) }

    /// Wakes every waiting thread. The corresponding C function is `pthread_cond_broadcast`.
    public func broadcast() { pthread_cond_broadcast(self.condition) }
}

/// The time on `clock` `nanoseconds` from now, as the `*_timedwait` functions take it.
///
/// The corresponding C function is `clock_gettime`.
func clockDeadline(_ clock: clockid_t, afterNanoseconds nanoseconds: UInt64) -> timespec {
    var deadline = timespec()
    clock_gettime(clock, &deadline)
    let total = UInt64(deadline.tv_nsec) + nanoseconds
    deadline.tv_sec += Int(total / 1_000_000_000)
    deadline.tv_nsec = Int(total % 1_000_000_000)
    return deadline
}
