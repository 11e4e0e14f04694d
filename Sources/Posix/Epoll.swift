// SPDX-License-Identifier: GPL-3.0-or-later

import CLinux
import Glibc

/// Linux epoll, named after its C functions.
public enum Epoll {
    /// Readiness flags for a registration.
    public struct Events: OptionSet, Hashable, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        /// `EPOLLIN`: readable.
        public static let input = Events(rawValue: EPOLLIN.rawValue)
        /// `EPOLLOUT`: writable.
        public static let output = Events(rawValue: EPOLLOUT.rawValue)
        /// `EPOLLRDHUP`: the peer shut down its writing side.
        public static let readHangUp = Events(rawValue: EPOLLRDHUP.rawValue)
        /// `EPOLLHUP`: hang-up.
        public static let hangUp = Events(rawValue: EPOLLHUP.rawValue)
        /// `EPOLLERR`: an error condition.
        public static let error = Events(rawValue: EPOLLERR.rawValue)
    }

    /// One ready registration returned by `epoll_wait`.
    public struct Event: Sendable {
        /// What is ready.
        public var events: Events
        /// The 64-bit tag given at registration.
        public var tag: UInt64
    }

    /// Creates a close-on-exec epoll instance.
    ///
    /// The corresponding C function is `epoll_create1`.
    public static func epoll_create() throws(SystemCallError) -> FileDescriptor {
        FileDescriptor(rawValue: try syscall("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) })
    }

    /// Adds, modifies or removes a registration.
    ///
    /// The corresponding C function is `epoll_ctl`.
    public static func epoll_ctl(
        _ epoll: FileDescriptor, _ operation: Operation, _ fd: FileDescriptor, events: Events, tag: UInt64
    ) throws(SystemCallError) {
        var event = epoll_event()
        event.events = events.rawValue
        event.data.u64 = tag
        _ = try syscall("epoll_ctl") { CLinux.epoll_ctl(epoll.rawValue, operation.rawValue, fd.rawValue, &event) }
    }

    /// An `epoll_ctl` operation.
    public enum Operation: Sendable {
        /// `EPOLL_CTL_ADD`.
        case add
        /// `EPOLL_CTL_MOD`.
        case modify
        /// `EPOLL_CTL_DEL`.
        case delete

        var rawValue: Int32 {
            switch self {
            case .add: EPOLL_CTL_ADD
            case .modify: EPOLL_CTL_MOD
            case .delete: EPOLL_CTL_DEL
            }
        }
    }

    /// Room for the events one `epoll_wait` returns.
    public struct EventBuffer {
        fileprivate var entries: [epoll_event]

        /// A buffer for at most `capacity` events per wait.
        public init(capacity: Int) {
            self.entries = [epoll_event](repeating: epoll_event(), count: max(1, capacity))
        }

        /// Entry `index` of the last wait that filled it.
        public subscript(index: Int) -> Event {
            Event(events: Events(rawValue: self.entries[index].events), tag: self.entries[index].data.u64)
        }
    }

    /// Waits for events, filling `buffer`; returns how many arrived. `EINTR` counts as zero events.
    ///
    /// The corresponding C function is `epoll_wait`.
    public static func epoll_wait(
        _ epoll: FileDescriptor, into buffer: inout EventBuffer, timeoutMilliseconds: Int32
    ) throws(SystemCallError) -> Int {
        let count = buffer.entries.withUnsafeMutableBufferPointer {
            CLinux.epoll_wait(epoll.rawValue, $0.baseAddress, Int32($0.count), timeoutMilliseconds)
        }
        if count < 0 {
            let error = Errno.current
            if error == .interrupted { return 0 }
            throw SystemCallError("epoll_wait", error)
        }
        return Int(count)
    }
}

/// Linux eventfd: a counter other threads bump to wake the event loop.
public enum EventFD {
    /// Creates a non-blocking, close-on-exec eventfd.
    ///
    /// The corresponding C function is `eventfd`.
    public static func eventfd() throws(SystemCallError) -> FileDescriptor {
        FileDescriptor(rawValue: try syscall("eventfd") { CLinux.eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC)) })
    }

    /// Adds one to the counter. Safe from any thread.
    public static func signal(_ fd: FileDescriptor) {
        var one: UInt64 = 1
        _ = Glibc.write(fd.rawValue, &one, 8)
    }

    /// Resets the counter to zero.
    public static func drain(_ fd: FileDescriptor) {
        var value: UInt64 = 0
        _ = Glibc.read(fd.rawValue, &value, 8)
    }
}

/// Linux timerfd on the monotonic clock.
public enum TimerFD {
    /// Creates a non-blocking, close-on-exec monotonic timerfd.
    ///
    /// The corresponding C function is `timerfd_create`.
    public static func timerfd_create() throws(SystemCallError) -> FileDescriptor {
        FileDescriptor(
            rawValue: try syscall("timerfd_create") {
                CLinux.timerfd_create(CLOCK_MONOTONIC, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
            })
    }

    /// Arms the timer to fire once at an absolute monotonic time in nanoseconds, or disarms it with `nil`.
    ///
    /// The corresponding C function is `timerfd_settime` with `TFD_TIMER_ABSTIME`.
    public static func timerfd_settime(_ fd: FileDescriptor, deadline: UInt64?) {
        var spec = itimerspec()
        if let deadline {
            // A zero it_value would disarm the timer, so an already-past deadline is clamped to 1 ns.
            let value = max(deadline, 1)
            spec.it_value.tv_sec = Int(value / 1_000_000_000)
            spec.it_value.tv_nsec = Int(value % 1_000_000_000)
        }
        _ = CLinux.timerfd_settime(fd.rawValue, Int32(TFD_TIMER_ABSTIME), &spec, nil)
    }

    /// Acknowledges expirations so the descriptor stops being readable.
    public static func drain(_ fd: FileDescriptor) {
        var value: UInt64 = 0
        _ = Glibc.read(fd.rawValue, &value, 8)
    }
}

/// Linux signalfd: signals delivered as readable events instead of asynchronous handlers.
public enum SignalFD {
    /// Blocks `signals` for the calling thread (and threads it creates later) and returns a signalfd for them.
    ///
    /// Call it on the main thread before starting other threads.
    /// The corresponding C functions are `pthread_sigmask` and `signalfd`.
    public static func signalfd(_ signals: [Int32]) throws(SystemCallError) -> FileDescriptor {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        _ = pthread_sigmask(SIG_BLOCK, &set, nil)
        return FileDescriptor(
            rawValue: try syscall("signalfd") { CLinux.signalfd(-1, &set, Int32(SFD_NONBLOCK | SFD_CLOEXEC)) })
    }

    /// Reads one pending signal number, or `nil` when none is pending.
    public static func read(_ fd: FileDescriptor) -> Int32? {
        var info = signalfd_siginfo()
        let count = Glibc.read(fd.rawValue, &info, MemoryLayout<signalfd_siginfo>.size)
        guard count == MemoryLayout<signalfd_siginfo>.size else { return nil }
        return Int32(info.ssi_signo)
    }

    /// Ignores `SIGPIPE` process-wide: writes to closed sockets then fail with `EPIPE` instead of killing us.
    public static func ignoreBrokenPipe() {
        _ = Glibc.signal(SIGPIPE, SIG_IGN)
    }
}

/// The monotonic clock.
public enum MonotonicClock {
    /// Nanoseconds since an arbitrary fixed point.
    ///
    /// The corresponding C function is `clock_gettime(CLOCK_MONOTONIC)`.
    public static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}
