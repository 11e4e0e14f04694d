// SPDX-License-Identifier: GPL-3.0-or-later

import EventLoop
import Model
import Network
import Playback
import Posix
import Synchronization

/// What the httpd output tells its listeners in the response headers.
struct HttpdStreamInfo: Sendable {
    /// `name`, `genre`, `website` (the ICY headers).
    var name: String
    var genre: String
    var website: String
    /// The encoder's MIME type (`application/octet-stream` when it has none).
    var contentType: String
    /// `max_clients` (0: no limit).
    var maxClients: Int
}

/// The httpd output's listeners: a thread of its own running an event loop over the listening sockets and
/// the listeners' connections, fed from the ``StreamBroadcast`` ring. The server's own event loop never sees
/// these sockets, and the output thread never waits for them.
///
/// `@unchecked Sendable`: `start` and `stop` are called by the output's owner (enable, disable) one at a time;
/// the loop's state is confined to its thread.
final class HttpdServer: @unchecked Sendable {
    private let broadcast: StreamBroadcast
    private let info: HttpdStreamInfo
    private let logger: Logger
    private let thread = LoopThread(name: "httpd")

    init(broadcast: StreamBroadcast, info: HttpdStreamInfo, logger: Logger) {
        self.broadcast = broadcast
        self.info = info
        self.logger = logger
    }

    /// Starts serving the bound sockets on a new thread; returns once its loop runs.
    func start(_ sockets: [BoundSocket]) {
        let broadcast = self.broadcast
        let info = self.info
        let logger = self.logger
        self.thread.serve(sockets, label: "httpd", logger: logger) { loop in
            HttpdLoopState(loop: loop, broadcast: broadcast, info: info, logger: logger).core
        }
    }

    /// Closes every listener and socket and ends the thread.
    func stop() { self.thread.stop() }
}

/// The httpd thread's state: the listeners (``StreamServerLoop``) and what they share. Loop-confined; kept by
/// the core's closures.
private final class HttpdLoopState {
    let core: StreamServerLoop<HttpdClient>
    let info: HttpdStreamInfo
    /// The copy buffer every client fills its connection from.
    var scratch = [UInt8](repeating: 0, count: 16 * 1024)

    var broadcast: StreamBroadcast { self.core.broadcast }
    var logger: Logger { self.core.logger }

    init(loop: EventLoop, broadcast: StreamBroadcast, info: HttpdStreamInfo, logger: Logger) {
        self.core = StreamServerLoop(
            loop: loop, broadcast: broadcast, logger: logger, label: "httpd", inputCapacity: 4096)
        self.info = info
        // As mpd: up to `max_clients`.
        self.core.accepts = { count in info.maxClients == 0 || count < info.maxClients }
        self.core.makeClient = { connection in HttpdClient(connection: connection, state: self) }
        self.core.onWake = { cancelled, metadataChanged in
            self.wake(cancelled: cancelled, metadataChanged: metadataChanged)
        }
    }

    func remove(_ client: HttpdClient) { self.core.remove(client) }

    /// New pages, a cancel or new metadata.
    private func wake(cancelled: Bool, metadataChanged: Bool) {
        let metadata = metadataChanged ? self.broadcast.currentMetadata : nil
        for client in Array(self.core.clients.values) {
            if cancelled { client.skipCancelled() }
            if metadataChanged { client.setMetadata(metadata) }
            client.pump()
            client.connection.flush()
        }
    }
}

/// One listener: its HTTP request, the response, then the stream from its own position in the ring, with
/// ICY metadata every 8192 bytes when it asked for them. Loop-confined.
private final class HttpdClient: ConnectionDelegate, StreamServerClient {
    /// `mpd`'s ICY metadata interval.
    static let metaint = 8192

    let connection: Connection
    private let state: HttpdLoopState
    private enum Phase { case request, headers, response }
    private var phase = Phase.request
    private var head = false
    private var reject = false
    private var metadataRequested = false
    /// The stream position of the next byte this listener gets.
    private var position: UInt64 = 0
    /// Stream bytes sent since the last metadata block.
    private var metadataFill = 0
    private var metadata: [UInt8]?
    private var metadataSent = true

    init(connection: Connection, state: HttpdLoopState) {
        self.connection = connection
        self.state = state
        connection.delegate = self
    }

    func connectionDidRead(_ connection: Connection) {
        while self.phase != .response {
            let input = connection.inputBytes
            guard let newline = input.firstIndex(of: UInt8(ascii: "\n")) else {
                if connection.inputEnded || connection.isInputFull { connection.closeNow() }
                return
            }
            var line = input[input.startIndex..<newline]
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            let text = String(decoding: line, as: UTF8.self)
            connection.consumeInput(newline + 1 - input.startIndex)
            guard self.handle(text) else {
                connection.closeNow()
                return
            }
            if self.phase == .response {
                self.respond()
                return
            }
        }
        // Listeners send nothing once the stream flows; mpd hangs up on one that does.
        if !connection.inputBytes.isEmpty || connection.inputEnded { connection.closeNow() }
    }

    func connectionDidDrain(_ connection: Connection) { self.pump() }

    func connectionDidClose(_ connection: Connection) { self.state.remove(self) }

    /// One request line, as `mpd`'s httpd client reads them; `false` hangs up.
    private func handle(_ line: String) -> Bool {
        switch self.phase {
        case .request:
            var rest: Substring
            if line.hasPrefix("HEAD /") {
                rest = line.dropFirst(6)
                self.head = true
            } else if line.hasPrefix("GET /") {
                rest = line.dropFirst(5)
            } else {
                self.state.logger.warning("httpd: malformed request line from client")
                return false
            }
            for blocked in ["favicon.ico", "robots.txt", "sitemap.xml"]
            where rest.hasPrefix(blocked) && (rest.count == blocked.count || rest.dropFirst(blocked.count).first == " ")
            {
                self.reject = true
            }
            if rest.hasPrefix(".well-known/") { self.reject = true }
            guard let space = rest.firstIndex(of: " ") else {
                // HTTP/0.9: no headers follow.
                if self.head { return false }
                self.phase = .response
                return true
            }
            rest = rest[rest.index(after: space)...]
            guard rest.hasPrefix("HTTP/") else {
                if self.head { return false }
                self.phase = .response
                return true
            }
            self.phase = .headers
        case .headers:
            if line.isEmpty {
                self.phase = .response
            } else if line.lowercased().hasPrefix("icy-metadata: 1") || line.lowercased().hasPrefix("icy-metadata:1") {
                self.metadataRequested = self.state.broadcast.metadataSupported.load(ordering: .acquiring)
            }
        case .response:
            break
        }
        return true
    }

    private func respond() {
        let info = self.state.info
        let response: String
        if self.reject {
            response = "HTTP/1.1 404 not found\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n404 not found"
        } else if self.metadataRequested {
            response =
                "HTTP/1.1 200 OK\r\n" + "icy-notice1:<BR>This stream requires an audio player!<BR>\r\n"
                + "icy-notice2:MPD - The music player daemon<BR>\r\n" + "icy-name: \(info.name)\r\n"
                + "icy-genre: \(info.genre)\r\n" + "icy-url: \(info.website)\r\n" + "icy-pub:1\r\n"
                + "icy-metaint:\(Self.metaint)\r\n" + "Content-Type: \(info.contentType)\r\n"
                + "Connection: close\r\n" + "Pragma: no-cache\r\n" + "Cache-Control: no-cache, no-store\r\n"
                + "Access-Control-Allow-Origin: *\r\n\r\n"
        } else {
            response =
                "HTTP/1.1 200 OK\r\n" + "Content-Type: \(info.contentType)\r\n" + "Connection: close\r\n"
                + "Pragma: no-cache\r\n" + "Cache-Control: no-cache, no-store\r\n"
                + "Access-Control-Allow-Origin: *\r\n\r\n"
        }
        self.connection.write(response)
        if self.head || self.reject {
            self.connection.closeAfterFlushing()
            return
        }
        // The header page first, then the pages published from now on, as mpd's clients get them.
        self.writeStream(self.state.broadcast.currentHeader)
        self.position = self.state.broadcast.written.load(ordering: .acquiring)
        self.metadata = self.state.broadcast.currentMetadata
        self.metadataSent = self.metadata == nil
        self.pump()
    }

    /// Forgets what was published before the cancel and not sent yet.
    func skipCancelled() {
        guard self.phase == .response else { return }
        self.position = self.state.broadcast.positionAfterCancel(from: self.position)
    }

    func setMetadata(_ block: [UInt8]?) {
        guard block != nil else { return }
        self.metadata = block
        self.metadataSent = false
    }

    /// Writes stream bytes, with a metadata block (or a zero length byte) every `metaint` bytes.
    private func writeStream(_ bytes: some Collection<UInt8>) {
        guard self.metadataRequested else {
            self.connection.write(bytes)
            return
        }
        var rest = bytes[...]
        while !rest.isEmpty {
            if self.metadataFill == Self.metaint {
                if !self.metadataSent, let metadata = self.metadata {
                    self.connection.write(metadata)
                    self.metadataSent = true
                } else {
                    self.connection.write(CollectionOfOne(UInt8(0)))
                }
                self.metadataFill = 0
            }
            let count = min(rest.count, Self.metaint - self.metadataFill)
            let end = rest.index(rest.startIndex, offsetBy: count)
            self.connection.write(rest[..<end])
            self.metadataFill += count
            rest = rest[end...]
        }
    }

    /// Moves stream bytes from the ring to the connection until its buffer is full or the ring is empty.
    func pump() {
        guard self.phase == .response, !self.connection.isClosed, !self.head, !self.reject else { return }
        let broadcast = self.state.broadcast
        while self.connection.pendingOutputCount < self.connection.lowWaterMark {
            let written = broadcast.written.load(ordering: .acquiring)
            if written - self.position > UInt64(StreamBroadcast.listenerBacklog) {
                // Too slow: its backlog goes, as mpd clears a slow client's queue.
                self.position = broadcast.newestPageStart
                self.state.logger.debug("httpd: client is too slow, flushing its queue")
            }
            guard written > self.position else { return }
            let copied = self.state.scratch.withUnsafeMutableBytes { broadcast.copy(from: self.position, into: $0) }
            guard let copied else {
                self.position = broadcast.newestPageStart
                continue
            }
            self.writeStream(self.state.scratch[0..<copied])
            self.position += UInt64(copied)
        }
    }
}
