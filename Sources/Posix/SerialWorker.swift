// SPDX-License-Identifier: GPL-3.0-or-later

/// A long-lived named thread that runs the jobs handed to it one at a time, in the order they were handed over:
/// for short blocking work (file I/O) kept off the event loop without a thread per job (creating and ending one
/// costs 60–80 µs, more than writing a small file).
///
/// The thread starts with the first job and then waits for the next; once the worker is released it runs the jobs
/// still queued and ends. A job must not wait for a later job of the same worker.
///
/// Any thread.
public final class SerialWorker: Sendable {
    private let name: String
    private let mailbox = Mailbox()

    /// A worker whose thread is named `name` (see ``NamedThread``).
    public init(_ name: String) {
        self.name = name
    }

    deinit { self.mailbox.close() }

    /// Queues `job`, to run after the jobs queued before it. Never waits for a job. Any thread.
    public func submit(_ job: @escaping @Sendable () -> Void) {
        guard self.mailbox.put(job) else { return }
        // The first job: the thread that runs this one and every later one.
        let mailbox = self.mailbox
        NamedThread.detach(self.name) {
            while let job = mailbox.take() { job() }
        }
    }

    /// The queued jobs.
    ///
    /// `@unchecked Sendable`: every stored property is read and written with `condition`'s mutex held.
    private final class Mailbox: @unchecked Sendable {
        private let condition = Condition()
        private var jobs: [@Sendable () -> Void] = []
        /// Where the next job to run is in `jobs` (taken jobs are dropped once the queue is empty).
        private var next = 0
        private var started = false
        private var closed = false
        private static let taken: @Sendable () -> Void = {}

        /// Queues `job`; returns whether no thread runs the jobs yet (the caller starts it).
        func put(_ job: @escaping @Sendable () -> Void) -> Bool {
            self.condition.lock()
            defer { self.condition.unlock() }
            self.jobs.append(job)
            self.condition.signal()
            guard !self.started else { return false }
            self.started = true
            return true
        }

        /// No job comes any more: the thread ends once the queue is empty.
        func close() {
            self.condition.lock()
            self.closed = true
            self.condition.signal()
            self.condition.unlock()
        }

        /// The next job, waiting for one; `nil` once the worker is closed and every job was taken.
        func take() -> (@Sendable () -> Void)? {
            self.condition.lock()
            defer { self.condition.unlock() }
            while self.next == self.jobs.count {
                self.jobs.removeAll(keepingCapacity: true)
                self.next = 0
                if self.closed { return nil }
                self.condition.wait()
            }
            // The taken job's captures are released when it is done, not when the queue empties.
            let job = self.jobs[self.next]
            self.jobs[self.next] = Self.taken
            self.next += 1
            return job
        }
    }
}
