// SPDX-License-Identifier: GPL-3.0-or-later

import Encoders
import Model
import Network
import Playback
import Posix
import Synchronization

/// `type "httpd"`: a stream server listeners tune in to (`http://host:8000`), as `mpd`'s httpd output. The
/// output thread encodes (only while someone listens) and publishes pages into a ring, paced in real time;
/// the listeners are served by a thread of their own (``HttpdServer``). Listening sockets are bound while the
/// output is enabled; listeners are served while a stream is open and hung up on when it closes (stop).
///
/// Used on its output thread, except `interrupt()` (any thread). `@unchecked Sendable`: the encoder, timer
/// and buffers are confined to the output thread; the ring and flags it shares with the httpd thread are
/// atomics or mutex-guarded (``StreamBroadcast``).
public final class HttpdOutput: AudioOutput, @unchecked Sendable {
    public let plugin = "httpd"

    private let prepared: any PreparedEncoder
    private let addresses: [ListenAddress]
    private let broadcast: StreamBroadcast
    private let server: HttpdServer
    private var encoder: (any Encoder)?
    private var timer = OutputTimer()
    private let interrupted = Atomic<Bool>(false)
    private let wakeup = PlayerWakeup()
    /// One page of encoder output, sized once.
    private var page: [UInt8] = []
    /// PCM given to the encoder since it last produced anything.
    private var unflushed = 0
    /// A little silence in the stream's format, played while paused (listeners stay connected).
    private var silence: [UInt8] = []
    /// Where a listening address that failed beside one that bound is logged, as `mpd` logs it.
    private let serverSocketLogger: Logger

    /// Creates the output; nothing is bound until it is enabled.
    ///
    /// - Throws: `OutputError` when the ring's wake-up descriptor cannot be made.
    init(prepared: any PreparedEncoder, addresses: [ListenAddress], info: HttpdStreamInfo, logger: Logger)
        throws(OutputError)
    {
        self.prepared = prepared
        self.addresses = addresses
        self.serverSocketLogger = logger.labelled("server_socket")
        do {
            self.broadcast = try StreamBroadcast()
        } catch {
            throw OutputError("\(error)")
        }
        self.server = HttpdServer(broadcast: self.broadcast, info: info, logger: logger)
        self.page.reserveCapacity(64 * 1024)
    }

    deinit { self.server.stop() }

    /// Binds the listening sockets (`bind_to_address`, `port`) and starts serving them.
    public func enable() throws(OutputError) {
        do throws(ListenAddressError) {
            let logger = self.serverSocketLogger
            self.server.start(try ListenAddress.bind(self.addresses) { logger.error($0) })
        } catch {
            throw OutputError(error.description)
        }
    }

    public func disable() { self.server.stop() }

    public func open(_ format: AudioFormat) throws(OutputError) -> AudioFormat {
        let opened = try self.prepared.openForOutput(format)
        self.encoder = opened.encoder
        self.unflushed = 0
        // The first bytes after opening (Ogg or FLAC headers, the WAV header) go to every new listener first.
        self.readPage()
        self.broadcast.metadataSupported.store(!opened.encoder.implementsTag, ordering: .releasing)
        self.silence = [UInt8](repeating: 0, count: max(1, 1020 / opened.format.frameSize) * opened.format.frameSize)
        self.timer.open(opened.format)
        self.broadcast.open(header: self.page)
        return opened.format
    }

    public func close() {
        self.broadcast.close()
        self.encoder = nil
        self.timer.reset()
    }

    /// Reads what the encoder has ready into `page`.
    private func readPage() {
        self.page.removeAll(keepingCapacity: true)
        guard let encoder = self.encoder else { return }
        if self.unflushed >= 65536 {
            // Much input and no output yet: make the encoder give what it has (a partial Ogg page).
            try? encoder.flush()
            self.unflushed = 0
        }
        encoder.read { self.page.append(contentsOf: $0) }
        if !self.page.isEmpty { self.unflushed = 0 }
    }

    /// Publishes what the encoder has ready as one page and wakes the listeners' thread.
    private func broadcastFromEncoder() {
        self.readPage()
        guard !self.page.isEmpty else { return }
        self.page.withUnsafeBytes { self.broadcast.publish($0) }
        self.broadcast.signal()
    }

    /// Encodes (while someone listens) and takes the data after the previous write would have been heard.
    public func play(_ data: UnsafeRawBufferPointer) throws(OutputError) -> Int {
        if self.broadcast.listeners.load(ordering: .acquiring) > 0, let encoder = self.encoder {
            do throws(EncoderError) {
                try encoder.write(data)
            } catch {
                throw OutputError(error.message)
            }
            self.unflushed += data.count
            self.broadcastFromEncoder()
        }
        self.timer.wait(thenAdd: data.count, wakeup: self.wakeup, interrupted: self.interrupted)
        self.interrupted.store(false, ordering: .releasing)
        return data.count
    }

    public var delayFrames: Int { self.timer.delayFrames }

    public func drain() throws(OutputError) -> Bool {
        self.timer.drain(wakeup: self.wakeup, interrupted: self.interrupted)
    }

    /// Listeners skip what they did not get yet (seek, skip), as mpd cancels its clients' queues.
    public func cancel() {
        self.timer.reset()
        self.broadcast.cancel()
    }

    public var hasPauseMode: Bool { true }
    /// Stays paused: listeners get silence in real time (so they stay connected), as from mpd.
    public func pause() -> Bool {
        if self.broadcast.listeners.load(ordering: .acquiring) > 0, self.encoder != nil {
            let silence = self.silence
            // A failing encoder shows on the next real write; while paused, the silence is just skipped.
            _ = silence.withUnsafeBytes { bytes in try? self.play(bytes) }
        } else {
            self.timer.reset()
            if !self.interrupted.load(ordering: .acquiring) {
                self.wakeup.wait(
                    unless: { self.interrupted.load(ordering: .acquiring) }, timeoutNanoseconds: 100_000_000)
            }
            self.interrupted.store(false, ordering: .releasing)
        }
        return true
    }

    public func interrupt() {
        self.interrupted.store(true, ordering: .releasing)
        self.wakeup.signal()
    }

    /// A new song (or stream title): an Ogg encoder chains a stream carrying the tags; otherwise listeners who
    /// asked for ICY metadata get `StreamTitle='album - artist - title'` at their next interval, as from mpd.
    public func sendTag(_ tags: [TagItem]) {
        guard let encoder = self.encoder else { return }
        if encoder.implementsTag {
            try? encoder.preTag()
            self.broadcastFromEncoder()
            try? encoder.sendTag(tags)
            try? encoder.flush()
            self.readPage()
            if !self.page.isEmpty {
                self.broadcast.setHeader(self.page)
                self.page.withUnsafeBytes { self.broadcast.publish($0) }
                self.broadcast.signal()
            }
        } else if let block = Self.icyMetadata(tags) {
            self.broadcast.setMetadata(block)
        }
    }

    /// `mpd`'s ICY metadata block: a length byte (in 16-byte units), then `StreamTitle='…';StreamUrl='';`
    /// padded with spaces; `nil` when it would not fit.
    static func icyMetadata(_ tags: [TagItem]) -> [UInt8]? {
        let items = [TagType.album, .artist, .title].compactMap { type in tags.first { $0.type == type }?.value }
        var title = Array(items.joined(separator: " - ").utf8)
        // mpd's title buffer: (1 + 255 - 28) × 16 bytes with the terminating zero.
        let limit = (1 + 255 - 28) * 16 - 1
        if title.count > limit { title.removeLast(title.count - limit) }
        var text = Array("StreamTitle='".utf8) + title + Array("';StreamUrl='';".utf8)
        text += [UInt8](repeating: UInt8(ascii: " "), count: 15)
        let units = text.count / 16
        guard units <= 255 else { return nil }
        return [UInt8(units)] + text[0..<(units * 16)]
    }
}

/// The `httpd` output plugin: `bind_to_address` (default: every address), `port` (8000), `max_clients` (0: no
/// limit), `genre`, `website`, and an encoder's keys (`encoder`, default `vorbis`); the output's `name` is
/// the stream's `icy-name`. No hardware mixer.
public struct HttpdOutputPlugin: OutputPlugin {
    public let name = "httpd"
    private let logger: Logger
    private let home: String

    /// Creates the plugin; `home` expands `~/` in `bind_to_address`.
    public init(logger: Logger, home: String) {
        self.logger = logger
        self.home = home
    }

    public func makeOutput(_ configuration: OutputConfiguration) throws(OutputError) -> any AudioOutput {
        let parameters = configuration.parameters
        let prepared: any PreparedEncoder
        do throws(EncoderError) {
            prepared = try EncoderPlugins.configured(parameters)
        } catch {
            throw OutputError(error.message)
        }
        let port = try configuration.unsigned("port", default: 8000)
        let address: ListenAddress
        do throws(ListenAddressError) {
            address = try ListenAddress.output(
                bindToAddress: parameters["bind_to_address"], port: port,
                defaultPort: 8000, allowsPortZero: false, home: self.home)
        } catch {
            throw OutputError(error.description)
        }
        let maxClients = Int(try configuration.unsigned("max_clients", default: 0))
        let info = HttpdStreamInfo(
            name: configuration.name, genre: parameters["genre"] ?? "Set genre in config",
            website: parameters["website"] ?? "Set website in config",
            contentType: prepared.mimeType ?? "application/octet-stream", maxClients: maxClients)
        return try HttpdOutput(
            prepared: prepared, addresses: [address], info: info, logger: self.logger.labelled("httpd_output"))
    }

    public func makeHardwareMixer(
        _ configuration: OutputConfiguration, onChange: @escaping @Sendable () -> Void
    ) throws(OutputError) -> (any Mixer)? { nil }
}
