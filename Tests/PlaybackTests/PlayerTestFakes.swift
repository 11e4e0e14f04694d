// SPDX-License-Identifier: GPL-3.0-or-later

import Dispatch
import EventLoop
import Formats
import Foundation
import Input
import Model
import Playback
import Synchronization
import TestSupport
import Testing

/// A decoder producing a ramp: frame `i` of the song holds `base + i` (wrapped to the sample width) in every
/// channel, so a capture shows any missing or repeated frame. Paths: `fake:<base>:<frames>[:<format>]`, or
/// `broken` (cannot open); a `halfgain` part makes the decoder report a track gain of −6.0206 dB (half the level).
struct RampDecoder: Decoder {
    let format: AudioFormat
    let totalFrames: UInt64?
    let base: Int64
    var position: UInt64 = 0
    /// Where the last `decode` started: the bit rate is 100 + the tenths of a second (at 44.1 kHz) there.
    var lastStart: UInt64 = 0
    var bitRate: Int { 100 + Int(self.lastStart / 4410) }
    /// `false` for paths with an `unseekable` part (as raw AAC): `seek(toFrame:)` then throws.
    var isSeekable = true
    /// What the decoder read in the file: set by a `halfgain` part.
    var replayGain: ReplayGainInfo?
    /// Called with `base` before every `decode` (the test learns how far the decoder thread got).
    var onDecode: (@Sendable (Int64) -> Void)?

    static let factory: @Sendable (String) throws(FormatError) -> any Decoder = { (path) throws(FormatError) in
        let parts = path.split(separator: ":").map(String.init)
        if parts.count == 4, parts[0] == "sine", let frequency = Double(parts[1]), let frames = UInt64(parts[2]),
            let rate = Int(parts[3])
        {
            return SineDecoder(
                format: AudioFormat(sampleRate: rate, sampleFormat: .float, channels: 2), totalFrames: frames,
                frequency: frequency)
        }
        guard parts.count >= 3, parts[0] == "fake", let base = Int64(parts[1]), let frames = UInt64(parts[2]) else {
            throw .notRecognized(path: path)
        }
        var format = AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2)
        if parts.count >= 6, let rate = Int(parts[3]), let channels = Int(parts[5]) {
            let formats: [String: SampleFormat] = ["16": .s16, "24": .s24, "32": .s32, "f": .float]
            format = AudioFormat(sampleRate: rate, sampleFormat: formats[parts[4]] ?? .s16, channels: channels)
        }
        var decoder = RampDecoder(format: format, totalFrames: frames, base: base)
        decoder.isSeekable = !parts.contains("unseekable")
        if parts.contains("halfgain") { decoder.replayGain = ReplayGainInfo(trackGain: -6.0206, trackPeak: 0.5) }
        return decoder
    }

    mutating func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        self.onDecode?(self.base)
        let frames = min(buffer.count / self.format.frameSize, Int(self.totalFrames! - self.position))
        self.lastStart = self.position
        var offset = 0
        for frame in 0..<frames {
            let value = self.base + Int64(self.position) + Int64(frame)
            for _ in 0..<self.format.channels {
                switch self.format.sampleFormat {
                case .s16: buffer.storeBytes(of: Int16(truncatingIfNeeded: value), toByteOffset: offset, as: Int16.self)
                case .float: buffer.storeBytes(of: Float(value) / 1_000_000, toByteOffset: offset, as: Float.self)
                default: buffer.storeBytes(of: Int32(truncatingIfNeeded: value), toByteOffset: offset, as: Int32.self)
                }
                offset += self.format.sampleFormat.bytesPerSample
            }
        }
        self.position += UInt64(frames)
        return frames
    }

    mutating func seek(toFrame frame: UInt64) throws(FormatError) -> UInt64 {
        guard self.isSeekable else { throw .decoder("Not seekable") }
        self.position = min(frame, self.totalFrames!)
        return self.position
    }
}

/// The ramp bases whose decoders have decoded (see `RampDecoder.onDecode`).
final class DecodedBases: Sendable {
    private let bases = Mutex<Set<Int64>>([])

    /// `RampDecoder.factory`, with the decoders reporting here.
    var factory: @Sendable (String) throws(FormatError) -> any Decoder {
        { [self] (path) throws(FormatError) in
            let decoder = try RampDecoder.factory(path)
            guard var ramp = decoder as? RampDecoder else { return decoder }
            ramp.onDecode = { base in _ = self.bases.withLock { $0.insert(base) } }
            return ramp
        }
    }

    func contains(_ base: Int64) -> Bool { self.bases.withLock { $0.contains(base) } }
}

/// A decoder producing a stereo float sine at half scale (`sine:<hertz>:<frames>:<rate>`).
struct SineDecoder: Decoder {
    let format: AudioFormat
    let totalFrames: UInt64?
    let frequency: Double
    var position: UInt64 = 0

    mutating func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        let frames = min(buffer.count / self.format.frameSize, Int(self.totalFrames! - self.position))
        for frame in 0..<frames {
            let time = Double(self.position + UInt64(frame)) / Double(self.format.sampleRate)
            let value = Float(0.5 * sin(2 * Double.pi * self.frequency * time))
            buffer.storeBytes(of: value, toByteOffset: frame * 8, as: Float.self)
            buffer.storeBytes(of: value, toByteOffset: frame * 8 + 4, as: Float.self)
        }
        self.position += UInt64(frames)
        return frames
    }

    mutating func seek(toFrame frame: UInt64) throws(FormatError) -> UInt64 {
        guard self.isSeekable else { throw .decoder("Not seekable") }
        self.position = min(frame, self.totalFrames!)
        return self.position
    }
}

/// An output recording everything it plays (in the format it chose), optionally paced like the null output (on
/// `clock`: a `ManualClock` the test advances, or the system's), optionally accepting only one format, optionally
/// failing to open.
final class CaptureOutput: AudioOutput, @unchecked Sendable {  // test double: state behind a Mutex
    let plugin = "capture"
    private let paced: NullOutput
    private let forced: AudioFormat?
    private let state = Mutex<(bytes: [UInt8], cancels: [Int], opens: [AudioFormat])>(([], [], []))
    let failOpen = Atomic<Bool>(false)
    /// While set, `play` waits (so the decoder can get ahead of an unpaced output).
    let held = Atomic<Bool>(false)
    /// `play` takes bytes up to this count, then waits until it is raised: a point in the stream where the
    /// output thread stands still, whatever the machine's load. Raise it to `Int.max` before stopping.
    let limit = Atomic<Int>(Int.max)
    /// Whether `play` waits for `held` or `limit` now: the output thread published the position of the write
    /// before.
    let stalled = Atomic<Bool>(false)
    /// Whether the output thread is in `pause()` now.
    let pausing = Atomic<Bool>(false)
    /// How many times the device was enabled and disabled.
    let enables = Atomic<Int>(0)
    let disables = Atomic<Int>(0)
    /// While set, `enable` fails.
    let failEnable = Atomic<Bool>(false)
    private let sentTags = Mutex<[[TagItem]]>([])
    /// How many streams were closed.
    let closes = Atomic<Int>(0)
    /// Whether the device has a pause mode; without one, `pause()` fails as the default one does.
    let hasPauseMode: Bool

    init(sync: Bool, format: AudioFormat? = nil, clock: any PlaybackClock = SystemClock(), hasPauseMode: Bool = true) {
        self.paced = NullOutput(sync: sync, clock: clock)
        self.forced = format
        self.hasPauseMode = hasPauseMode
    }

    var bytes: [UInt8] { self.state.withLock { $0.bytes } }
    /// Byte offsets where `cancel()` dropped the stream.
    var cancels: [Int] { self.state.withLock { $0.cancels } }
    var opens: [AudioFormat] { self.state.withLock { $0.opens } }
    /// The tags `sendTag` got, in order.
    var tags: [[TagItem]] { self.sentTags.withLock { $0 } }

    /// The captured 16-bit samples of channel 0.
    func samples16(channels: Int = 2) -> [Int16] {
        let bytes = self.bytes
        return stride(from: 0, to: bytes.count - 1, by: 2 * channels).map {
            Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8)
        }
    }

    /// The captured 24-bit samples (in 32-bit words) of channel 0.
    func samples24(channels: Int = 2) -> [Int32] {
        let bytes = self.bytes
        return stride(from: 0, to: bytes.count - 3, by: 4 * channels).map {
            Int32(
                bitPattern: UInt32(bytes[$0]) | UInt32(bytes[$0 + 1]) << 8 | UInt32(bytes[$0 + 2]) << 16
                    | UInt32(bytes[$0 + 3]) << 24)
        }
    }

    func enable() throws(OutputError) {
        if self.failEnable.load(ordering: .relaxed) { throw OutputError("cannot enable capture") }
        self.enables.add(1, ordering: .relaxed)
    }

    func disable() { self.disables.add(1, ordering: .relaxed) }

    func open(_ format: AudioFormat) throws(OutputError) -> AudioFormat {
        if self.failOpen.load(ordering: .relaxed) { throw OutputError("cannot open capture") }
        let chosen = self.forced ?? format
        self.state.withLock { $0.opens.append(chosen) }
        return try self.paced.open(chosen)
    }

    func close() {
        self.closes.add(1, ordering: .relaxed)
        self.paced.close()
    }

    func play(_ data: UnsafeRawBufferPointer) throws(OutputError) -> Int {
        while self.held.load(ordering: .relaxed) || self.bytes.count >= self.limit.load(ordering: .relaxed) {
            self.stalled.store(true, ordering: .releasing)
            usleep(1000)
        }
        self.stalled.store(false, ordering: .releasing)
        let frameSize = max(1, self.state.withLock { $0.opens.last?.frameSize ?? 1 })
        let room = self.limit.load(ordering: .relaxed) - self.bytes.count
        let allowed = room >= data.count ? data.count : room / frameSize * frameSize
        let count = try self.paced.play(UnsafeRawBufferPointer(rebasing: data[0..<max(frameSize, allowed)]))
        self.state.withLock { $0.bytes.append(contentsOf: data[0..<count]) }
        return count
    }

    var delayFrames: Int { self.paced.delayFrames }
    func drain() throws(OutputError) -> Bool { try self.paced.drain() }
    func cancel() {
        self.paced.cancel()
        self.state.withLock { $0.cancels.append($0.bytes.count) }
    }
    func pause() -> Bool {
        guard self.hasPauseMode else { return false }
        self.pausing.store(true, ordering: .releasing)
        defer { self.pausing.store(false, ordering: .releasing) }
        return self.paced.holdPaused()
    }
    func interrupt() { self.paced.interrupt() }
    func sendTag(_ tags: [TagItem]) { self.sentTags.withLock { $0.append(tags) } }
}

/// An event loop on its own thread with a player on it; the test talks to the player through `sync`. The
/// player's clock (output retries) is `clock`, which the test advances.
final class PlayerHarness: @unchecked Sendable {  // test double: `player` is only touched on the loop
    let loop: EventLoop
    private var player: Player!
    private let events = Mutex<[PlayerEvent]>([])
    /// The tokens of `decoderStarted` events, kept apart from `received`.
    private let decoderStarts = Mutex<[UInt64]>([])
    /// What the harness queues when the player asks for the song after the one with this token
    /// (`decoderStarting`, which `received` leaves out). Loop thread.
    var nextSong: (UInt64) -> PlayableSong? = { _ in nil }
    private let thread: Thread
    let clock: ManualClock

    init(
        outputs: [(OutputConfiguration, any AudioOutput, (any Mixer)?)], outputSlots: Int = 0,
        clock: ManualClock = ManualClock(), bufferSize: Int = 1 << 20,
        replayGain: ReplayGainSettings = ReplayGainSettings(), audioOutputFormat: String? = nil,
        decoders: @escaping @Sendable (String) throws(FormatError) -> any Decoder = RampDecoder.factory,
        streams: (@Sendable (String, InputCancellation, Bool) throws(FormatError) -> any Decoder)? = nil,
        apeReplayGainReader: (@Sendable (String) -> ReplayGainInfo?)? = nil,
        localPaths: (@Sendable (String, InputCancellation) -> String?)? = nil, logger: Logger = .discarding
    ) throws {
        self.clock = clock
        let ready = DispatchSemaphore(value: 0)
        let box = Mutex<EventLoop?>(nil)
        self.thread = Thread {
            let loop = try! EventLoop()
            box.withLock { $0 = loop }
            ready.signal()
            try? loop.run()
        }
        self.thread.start()
        ready.wait()
        self.loop = box.withLock { $0! }
        let outputs = UncheckedBox(outputs)
        self.sync { harness in
            harness.player = Player(
                loop: harness.loop, decoders: decoders, streams: streams,
                apeReplayGainReader: apeReplayGainReader, localPaths: localPaths, outputs: outputs.value,
                outputSlots: outputSlots, audioBufferSize: bufferSize,
                replayGain: replayGain, outputRetrySeconds: 0.2,
                audioOutputFormat: try? audioOutputFormat.map { text throws(AudioFormatParseError) in
                    try AudioFormatMask.parse(text, mask: true)
                },
                clock: clock, logger: logger)
            harness.player.onEvent = { [weak harness] event in
                guard let harness else { return }
                if case .decoderStarting(let token) = event {
                    // As the playlist: the song after this one, if the test has one.
                    if let next = harness.nextSong(token) { harness.player.queue(next) }
                    return
                }
                if case .decoderStarted(let token) = event {
                    harness.decoderStarts.withLock { $0.append(token) }
                    return
                }
                harness.events.withLock { $0.append(event) }
            }
        }
    }

    deinit {
        let player = UncheckedBox(self.player!)
        // The last reference may go on the loop itself (a task that held the harness finishes after the test
        // did): shut the player down right here then, as waiting for the loop from the loop would never end.
        if self.loop.isOnLoop {
            player.value.shutdown()
            self.loop.stop()
            return
        }
        let done = DispatchSemaphore(value: 0)
        self.loop.execute {
            player.value.shutdown()
            done.signal()
        }
        done.wait()
        self.loop.stop()
    }

    /// Runs `body` with the player on the loop and returns its result.
    @discardableResult
    func sync<T>(_ body: @escaping (PlayerHarness) -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        let result = UncheckedBox<T?>(nil)
        let work = UncheckedBox(body)
        self.loop.execute {
            result.value = work.value(self)
            done.signal()
        }
        done.wait()
        return result.value!
    }

    func withPlayer<T>(_ body: @escaping (Player) -> T) -> T { self.sync { body($0.player) } }

    /// Waits until every output applied what it was asked last (``Player/whenOutputsApplied(_:)``).
    func waitForOutputs() {
        let applied = DispatchSemaphore(value: 0)
        self.withPlayer { $0.whenOutputsApplied { applied.signal() } }
        applied.wait()
    }

    var received: [PlayerEvent] { self.events.withLock { $0 } }

    /// Lets `seconds` pass on `clock` in 10 ms steps, each once `outputs` paced outputs played what was due and
    /// sleep until their next write: they stand at a known point of the stream whatever the machine's load.
    /// (Steps, because an output more than 100 ms late starts its clock again rather than race to catch up.)
    func advance(seconds: Double, outputs: Int = 1) {
        var left = UInt64(seconds * 1e9)
        while left > 0 {
            #expect(self.clock.waitForSleepers(outputs), "the outputs did not catch up with the clock")
            let step = min(left, 10_000_000)
            self.clock.advance(nanoseconds: step)
            left -= step
        }
        #expect(self.clock.waitForSleepers(outputs), "the outputs did not catch up with the clock")
    }

    /// The songs whose decoder start-up was reported (`decoderStarted`), in order.
    var startedDecoders: [UInt64] { self.decoderStarts.withLock { $0 } }

    /// Waits up to `timeout` seconds of real time until `condition` holds for the events received; with
    /// `advancing`, moves the clock on by 10 ms whenever something sleeps on it (time passes as fast as the
    /// outputs paced by it play).
    @discardableResult
    func waitFor(timeout: Double = 10, advancing: Bool = false, _ condition: ([PlayerEvent]) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            if condition(self.received) { return true }
            if advancing && self.clock.sleeperCount > 0 {
                self.clock.advance(nanoseconds: 10_000_000)
            } else {
                usleep(2000)
            }
        }
        return condition(self.received)
    }
}

/// Polls `condition` for up to 10 s of real time.
func eventually(_ condition: () -> Bool) -> Bool {
    for _ in 0..<5000 where !condition() { usleep(2000) }
    return condition()
}

/// Moves a non-Sendable value between threads in tests, where the hand-over is synchronised by a semaphore.
final class UncheckedBox<T>: @unchecked Sendable {  // test helper: accesses are ordered by semaphores
    var value: T
    init(_ value: T) { self.value = value }
}

func fakeSong(_ token: UInt64, base: Int64, frames: Int, format: String = "", gain: ReplayGainInfo = ReplayGainInfo())
    -> PlayableSong
{
    let path = "fake:\(base):\(frames)" + (format.isEmpty ? "" : ":" + format)
    return PlayableSong(
        token: token, uri: "song\(token).mp3", path: path, replayGain: gain,
        durationMilliseconds: UInt64(frames) * 1000 / 44100)
}

func nullConfiguration(_ name: String = "out", mixer: MixerType? = nil) -> OutputConfiguration {
    OutputConfiguration(name: name, type: "null", mixerType: mixer)
}

/// Whether `samples` is exactly the 16-bit ramp `from, from + 1, …` of `count` values (no gap, no repeat).
func isRamp(_ samples: [Int16], from start: Int, count: Int) -> Bool {
    samples.count == count
        && samples.enumerated().allSatisfy { $0.element == Int16(truncatingIfNeeded: start + $0.offset) }
}
