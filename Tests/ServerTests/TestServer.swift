// SPDX-License-Identifier: GPL-3.0-or-later

import EventLoop
import Foundation
import Model
import Network
import Playback
import Posix
import Synchronization
import TestSupport

@testable import Server

/// Runs a `Server` on its own event-loop thread on 127.0.0.1 with an ephemeral port.
final class TestServer: Sendable {
    let port: UInt16
    private let loop: EventLoop
    private let finished: DispatchSemaphore
    private let player: LoopBound<ScriptedPlayer>
    private let server: LoopBound<Server>

    /// Starts a server configured by `configure`, whose connection timeout runs on `clock`.
    init(
        clock: any PlaybackClock = SystemClock(), _ configure: @Sendable (inout ServerOptions) -> Void = { _ in }
    ) throws {
        var options = ServerOptions()
        options.listenAddresses = [.host("127.0.0.1", port: 0)]
        configure(&options)
        let ready = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let result = Mutex<(EventLoop, UInt16, LoopBound<ScriptedPlayer>, LoopBound<Server>)?>(nil)
        let frozen = options
        let thread = Thread {
            do {
                let loop = try EventLoop()
                let player = ScriptedPlayer()
                let server = Server(
                    loop: loop, options: frozen, logger: .discarding, player: player,
                    newPlayer: { ScriptedPlayer(volume: nil, outputs: []) }, clock: clock)
                try server.start()
                let bound = LoopBound(player, loop: loop)
                let boundServer = LoopBound(server, loop: loop)
                result.withLock { $0 = (loop, server.boundAddresses.first?.port ?? 0, bound, boundServer) }
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
        guard let (loop, port, player, server) = result.withLock({ $0 }) else {
            throw TestServerError.failedToStart
        }
        self.loop = loop
        self.port = port
        self.finished = finished
        self.player = player
        self.server = server
    }

    /// Runs `body` with the server on the loop thread, and waits for its result. Whatever the loop had to do
    /// before (timers a `ManualClock` fired, say) is done by then.
    func withServer<T: Sendable>(_ body: @escaping @Sendable (Server) -> T) -> T {
        let result = Mutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        self.server.execute { server in
            result.withLock { $0 = body(server) }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }!
    }

    /// Waits until `condition` holds for the server, looking every millisecond; `false` if it still does not
    /// after 10 s of real time (a safety net: no time is measured).
    func waitUntil(_ condition: @escaping @Sendable (Server) -> Bool) -> Bool {
        for _ in 0..<10_000 {
            if self.withServer(condition) { return true }
            usleep(1000)
        }
        return false
    }

    /// Runs `body` with the server's scripted player on the loop thread, and waits for it.
    func withPlayer(_ body: @escaping @Sendable (ScriptedPlayer) -> Void) {
        let done = DispatchSemaphore(value: 0)
        self.player.execute { player in
            body(player)
            done.signal()
        }
        done.wait()
    }

    func stop() {
        self.loop.stop()
        self.finished.wait()
    }
}

enum TestServerError: Error {
    case failedToStart
}
