// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Model
import Network
import Posix
import Server
import Synchronization

/// Runs a `Server` on its own event-loop thread on 127.0.0.1 with an ephemeral port.
final class TestServer: Sendable {
    let port: UInt16
    private let loop: EventLoop
    private let finished: DispatchSemaphore

    init(_ configure: @Sendable (inout ServerOptions) -> Void = { _ in }) throws {
        var options = ServerOptions()
        options.listenAddresses = [.host("127.0.0.1", port: 0)]
        configure(&options)
        let ready = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let result = Mutex<(EventLoop, UInt16)?>(nil)
        let frozen = options
        let thread = Thread {
            do {
                let loop = try EventLoop()
                let server = Server(loop: loop, options: frozen, logger: .discarding)
                try server.start()
                result.withLock { $0 = (loop, server.boundAddresses.first?.port ?? 0) }
                ready.signal()
                try loop.run()
                server.shutdown()
            } catch {
                ready.signal()
            }
            finished.signal()
        }
        thread.start()
        ready.wait()
        guard let (loop, port) = result.withLock({ $0 }) else { throw TestServerError.failedToStart }
        self.loop = loop
        self.port = port
        self.finished = finished
    }

    func stop() {
        self.loop.stop()
        self.finished.wait()
    }
}

enum TestServerError: Error {
    case failedToStart
}
