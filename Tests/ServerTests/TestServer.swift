// SPDX-License-Identifier: GPL-3.0-or-later

import EventLoop
import Foundation
import Model
import Network
import Playback
import Posix
import Server
import Synchronization
import TestSupport

/// Runs a `Server` on its own event-loop thread on 127.0.0.1 with an ephemeral port.
final class TestServer: Sendable {
    let port: UInt16
    private let loop: EventLoop
    private let finished: DispatchSemaphore
    private let player: LoopBound<ScriptedPlayer>

    init(_ configure: @Sendable (inout ServerOptions) -> Void = { _ in }) throws {
        var options = ServerOptions()
        options.listenAddresses = [.host("127.0.0.1", port: 0)]
        configure(&options)
        let ready = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let result = Mutex<(EventLoop, UInt16, LoopBound<ScriptedPlayer>)?>(nil)
        let frozen = options
        let thread = Thread {
            do {
                let loop = try EventLoop()
                let player = ScriptedPlayer()
                let server = Server(
                    loop: loop, options: frozen, logger: .discarding, player: player,
                    newPlayer: { ScriptedPlayer(volume: nil, outputs: []) })
                try server.start()
                let bound = LoopBound(player, loop: loop)
                result.withLock { $0 = (loop, server.boundAddresses.first?.port ?? 0, bound) }
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
        guard let (loop, port, player) = result.withLock({ $0 }) else { throw TestServerError.failedToStart }
        self.loop = loop
        self.port = port
        self.finished = finished
        self.player = player
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
