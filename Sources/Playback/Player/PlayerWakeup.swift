// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Synchronization

/// A sleep/wake-up pair between audio threads that takes no lock: the sleeper waits on a POSIX semaphore,
/// and a waker posts it only when someone sleeps (one atomic exchange otherwise).
///
/// Any thread may call `signal()`; one thread at a time calls `wait(unless:timeoutNanoseconds:)`.
/// `@unchecked Sendable`: the semaphore lives at a stable heap address and is touched only by `sem_*` calls,
/// which are thread-safe.
final class PlayerWakeup: @unchecked Sendable {
    private let semaphore: UnsafeMutablePointer<sem_t>
    private let sleeping = Atomic<Bool>(false)

    init() {
        self.semaphore = .allocate(capacity: 1)
        sem_init(self.semaphore, 0, 0)
    }

    deinit {
        sem_destroy(self.semaphore)
        self.semaphore.deallocate()
    }

    /// Wakes the sleeper, if any. Any thread; no lock, no system call when nobody sleeps.
    @inline(__always)
    func signal() {
        if self.sleeping.exchange(false, ordering: .sequentiallyConsistent) {
            sem_post(self.semaphore)
        }
    }

    /// Sleeps until signalled or the timeout passes, unless `ready()` already holds. May return early
    /// (a late post from an earlier round): callers re-check their condition in a loop.
    func wait(unless ready: () -> Bool, timeoutNanoseconds: UInt64? = nil) {
        self.sleeping.store(true, ordering: .sequentiallyConsistent)
        if ready() {
            self.sleeping.store(false, ordering: .sequentiallyConsistent)
            return
        }
        if let timeoutNanoseconds {
            // sem_timedwait takes CLOCK_REALTIME; our timeouts are short, so a clock step costs at most one wait.
            var deadline = timespec()
            clock_gettime(CLOCK_REALTIME, &deadline)
            let total = UInt64(deadline.tv_nsec) + timeoutNanoseconds
            deadline.tv_sec += Int(total / 1_000_000_000)
            deadline.tv_nsec = Int(total % 1_000_000_000)
            _ = sem_timedwait(self.semaphore, &deadline)
        } else {
            _ = sem_wait(self.semaphore)
        }
        self.sleeping.store(false, ordering: .sequentiallyConsistent)
    }
}

/// The monotonic clock in nanoseconds (`CLOCK_MONOTONIC`). Any thread; no allocation.
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
