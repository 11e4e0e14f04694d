// SPDX-License-Identifier: GPL-3.0-or-later

import CALSA  // pollfd: alsa-lib's headers own <poll.h> in the module graph
import Glibc
import Playback
import Posix
import Synchronization

/// A sticky interrupt request plus the eventfd that wakes a `poll` waiting for a device, and the wake-up of a
/// sleep on a clock (a pause, which waits for no device).
///
/// `interrupt()` from any thread; `wait`, `sleep` and `consume` from the one thread that owns the device. Each
/// interrupt cuts short one wait: the one in progress, or the next if none is.
final class InterruptibleWait: Sendable {
    private let event: FileDescriptor
    private let pending = Atomic<Bool>(false)
    private let sleeper = PlayerWakeup()

    /// Creates the eventfd.
    init() throws(OutputError) {
        do {
            self.event = try EventFD.eventfd()
        } catch {
            throw OutputError("\(error)")
        }
    }

    deinit { self.event.close() }

    /// Requests that the current or next wait return. Any thread.
    func interrupt() {
        self.pending.store(true, ordering: .releasing)
        EventFD.signal(self.event)
        self.sleeper.signal()
    }

    /// Whether an interrupt was requested since the last call; clears the request.
    func consume() -> Bool {
        self.pending.exchange(false, ordering: .acquiringAndReleasing)
    }

    /// Waits until one of the first `count` entries of `descriptors` is ready, an interrupt arrives, or
    /// `timeoutMilliseconds` pass (-1: no limit). `descriptors` must have room for `count + 1` entries; the last one
    /// is used for the eventfd. No allocation.
    ///
    /// - Returns: `true` when interrupted (the request is consumed).
    func wait(_ descriptors: UnsafeMutablePointer<pollfd>, count: Int, timeoutMilliseconds: Int32) -> Bool {
        if self.consume() { return true }
        descriptors[count] = pollfd(fd: self.event.rawValue, events: Int16(POLLIN), revents: 0)
        // EINTR or another poll failure only ends this wait early; the caller looks at the device again.
        _ = poll(descriptors, nfds_t(count + 1), timeoutMilliseconds)
        if descriptors[count].revents & Int16(POLLIN) != 0 { EventFD.drain(self.event) }
        return self.consume()
    }

    /// Sleeps on `clock` until it reaches `deadline` or an interrupt arrives. No allocation.
    ///
    /// - Returns: `true` when interrupted (the request is consumed, and the eventfd drained so that the next `wait`
    ///   does not end at once for it).
    func sleep(until deadline: UInt64, on clock: any PlaybackClock) -> Bool {
        if self.consume() { return true }
        clock.sleep(until: deadline, on: self.sleeper) { self.pending.load(ordering: .acquiring) }
        guard self.consume() else { return false }
        EventFD.drain(self.event)
        return true
    }
}
