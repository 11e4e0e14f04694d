// SPDX-License-Identifier: GPL-3.0-or-later

import Posix
import Synchronization

/// A sleep/wake-up pair between audio threads that takes no lock: the sleeper waits on a POSIX semaphore,
/// and a waker posts it only when someone sleeps (one atomic exchange otherwise).
///
/// Any thread may call `signal()`; one thread at a time calls `wait(unless:timeoutNanoseconds:)`.
public final class PlayerWakeup: Sendable {
    private let semaphore = Semaphore()
    private let sleeping = Atomic<Bool>(false)

    /// Creates a wake-up nobody waits on.
    public init() {}

    /// Wakes the sleeper, if any. Any thread; no lock, no system call when nobody sleeps.
    @inline(__always)
    public func signal() {
        if self.sleeping.exchange(false, ordering: .sequentiallyConsistent) {
            self.semaphore.post()
        }
    }

    /// Sleeps until signalled or the timeout passes, unless `ready()` already holds. May return early
    /// (a late post from an earlier round): callers re-check their condition in a loop.
    public func wait(unless ready: () -> Bool, timeoutNanoseconds: UInt64? = nil) {
        self.sleeping.store(true, ordering: .sequentiallyConsistent)
        if ready() {
            self.sleeping.store(false, ordering: .sequentiallyConsistent)
            return
        }
        if let timeoutNanoseconds {
            self.semaphore.wait(timeoutNanoseconds: timeoutNanoseconds)
        } else {
            self.semaphore.wait()
        }
        self.sleeping.store(false, ordering: .sequentiallyConsistent)
    }
}
