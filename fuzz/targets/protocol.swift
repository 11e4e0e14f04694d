// SPDX-License-Identifier: GPL-3.0-or-later

// Fuzz target `protocol`: the input is everything one client sends. A real `Server` (library of fake songs,
// a password, the standard command table) listens on an abstract Unix socket; each input is one connection,
// driven on this thread's event loop: the bytes are sent, the write side is shut, and every reply is read
// until the server closes. This covers the line framer, the tokenizer, command lists, idle, the command
// table, permission and argument checks, argument parsing and every handler.

import EventLoop
import Glibc
import Library
import MPDProtocol
import Model
import Posix
import Server
import TestSupport

/// The server, its loop and its library, created once per process.
final class ProtocolHarness {
    let loop: EventLoop
    let server: Server
    let address: SocketAddress
    let music: MusicDirectory

    init() throws {
        // MusicDirectory makes its directory under $TMPDIR: there it is inside the scratch directory, which is
        // removed at exit (the harness itself lives until then).
        setenv("TMPDIR", FuzzScratch.directory, 1)
        self.music = try MusicDirectory()
        try self.music.song("a/01.mp3", ["Artist": "Alpha", "Title": "One", "Album": "First", "Track": "1", "Date": "2001"])
        try self.music.song("a/02.mp3", ["Artist": "Beta", "Title": "Straße", "Album": "First", "Track": "2", "Genre": "Rock"])
        try self.music.song("b/c/03.mp3", ["AlbumArtist": "Gamma", "Title": "ß", "Disc": "1", "Composer": "Ǆ"])
        try self.music.song("b/04.mp3", [:])
        try self.music.song("top.mp3", ["Artist": "Alpha", "Title": "Top", "MUSICBRAINZ_TRACKID": "x"])

        self.loop = try EventLoop()
        let name = "fermata-fuzz-protocol-\(getpid())"
        self.address = .abstract(name: name)
        var options = ServerOptions()
        options.listenAddresses = [.abstract(name: name)]
        options.localPermissions = [.read, .add]
        options.passwords = ["fuzz": .all, "reader": [.read]]
        options.musicDirectory = self.music.path
        options.maxCommandListSize = 64 * 1024
        options.maxOutputBufferSize = 256 * 1024
        options.library = LibraryOptions(
            updater: Updater(root: self.music.path, reader: FakeReader(), logger: .discarding, concurrency: 1),
            databaseFile: nil)
        options.pictureReader = { _ in Picture(data: Array(repeating: 0xAB, count: 20_000), mimeType: "image/png") }
        options.commentReader = { _ in [("comment", "fuzz"), ("TXXX", "x")] }
        self.server = Server(
            loop: self.loop, options: options, logger: .discarding, player: ScriptedPlayer(),
            newPlayer: { ScriptedPlayer(volume: nil, outputs: []) })
        try self.server.start()
        // Wait for the first scan, so every input sees the same library.
        for _ in 0..<1000 {
            let reply = String(decoding: self.converse(Array("stats\n".utf8)), as: UTF8.self)
            if reply.contains("songs: 5\n") { return }
            usleep(10_000)
        }
        fatalError("the library scan did not finish")
    }

    /// Sends `input` on a new connection and returns everything the server sent until it closed.
    func converse(_ input: [UInt8]) -> [UInt8] {
        let fd: FileDescriptor
        do {
            fd = try Socket.socket(family: AF_UNIX)
            try self.address.withSockAddr { pointer, length in
                guard Glibc.connect(fd.rawValue, pointer, length) == 0 else { fatalError("connect: \(errno)") }
            }
        } catch {
            fatalError("cannot connect: \(error)")
        }
        var pending = input[...]
        var received: [UInt8] = []
        var finished = false
        var registration: EventLoop.Registration?
        let finish = {
            finished = true
            if let registration { self.loop.deregister(registration) }
            fd.close()
            self.loop.stop()
        }
        let shutWrite = { _ = Glibc.shutdown(fd.rawValue, Int32(SHUT_WR)) }
        if pending.isEmpty { shutWrite() }
        do {
            registration = try self.loop.register(fd, events: pending.isEmpty ? .input : [.input, .output]) { events in
                if !pending.isEmpty && events.contains(.output) {
                    switch try? pending.withUnsafeBytes({ (bytes) throws(SystemCallError) in try Socket.send(fd, bytes) }) {
                    case .processed(let count)?:
                        pending = pending.dropFirst(count)
                        if pending.isEmpty {
                            shutWrite()
                            self.loop.modify(registration!, events: .input)
                        }
                    case .wouldBlock?:
                        break
                    case nil:
                        // The server closed while input remained (it may close on a bad line): read the rest.
                        pending = []
                        self.loop.modify(registration!, events: .input)
                    }
                }
                var buffer = [UInt8](repeating: 0, count: 65536)
                while !finished {
                    let result = try? buffer.withUnsafeMutableBytes { (bytes) throws(SystemCallError) in try fd.read(into: bytes) }
                    switch result {
                    case .processed(let count)?:
                        if count == 0 { finish() } else { received += buffer[..<count] }
                    case .wouldBlock?:
                        return
                    case nil:
                        finish()
                    }
                }
            }
        } catch {
            fatalError("cannot register: \(error)")
        }
        do {
            try self.loop.run()
        } catch {
            fatalError("event loop: \(error)")
        }
        precondition(finished, "the loop stopped before the session ended")
        // Every session ends with its connection closed, so the server must hold no client now.
        precondition(self.server.clientCount == 0, "a closed session left a client behind")
        return received
    }
}

nonisolated(unsafe) private var harness: ProtocolHarness?  // reason: libFuzzer calls on one thread

@_cdecl("LLVMFuzzerTestOneInput")
public func protocolFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    if harness == nil {
        do {
            harness = try ProtocolHarness()
        } catch {
            fatalError("cannot start the server: \(error)")
        }
    }
    _ = harness!.converse(Array(fuzzInput(data, size)))
    return 0
}
