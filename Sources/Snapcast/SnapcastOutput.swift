// SPDX-License-Identifier: GPL-3.0-or-later

import Encoders
import Model
import Network
import Playback
import Posix
import Synchronization

/// `type "snapcast"`: a Snapcast server of its own, as `mpd` 0.23's snapcast output: snapclients connect to it
/// (`snapclient -h HOST -p 1704`, no snapserver) and get the stream as PCM in a WAV header (`mpd`'s wave encoder),
/// each chunk stamped with when it was played here; they play it a second later (the server settings' buffer),
/// in sync with each other.
///
/// The output thread encodes (only while a client is connected), paced in real time, and publishes each chunk
/// with its time into a ring; the clients are served by a thread of its own (``SnapcastLoopState``), which frames
/// the chunks for each. The listening socket is bound while the output is enabled; clients are taken while a
/// stream is open and hung up on when it closes (stop, the end of the queue), as `mpd` does.
///
/// Used on its output thread, except `interrupt()` (any thread). `@unchecked Sendable`: the encoder, timer and
/// buffers are confined to the output thread; what it shares with the server thread is atomic or mutex-guarded
/// (``StreamBroadcast``, ``SnapcastProgress``).
public final class SnapcastOutput: AudioOutput, @unchecked Sendable {
    public let plugin = "snapcast"

    /// The most encoded bytes one chunk carries (`mpd` reads its encoder in pieces this large).
    static let chunkCapacity = 32768
    /// A chunk's record in the ring: its time (nanoseconds of the monotonic clock) and size, then the bytes.
    static let recordHeaderSize = 12

    private let prepared: any PreparedEncoder
    private let addresses: [ListenAddress]
    private let broadcast: StreamBroadcast
    private let progress: SnapcastProgress
    private let thread = LoopThread(name: "snapcast")
    private let logger: Logger
    /// Announces `_snapcast._tcp` while enabled (`zeroconf`, a nonzero `port`); `nil` when not.
    private let zeroconf: (announcer: any ServiceAnnouncer, port: UInt16)?
    private var withdraw: (@Sendable () -> Void)?
    /// Where it listens while enabled (the real port when 0 was asked for).
    private(set) var boundAddresses: [SocketAddress] = []
    private let clock: any PlaybackClock
    private var encoder: (any Encoder)?
    private var timer: OutputTimer
    private let interrupted = Atomic<Bool>(false)
    /// One chunk's record, sized once.
    private var record: [UInt8] = []
    /// PCM given to the encoder since it last produced anything.
    private var unflushed = 0

    /// Creates the output; nothing is bound until it is enabled.
    ///
    /// - Throws: `OutputError` when the ring's wake-up descriptor cannot be made.
    init(
        prepared: any PreparedEncoder, addresses: [ListenAddress],
        zeroconf: (announcer: any ServiceAnnouncer, port: UInt16)? = nil, clock: any PlaybackClock = SystemClock(),
        logger: Logger
    ) throws(OutputError) {
        self.prepared = prepared
        self.zeroconf = zeroconf
        self.addresses = addresses
        self.clock = clock
        self.timer = OutputTimer(clock: clock)
        do {
            self.broadcast = try StreamBroadcast()
        } catch {
            throw OutputError("\(error)")
        }
        self.progress = SnapcastProgress()
        self.logger = logger
        self.record.reserveCapacity(Self.recordHeaderSize + Self.chunkCapacity)
    }

    deinit { self.disable() }

    /// Binds the listening sockets (`bind_to_address`, `port`) and serves them on a thread of their own
    /// (``SnapcastLoopState``); returns once it runs.
    public func enable() throws(OutputError) {
        let sockets: [BoundSocket]
        do throws(ListenAddressError) {
            let logger = self.logger.labelled("server_socket")
            sockets = try ListenAddress.bind(self.addresses) { logger.error($0) }
        } catch {
            throw OutputError(error.description)
        }
        let (broadcast, progress, clock, logger) = (self.broadcast, self.progress, self.clock, self.logger)
        self.thread.serve(sockets, label: "snapcast", logger: logger) { loop in
            SnapcastLoopState(loop: loop, broadcast: broadcast, progress: progress, clock: clock, logger: logger).core
        }
        self.boundAddresses = sockets.map(\.address)
        if let zeroconf {
            // As mpd: the output announces itself under mpd's own name.
            self.withdraw = zeroconf.announcer.announce(
                name: "Music Player Daemon", type: "_snapcast._tcp", port: zeroconf.port,
                listeners: self.boundAddresses)
        }
    }

    /// Withdraws the announcement, closes every client and socket and ends the thread.
    public func disable() {
        self.withdraw?()
        self.withdraw = nil
        self.thread.stop()
    }

    public func open(_ format: AudioFormat) throws(OutputError) -> AudioFormat {
        let opened = try self.prepared.openForOutput(format)
        self.encoder = opened.encoder
        self.unflushed = 0
        self.timer.open(opened.format)
        // The encoder's first bytes (the WAV header) are the codec header every client gets after its Hello.
        var header: [UInt8] = []
        opened.encoder.read { header.append(contentsOf: $0) }
        self.broadcast.open(header: header)
        return opened.format
    }

    public func close() {
        self.broadcast.close()
        self.encoder = nil
        self.timer.reset()
    }

    /// Waits until the previous write would have been heard, then encodes (while a client is connected) and
    /// publishes the chunks stamped with the time now, as `mpd` stamps what it plays.
    public func play(_ data: UnsafeRawBufferPointer) throws(OutputError) -> Int {
        self.timer.wait(ahead: 0, wakeup: self.progress.wakeup, interrupted: self.interrupted)
        self.interrupted.store(false, ordering: .releasing)
        let now = self.clock.now()
        if self.broadcast.listeners.load(ordering: .acquiring) > 0, let encoder = self.encoder {
            do throws(EncoderError) {
                try encoder.write(data)
                self.unflushed += data.count
                if self.unflushed >= 65536 {
                    // Much input and no output yet: make the encoder give what it has.
                    try? encoder.flush()
                    self.unflushed = 0
                }
            } catch {
                throw OutputError(error.message)
            }
            var published = false
            encoder.read { bytes in
                var offset = 0
                while offset < bytes.count {
                    let count = min(Self.chunkCapacity, bytes.count - offset)
                    self.publish(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)]), time: now)
                    offset += count
                }
                published = published || !bytes.isEmpty
            }
            if published {
                self.unflushed = 0
                self.broadcast.signal()
            }
        }
        self.timer.add(data.count)
        return data.count
    }

    /// Puts one chunk's record into the ring (no allocation: `record` keeps its capacity).
    private func publish(_ bytes: UnsafeRawBufferPointer, time: UInt64) {
        self.record.removeAll(keepingCapacity: true)
        SnapcastRecord.appendHeader(time: time, size: bytes.count, to: &self.record)
        self.record.append(contentsOf: bytes)
        self.record.withUnsafeBytes { self.broadcast.publish($0) }
    }

    public var delayFrames: Int { self.timer.delayFrames }

    /// Waits until every client that takes data was handed every chunk, as `mpd` waits for its clients'
    /// queues to empty (not for the chunks to be heard: they play a second later on the clients).
    public func drain() throws(OutputError) -> Bool {
        let end = self.broadcast.written.load(ordering: .acquiring)
        while self.progress.handedOut.load(ordering: .acquiring) < end {
            if self.interrupted.exchange(false, ordering: .acquiringAndReleasing) { return false }
            self.broadcast.signal()
            self.progress.wakeup.wait(
                unless: {
                    self.interrupted.load(ordering: .acquiring)
                        || self.progress.handedOut.load(ordering: .acquiring) >= end
                }, timeoutNanoseconds: 10_000_000)
        }
        self.interrupted.store(false, ordering: .releasing)
        self.timer.reset()
        return true
    }

    /// Clients skip what they were not handed yet (seek, skip), as mpd clears its clients' queues.
    public func cancel() {
        self.timer.reset()
        self.broadcast.cancel()
    }

    public var hasPauseMode: Bool { true }
    /// Stays paused: nothing is sent (clients stay connected and play silence once their buffer ran out), and
    /// the clock starts again with the next write.
    public func pause() -> Bool {
        self.timer.reset()
        if !self.interrupted.load(ordering: .acquiring) {
            self.progress.wakeup.wait(
                unless: { self.interrupted.load(ordering: .acquiring) }, timeoutNanoseconds: 100_000_000)
        }
        self.interrupted.store(false, ordering: .releasing)
        return true
    }

    public func interrupt() {
        self.interrupted.store(true, ordering: .releasing)
        self.progress.wakeup.signal()
    }

    /// A new song: its artist, album, title and MusicBrainz track id go to every connected client as
    /// `StreamTags`, as `mpd` sends them (nothing when no client is connected or none of them is set).
    public func sendTag(_ tags: [TagItem]) {
        guard self.broadcast.listeners.load(ordering: .acquiring) > 0,
            let json = SnapcastMessage.streamTagsJSON(tags)
        else { return }
        self.broadcast.setMetadata(json)
    }
}

/// How a chunk is kept in the ring between the output thread and the server thread: its time and size
/// (little-endian), then its bytes.
enum SnapcastRecord {
    /// Appends a record's header.
    static func appendHeader(time: UInt64, size: Int, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: time >> UInt64(shift))) }
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: size >> shift)) }
    }

    /// Reads a record's header: the chunk's time and size.
    static func header(_ bytes: UnsafeRawBufferPointer) -> (time: UInt64, size: Int) {
        let time = bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self).littleEndian
        let size = bytes.loadUnaligned(fromByteOffset: 8, as: UInt32.self).littleEndian
        return (time, Int(size))
    }
}

/// What the server thread tells the output thread: how far into the ring every client that takes data was
/// handed the stream (for `drain`), and a wake-up when that moves. `Sendable`: an atomic and a wake-up.
final class SnapcastProgress: Sendable {
    /// A ring position every client that takes data has been handed everything before.
    let handedOut = Atomic<UInt64>(0)
    /// Wakes the output thread (drain, pause, the timer's waits, `interrupt()`).
    let wakeup = PlayerWakeup()
}

/// The `snapcast` output plugin: `bind_to_address` (default: every address), `port` (1704), and `zeroconf`
/// (default yes: `_snapcast._tcp` announced as "Music Player Daemon"); a fully defined `format` is required, as
/// `mpd` requires it. The stream is always PCM in a WAV header (`mpd` 0.23 takes no `encoder`). No hardware mixer.
public struct SnapcastOutputPlugin: OutputPlugin {
    public let name = "snapcast"
    /// As `mpd`'s (`FLAG_NEED_FULLY_DEFINED_AUDIO_FORMAT`): the block's `format` must fix everything.
    public let needsFullyDefinedFormat = true
    private let logger: Logger
    private let home: String
    private let announcer: (any ServiceAnnouncer)?

    /// Creates the plugin; `home` expands `~/` in `bind_to_address`; `announcer` publishes the outputs over
    /// DNS-SD (`nil`: a build or run without zeroconf).
    public init(logger: Logger, home: String, announcer: (any ServiceAnnouncer)?) {
        self.logger = logger
        self.home = home
        self.announcer = announcer
    }

    public func makeOutput(_ configuration: OutputConfiguration) throws(OutputError) -> any AudioOutput {
        let parameters = configuration.parameters
        let port = try configuration.unsigned("port", default: 1704)
        let address: ListenAddress
        do throws(ListenAddressError) {
            // As mpd: port 0 binds a port the system picks.
            address = try ListenAddress.output(
                bindToAddress: parameters["bind_to_address"], port: port,
                defaultPort: 1704, allowsPortZero: true, home: self.home)
        } catch {
            throw OutputError(error.description)
        }
        let prepared: any PreparedEncoder
        do throws(EncoderError) {
            prepared = try EncoderPlugins.configured(["encoder": "wave"])
        } catch {
            throw OutputError(error.message)
        }
        var zeroconf: (announcer: any ServiceAnnouncer, port: UInt16)?
        if let announcer = self.announcer, try configuration.bool("zeroconf", default: true), let port = address.port,
            port > 0
        {
            zeroconf = (announcer, port)
        }
        return try SnapcastOutput(
            prepared: prepared, addresses: [address], zeroconf: zeroconf,
            logger: self.logger.labelled("snapcast_output"))
    }

    public func makeHardwareMixer(
        _ configuration: OutputConfiguration, onChange: @escaping @Sendable () -> Void
    ) throws(OutputError) -> (any Mixer)? { nil }
}

/// Announces a service over DNS-SD for an output (the daemon's zeroconf publishing). Any thread.
public protocol ServiceAnnouncer: Sendable {
    /// Starts announcing a service of `type` named `name` on `port`, reached through `listeners` (on loopback
    /// only when they all are).
    ///
    /// - Returns: what withdraws it (the thread that announced calls it); `nil` when nothing is announced.
    func announce(name: String, type: String, port: UInt16, listeners: [SocketAddress]) -> (@Sendable () -> Void)?
}
