// SPDX-License-Identifier: GPL-3.0-or-later

import EventLoop
import Posix
import Synchronization

/// A thread of its own running an event loop, for a stream output's server (httpd, snapcast): its sockets never
/// reach the server's own loop.
///
/// `@unchecked Sendable`: `start` and `stop` are called by the owner one at a time (enable, disable); the loop
/// handle they share with the thread is behind a mutex.
public final class LoopThread: @unchecked Sendable {
    private let name: String
    private var thread: NamedThread?
    private let loop = Mutex<EventLoop?>(nil)

    /// Creates a thread named `name`, not started.
    public init(name: String) { self.name = name }

    /// Starts the thread and returns once its loop runs.
    ///
    /// - Parameters:
    ///   - setUp: Runs on the new thread with its loop before it runs; returns what to do once the loop ended.
    ///   - failed: Told (on the thread) when the loop cannot be made (`started` false: `setUp` is not called) or
    ///     fails while running (`started` true).
    public func start(
        setUp: @escaping @Sendable (EventLoop) -> () -> Void,
        failed: @escaping @Sendable (_ error: any Error, _ started: Bool) -> Void
    ) {
        let ready = Semaphore()
        self.thread = NamedThread(self.name) { [self] in
            let loop: EventLoop
            do { loop = try EventLoop() } catch {
                failed(error, false)
                ready.post()
                return
            }
            let tearDown = setUp(loop)
            self.loop.withLock { $0 = loop }
            ready.post()
            do { try loop.run() } catch { failed(error, true) }
            tearDown()
        }
        ready.wait()
    }

    /// Stops the loop (its owner's tear-down runs on the thread) and joins the thread.
    public func stop() {
        guard let thread = self.thread else { return }
        self.loop.withLock { $0 }?.stop()
        thread.join()
        self.thread = nil
        self.loop.withLock { $0 = nil }
    }
}
