// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Posix
import Synchronization

/// One output's thread: reads the chunk pipe with its own cursor, converts and scales the PCM (ReplayGain,
/// software volume) to the device's format, plays it, reports song borders and the end of the stream, and
/// publishes the position heard (frames played minus the device's delay).
///
/// Requests arrive through a mailbox (mutex + condition, taken once per request); the audio path reads only
/// atomics. `@unchecked Sendable`: the mailbox is guarded by `control`, the playing state is confined to the
/// output thread, the position is published through atomics under a sequence counter.
final class PlayerOutputThread: @unchecked Sendable {
    enum Mode: Sendable { case stop, play, pause }

    /// What the loop wants from this output.
    struct Request: Sendable {
        var enabled: Bool
        /// The player has played (`mpd`'s player thread runs): an enabled output keeps its device enabled even
        /// while nothing plays. Until then, as `mpd`'s, a device is enabled only when it first opens a stream.
        var started = false
        var mode: Mode = .stop
        /// Stop touching the pipe and the device until released (the loop rearranges the pipe meanwhile).
        var hold = false
        /// Changed to drop what the device and the thread hold (seek, new song).
        var cancel: UInt64 = 0
        /// Changed when the player opens its outputs (a song starts, a pause ends): a failed output tries again at
        /// once, as `mpd`'s outputs do then, rather than when its retry is due.
        var retry: UInt64 = 0
        /// Changed when an output's flag changes once the player ran: a device whose enabling failed is enabled
        /// again at once, as `mpd`'s player enables every enabled output that is not yet; its stream still waits
        /// for its retry (or a song start, or a pause's end), as `mpd`'s opens only then.
        var reenable: UInt64 = 0
        /// Changed at each resume: an output whose stream is open then (paused in its device, or not closed yet by
        /// a pause the resume superseded) has the loop open its mixer, as `mpd` opens an output's mixer as it opens
        /// it on resume.
        var resumes: UInt64 = 0
        var quit = false
    }

    /// The position heard, as published for the loop.
    struct Position: Equatable {
        var token: UInt64
        var generation: UInt64
        /// Frames of the song heard, from its (range) start.
        var frames: Int64
        /// The song's length in frames (0: unknown).
        var songFrames: UInt64
        /// Whether `songFrames` wins over the library's length.
        var songFramesOverrideLibrary: Bool
        var format: AudioFormat
        /// The bit rate of the chunk being heard, in kbit/s.
        var bitRate: Int
    }

    let id: Int
    let configuration: OutputConfiguration
    let device: any AudioOutput
    /// The output's mixer with its lifecycle; the loop's only.
    let mixer: MixerControl?
    let reader: PipeReader
    /// Whether the output failed and waits to retry. Read by the loop.
    let failed = Atomic<Bool>(false)

    private let softwareMixer: SoftwareMixer?
    private let pipe: PlayerChunkPipe
    private let shared: PlayerShared
    private let post: @Sendable (PlayerEngineEvent) -> Void
    private let logger: Logger
    /// `format`: the fields this output forces (`nil`: none).
    private let formatMask: AudioFormatMask?

    // MARK: Published position (sequence counter: odd while writing)
    private let positionVersion = Atomic<UInt64>(0)
    private let positionToken = Atomic<UInt64>(0)
    private let positionGeneration = Atomic<UInt64>(0)
    private let positionFrames = Atomic<Int64>(0)
    private let positionSongFrames = Atomic<UInt64>(0)
    private let positionSongFramesOverride = Atomic<Bool>(false)
    private let positionFormat = Atomic<UInt64>(0)
    private let positionBitRate = Atomic<Int>(0)

    // MARK: Mailbox (guarded by `control`)
    private let control = Condition()
    private var request: Request
    private var requestSequence: UInt64 = 0
    private var acknowledged: UInt64 = 0
    private let pending = Atomic<Bool>(false)
    /// Who waits for a request to be applied (``whenApplied(_:)``): the request's sequence number, and the call.
    private var waiters: [(sequence: UInt64, done: @Sendable () -> Void)] = []
    /// The latest request whose effect on the device is done: applied, and on a resume the stream opened again.
    private var settled: UInt64 = 0
    /// Whether ``settle(upTo:)`` is calling waiters now (with the lock released): a caller that comes meanwhile
    /// waits behind them, so callbacks come in the order they were asked for.
    private var delivering = false

    // MARK: Output-thread state
    private var applied: Request
    private var deviceEnabled = false
    private var streamOpen = false
    private var pausedInDevice = false
    private var openedFormat: AudioFormat?
    private var deviceFrameSize = 1
    /// The device's rate, to turn what it played into song time (the chunk's `songFormat` rate).
    private var deviceRate = 44100
    private var converter = PlayerPCMConverter()
    private var remaining = UnsafeRawBufferPointer(start: nil, count: 0)
    private var remainingOffset = 0
    private var chunk = ChunkHeader()
    private var hasChunk = false
    private var gain: Float = 1
    /// The ReplayGain values of the chunk played last (bit patterns: NaN is "unknown").
    private var chunkReplayGain = SIMD4<UInt32>()
    private var ended = false
    private var recovering = false
    private var retryAt: UInt64 = 0
    /// The request that resumed with the stream closed, settled once the stream opened again (or the output found
    /// nothing to open it for); 0: none.
    private var reopening: UInt64 = 0
    /// The cross-fade in progress, if any.
    private var fade: Fade?
    /// Announce the song of the next chunk taken (a cross-fade into it just ended).
    private var announceNext = false
    /// The song and stream tag revision whose tags the device has (``sendTags(for:)``); reset when the stream is
    /// cancelled (a new song, a seek, a stop).
    private var taggedToken: UInt64 = 0
    private var taggedRevision: UInt64 = 0

    /// A cross-fade in progress on this output.
    private struct Fade {
        /// The sequence number of the first chunk of the song fading in.
        var border: UInt64
        /// The fade's length in chunks (of the song fading out).
        var chunks: Int
        /// Chunks of the new song mixed in so far (the next one is `border + mixed`).
        var mixed = 0
        /// MixRamp: add rather than fade.
        var adds: Bool
        /// `false` once the new song ran out before the fade ended: the old one plays out alone.
        var mixing = true
        /// The gain the new song was mixed in at.
        var otherGain: Float = 1
    }

    init(
        id: Int, configuration: OutputConfiguration, device: any AudioOutput, mixer: MixerControl?, enabled: Bool,
        pipe: PlayerChunkPipe,
        shared: PlayerShared, logger: Logger, post: @escaping @Sendable (PlayerEngineEvent) -> Void
    ) {
        self.id = id
        self.configuration = configuration
        self.device = device
        self.mixer = mixer
        self.softwareMixer = mixer?.mixer as? SoftwareMixer
        self.reader = pipe.readers[id]
        self.pipe = pipe
        self.shared = shared
        self.logger = logger
        self.post = post
        self.formatMask = configuration.format
        self.request = Request(enabled: enabled)
        self.applied = Request(enabled: false)
    }

    /// Starts the thread. Any thread, once (before or after its first requests, which it applies when it starts).
    func start() {
        NamedThread.detach("output:\(self.configuration.name)") { [self] in self.run() }
    }

    // MARK: - Loop side

    /// The request the loop made last. Loop thread.
    var wanted: Request {
        self.control.lock()
        defer { self.control.unlock() }
        return self.request
    }

    /// Changes the request; with `wait`, returns once the output thread applied it. Loop thread.
    func send(wait: Bool = false, _ change: (inout Request) -> Void) {
        self.control.lock()
        change(&self.request)
        self.requestSequence += 1
        let sequence = self.requestSequence
        self.pending.store(true, ordering: .releasing)
        self.control.unlock()
        self.reader.wakeup.signal()
        self.device.interrupt()
        guard wait else { return }
        self.control.lock()
        while self.acknowledged < sequence {
            self.control.unlock()
            // The thread may be blocked in the device again by the time it sees the request.
            self.device.interrupt()
            self.reader.wakeup.signal()
            self.control.lock()
            self.control.wait(timeoutNanoseconds: 50_000_000)
        }
        self.control.unlock()
    }

    /// Calls `done` once the output thread applied the latest request (at once if it did and no earlier caller's
    /// `done` is still to come): on the output thread, or on this one; never before the `done` of an earlier call.
    /// A resume is applied once the stream opened again, as `mpd` answers a resume once its outputs opened. Loop
    /// thread. Not after `quit` was applied (the thread has ended).
    func whenApplied(_ done: @escaping @Sendable () -> Void) {
        self.control.lock()
        guard self.settled < self.requestSequence || self.delivering else {
            self.control.unlock()
            done()
            return
        }
        self.waiters.append((self.requestSequence, done))
        self.control.unlock()
    }

    /// The position heard, if the output played anything since it was enabled. Any thread.
    var position: Position? {
        while true {
            let before = self.positionVersion.load(ordering: .acquiring)
            if before == 0 { return nil }
            if before & 1 == 1 { continue }
            let position = Position(
                token: self.positionToken.load(ordering: .acquiring),
                generation: self.positionGeneration.load(ordering: .acquiring),
                frames: self.positionFrames.load(ordering: .acquiring),
                songFrames: self.positionSongFrames.load(ordering: .acquiring),
                songFramesOverrideLibrary: self.positionSongFramesOverride.load(ordering: .acquiring),
                format: Self.unpack(self.positionFormat.load(ordering: .acquiring)),
                bitRate: self.positionBitRate.load(ordering: .acquiring))
            if self.positionVersion.load(ordering: .acquiring) == before { return position }
        }
    }

    // MARK: - Output thread

    private func run() {
        while true {
            if self.pending.load(ordering: .acquiring), self.applyRequest() { return }
            let request = self.applied
            if self.reopening != 0,
                !request.enabled || request.hold || request.mode != .play || self.ended
                    || self.failed.load(ordering: .relaxed)
            {
                // Nothing to open the stream for (paused at a border, disabled, failed): the resume is done.
                self.settleReopening()
            }
            if !request.enabled || request.hold || request.mode == .stop || self.ended {
                self.waitForRequest()
            } else if self.failed.load(ordering: .relaxed) {
                self.retryAfterFailure()
            } else if request.mode == .pause {
                self.pauseStep()
            } else {
                self.playStep()
            }
        }
    }

    private func waitForRequest() {
        self.reader.wakeup.wait(unless: { self.pending.load(ordering: .acquiring) })
    }

    /// Applies the latest request. Returns `true` to end the thread.
    private func applyRequest() -> Bool {
        self.control.lock()
        let new = self.request
        let sequence = self.requestSequence
        self.pending.store(false, ordering: .releasing)
        self.control.unlock()
        // A newer request supersedes a resume still opening its stream.
        self.reopening = 0
        defer {
            self.control.lock()
            self.acknowledged = sequence
            self.control.broadcast()
            self.control.unlock()
            self.settle(upTo: self.reopening == 0 ? sequence : sequence - 1)
        }
        if new.quit {
            self.closeStream()
            if self.deviceEnabled { self.device.disable() }
            self.deviceEnabled = false
            self.leavePipe()
            return true
        }
        if new.retry != self.applied.retry, self.failed.load(ordering: .relaxed) {
            self.failed.store(false, ordering: .releasing)
        }
        if new.cancel != self.applied.cancel {
            if self.streamOpen { self.device.cancel() }
            // The next chunk's song is told again (a new song, a seek); a stream reopened on resume is not (`mpd`
            // passes a tag only with the chunk that carries it: a recorder's `format_path` waits for the next one).
            self.taggedToken = 0
            self.dropChunk()
            self.ended = false
            self.pausedInDevice = false
        }
        if !new.enabled {
            self.closeStream()
            if self.deviceEnabled { self.device.disable() }
            self.deviceEnabled = false
            self.leavePipe()
            self.dropChunk()
            self.failed.store(false, ordering: .relaxed)
        } else if new.started, !self.deviceEnabled,
            !self.failed.load(ordering: .relaxed) || new.reenable != self.applied.reenable
        {
            self.enableDevice()
        }
        if new.mode == .stop {
            if self.streamOpen { self.device.cancel() }
            self.closeStream()
            self.dropChunk()
            self.ended = false
        } else if new.mode == .pause, self.applied.mode != .pause {
            if self.streamOpen, !self.device.hasPauseMode {
                // A device without a pause mode closes now, before the pause is answered, as `mpd` closes such an
                // output's mixer before it answers (a sndio output then shows no volume).
                self.device.cancel()
                self.closeStream()
                self.rewindToPipeHead()
            }
            self.pausedInDevice = self.streamOpen
        } else if new.mode == .play, self.applied.mode == .pause, new.enabled, !new.hold, !self.streamOpen,
            !self.ended, !self.failed.load(ordering: .relaxed)
        {
            // As `mpd`, which answers a resume once its outputs opened: settled when the stream opens again.
            self.reopening = sequence
        }
        if new.resumes != self.applied.resumes, self.streamOpen, self.mixer != nil {
            self.post(.outputOpened(output: self.id))
        }
        self.applied = new
        return false
    }

    /// Marks the requests up to `sequence` done and calls whoever waited for them, in the order they asked, and
    /// those who asked while they were called (once per request, never per period). Output thread.
    private func settle(upTo sequence: UInt64) {
        self.control.lock()
        self.settled = max(self.settled, sequence)
        // Only this thread settles, so `delivering` is set here only if a waiter's callback led back into `settle`
        // (none does now): the loop below then calls the waiters this settles, in order, once the callback returns.
        guard !self.delivering else { return self.control.unlock() }
        self.delivering = true
        while !self.waiters.isEmpty {
            let settled = self.settled
            let done = self.waiters.filter { $0.sequence <= settled }.map(\.done)
            guard !done.isEmpty else { break }
            self.waiters.removeAll { $0.sequence <= settled }
            self.control.unlock()
            for call in done { call() }
            self.control.lock()
        }
        self.delivering = false
        self.control.unlock()
    }

    /// After the stream closed at a pause: goes back to the oldest chunk the pipe still holds (where the slowest
    /// output stands; the chunk being written is dropped), as `mpd`'s output, whose source forgets its place when it
    /// closes and starts again at the head of the pipe when it opens (a recorder beside a paced output records from
    /// where the pause was heard). The tags of the song there are not told again, unless the chunk starts it.
    private func rewindToPipeHead() {
        guard self.reader.consuming.load(ordering: .relaxed) else { return }
        let head = self.pipe.slowestCursor()
        self.dropChunk()
        self.reader.cursor.store(head, ordering: .releasing)
        guard head < self.pipe.written.load(ordering: .acquiring) else { return }
        let header = self.pipe.header(head).pointee
        self.taggedToken = header.start == .none ? header.token : 0
        self.taggedRevision = header.tagRevision
    }

    /// The resume waiting for the stream to open again is done (it opened, failed to, or has nothing to open for).
    private func settleReopening() {
        guard self.reopening != 0 else { return }
        let sequence = self.reopening
        self.reopening = 0
        self.settle(upTo: sequence)
    }

    private func enableDevice() {
        do throws(OutputError) {
            try self.device.enable()
            self.deviceEnabled = true
        } catch {
            self.fail(OutputError("Failed to enable output \(self.logName); \(error.message)"))
        }
    }

    /// How `mpd` names the output in its errors: `"NAME" (plugin)`. Failures only (allocates).
    private var logName: String { "\"\(self.configuration.name)\" (\(self.device.plugin))" }

    private func dropChunk() {
        self.remaining = UnsafeRawBufferPointer(start: nil, count: 0)
        self.remainingOffset = 0
        self.hasChunk = false
        self.fade = nil
        self.announceNext = false
        self.reader.fadeBorder.store(0, ordering: .releasing)
        self.converter.reset()
    }

    /// Before a drain: plays what the resampler still holds. Returns `false` when interrupted by a request
    /// (the rest is written first next time round).
    private func playResamplerTail() -> Bool {
        guard self.converter.isResampling else { return true }
        self.remaining = self.converter.flush()
        self.remainingOffset = 0
        self.writeRemaining()
        return self.remainingOffset >= self.remaining.count
    }

    /// Waits until the device played everything written. Returns `false` when a request interrupted the wait
    /// or the device failed: the thread applies the request and comes back here, unless the request drops the
    /// stream (stop, seek, disable), so an unrelated request (a hold while the loop swaps the queued song)
    /// loses no sound at the end of the queue.
    private func drainDevice() -> Bool {
        do throws(OutputError) {
            return try self.device.drain()
        } catch {
            self.fail(error)
            return false
        }
    }

    private func closeStream() {
        guard self.streamOpen else { return }
        self.device.close()
        self.streamOpen = false
        self.openedFormat = nil
        self.pausedInDevice = false
    }

    /// Closes the stream and reports `error` (logged; `reported`, else its message, to the player).
    private func fail(_ error: OutputError, reported: String? = nil) {
        self.logger.error("output failed", ["output": self.configuration.name, "error": error.message])
        if self.streamOpen { self.device.cancel() }
        self.closeStream()
        self.leavePipe()
        self.reader.wakeup.signal()
        self.pipe.readerAdvanced()
        self.dropChunk()
        self.failed.store(true, ordering: .releasing)
        self.recovering = true
        self.retryAt = self.shared.clock.now() + self.shared.retryNanoseconds
        self.post(.outputFailed(output: self.id, message: reported ?? error.message))
    }

    private func retryAfterFailure() {
        if self.shared.clock.now() < self.retryAt {
            self.shared.clock.sleep(
                until: self.retryAt, on: self.reader.wakeup, unless: { self.pending.load(ordering: .acquiring) })
            return
        }
        self.failed.store(false, ordering: .releasing)
    }

    private func pauseStep() {
        if self.streamOpen, self.pausedInDevice {
            if !self.device.pause() {
                // The device cannot stay paused: close it, reopen on resume (position stays as published).
                self.device.cancel()
                self.closeStream()
            }
            return
        }
        self.waitForRequest()
    }

    /// Plays what is left of the current chunk, or takes the next one, or handles the end of the stream.
    private func playStep() {
        if !self.reader.consuming.load(ordering: .acquiring) { self.join() }
        if self.remainingOffset < self.remaining.count {
            if !self.streamOpen {
                guard self.openStream(self.chunk.format) else { return }
            }
            self.writeRemaining()
            return
        }
        let cursor = self.reader.cursor.load(ordering: .relaxed)
        if cursor >= self.pipe.written.load(ordering: .acquiring) {
            self.reachedEndOfPipe(cursor)
            return
        }
        let header = self.pipe.header(cursor).pointee
        if header.start == .queued, self.shared.borderPause.load(ordering: .acquiring),
            self.shared.borderPausedToken.load(ordering: .acquiring) != header.token
        {
            self.pauseAtBorder(header)
            return
        }
        if header.format != self.openedFormat || !self.streamOpen {
            if self.streamOpen {
                // A new format between songs: play out the old one, then reopen.
                guard self.playResamplerTail() else { return }
                guard self.drainDevice() else { return }
                self.closeStream()
            }
            guard self.openStream(header.format) else { return }
        }
        if self.fade == nil { self.startFadeIfPlanned(at: cursor, header) }
        if let fade = self.fade, fade.mixing, !self.awaitFadingInChunk(fade.border + UInt64(fade.mixed)) {
            return
        }
        if header.start != .none || self.announceNext {
            self.announceNext = false
            if self.shared.announcedToken.exchange(header.token, ordering: .acquiringAndReleasing) != header.token {
                self.post(.songStarted(token: header.token, generation: header.generation))
            }
        }
        self.sendTags(for: header)
        // The first output to play a chunk of a newer tag revision announces it.
        if header.tagRevision != 0,
            self.shared.announcedTagRevision.max(header.tagRevision, ordering: .acquiringAndReleasing).oldValue
                < header.tagRevision
        {
            self.post(.streamTag(token: header.token, revision: header.tagRevision, generation: header.generation))
        }
        let target = self.gain(for: header)
        // A new song starts at its own gain, and so does a new stream of an Ogg chain (its ReplayGain, from
        // its first chunk on, as mpd); a volume or mode change within a song glides over one chunk (not through
        // a filter chain: there the gains step, as `mpd`'s).
        let replayGain = SIMD4(
            header.trackGain.bitPattern, header.trackPeak.bitPattern, header.albumGain.bitPattern,
            header.albumPeak.bitPattern)
        let sameReplayGain = replayGain == self.chunkReplayGain
        self.chunkReplayGain = replayGain
        let from = header.start == .none && sameReplayGain && !self.filtering ? self.gain : target
        let bytes = header.frames * header.format.frameSize
        let source = UnsafeRawBufferPointer(rebasing: self.pipe.pcm(cursor)[0..<bytes])
        var next = cursor + 1
        if var fade = self.fade {
            if fade.mixing {
                let otherSequence = fade.border + UInt64(fade.mixed)
                let other = self.pipe.header(otherSequence).pointee
                fade.otherGain = self.gain(for: other)
                let ratio = fade.adds ? -1 : Float(fade.border - cursor) / Float(fade.chunks)
                self.remaining = self.converter.convertMixing(
                    source, frames: header.frames, fromGain: from, toGain: target,
                    other: UnsafeRawBufferPointer(
                        rebasing: self.pipe.pcm(otherSequence)[0..<(other.frames * other.format.frameSize)]),
                    otherFrames: other.frames, otherGain: fade.otherGain, ratio: ratio,
                    softwareSteps: self.filtering ? self.volumeSteps(for: header).software : PCMVolume.unity)
                fade.mixed += 1
            } else if self.filtering {
                let (replayGain, software) = self.volumeSteps(for: header)
                self.remaining = self.converter.convert(
                    source, frames: header.frames, replayGainSteps: replayGain, softwareSteps: software)
            } else {
                self.remaining = self.converter.convert(source, frames: header.frames, fromGain: from, toGain: target)
            }
            self.gain = target
            if next == fade.border {
                // The old song is played out: go on after the part of the new one already mixed in, which is
                // now the song heard.
                next = fade.border + UInt64(fade.mixed)
                self.fade = nil
                self.reader.fadeBorder.store(0, ordering: .releasing)
                self.announceNext = true
                if fade.mixed > 0 { self.gain = fade.otherGain }
            } else {
                self.fade = fade
            }
        } else if from == target {
            // Steady: mpd's volume code, bit for bit.
            let (replayGain, software) = self.volumeSteps(for: header)
            self.remaining = self.converter.convert(
                source, frames: header.frames, replayGainSteps: replayGain, softwareSteps: software)
            self.gain = target
        } else {
            self.remaining = self.converter.convert(source, frames: header.frames, fromGain: from, toGain: target)
            self.gain = target
        }
        self.remainingOffset = 0
        self.chunk = header
        self.hasChunk = true
        self.reader.cursor.store(next, ordering: .releasing)
        self.pipe.readerAdvanced()
        self.publishPosition()
        self.writeRemaining()
    }

    /// Hands the device the tags of a song it has not had yet (the library's for a file, empty when it has none)
    /// and a stream's new tags, as `mpd` passes a chunk's tag to its outputs; none with `tags "no"`. Once per song
    /// or title, never per period.
    private func sendTags(for header: ChunkHeader) {
        guard self.configuration.tags else { return }
        if header.token != self.taggedToken {
            self.taggedToken = header.token
            self.taggedRevision = header.tagRevision
            if let tags = self.shared.songTags(token: header.token) { self.device.sendTag(tags) }
            if header.tagRevision != 0, let tags = self.shared.streamTags(revision: header.tagRevision) {
                self.device.sendTag(tags)
            }
        } else if header.tagRevision != self.taggedRevision {
            self.taggedRevision = header.tagRevision
            if let tags = self.shared.streamTags(revision: header.tagRevision) { self.device.sendTag(tags) }
        }
    }

    /// ReplayGain × software volume for a chunk, as a factor; ReplayGain alone in front of a filter chain (the
    /// software volume follows the chain).
    private func gain(for header: ChunkHeader) -> Float {
        let (replayGain, software) = self.volumeSteps(for: header)
        let softwareFactor = self.filtering ? 1 : Float(software) / Float(PCMVolume.unity)
        return Float(replayGain) / Float(PCMVolume.unity) * softwareFactor
    }

    /// Whether the output has a filter chain (`volume_normalization`, `filters`).
    private var filtering: Bool { !self.configuration.filters.isEmpty }

    /// The ReplayGain filter's and the software mixer's volumes for a chunk, in `mpd`'s 1/1024 steps.
    private func volumeSteps(for header: ChunkHeader) -> (replayGain: Int, software: Int) {
        let scale = self.shared.replayGain.scale(
            mode: self.shared.mode, trackGain: header.trackGain, trackPeak: header.trackPeak,
            albumGain: header.albumGain, albumPeak: header.albumPeak)
        return (PCMVolume.steps(scale), self.softwareMixer?.steps ?? PCMVolume.unity)
    }

    /// Starts the cross-fade the decoder planned for the next song change once the chunk at `cursor` is within
    /// its length of the border (shorter when the plan came late), unless the player will pause at the border.
    private func startFadeIfPlanned(at cursor: UInt64, _ header: ChunkHeader) {
        guard let plan = self.shared.fadePlan(after: cursor), plan.border - cursor <= UInt64(plan.chunks),
            !self.shared.borderPause.load(ordering: .acquiring)
        else { return }
        // The last chunk before the border belongs to the song playing now (not to a song in between).
        let last = self.pipe.header(plan.border - 1).pointee
        guard last.token == header.token, last.generation == header.generation else { return }
        self.fade = Fade(border: plan.border, chunks: Int(plan.border - cursor), adds: plan.adds)
        self.reader.fadeBorder.store(plan.border, ordering: .releasing)
    }

    /// Whether chunk `sequence` of the song fading in can be mixed now. When the decoder has not written it yet,
    /// waits for it (returns `false`: try again), unless the decoder reached the end, which ends the mixing.
    private func awaitFadingInChunk(_ sequence: UInt64) -> Bool {
        if sequence < self.pipe.written.load(ordering: .acquiring) { return true }
        let state = self.shared.endState.load(ordering: .sequentiallyConsistent)
        guard state == PlayerEndState.running.rawValue else {
            self.fade?.mixing = false
            return true
        }
        self.reader.wakeup.wait(unless: {
            self.pending.load(ordering: .acquiring) || self.pipe.written.load(ordering: .acquiring) > sequence
                || self.shared.endState.load(ordering: .acquiring) != state
        })
        return false
    }

    /// Starts reading where the most advanced output is (or at the newest chunk): after enabling or recovering.
    /// With no output reading, it starts where the last one stopped (the decoder waited meanwhile).
    private func join() {
        let head = self.pipe.written.load(ordering: .acquiring)
        let start = self.pipe.fastestCursor() ?? min(self.pipe.parkedCursor.load(ordering: .acquiring), head)
        self.reader.cursor.store(start, ordering: .releasing)
        self.reader.consuming.store(true, ordering: .sequentiallyConsistent)
        // If the decoder reused that chunk before it saw us, skip to the oldest chunk still intact. Loaded
        // sequentially consistently after our store (see `slowestCursor`): any chunk published later than this
        // load was written knowing about us, and the one being written now is at most `capacity` ahead.
        let written = self.pipe.written.load(ordering: .sequentiallyConsistent)
        if written > UInt64(self.pipe.capacity - 1), start < written - UInt64(self.pipe.capacity - 1) {
            self.reader.cursor.store(written - UInt64(self.pipe.capacity - 1), ordering: .releasing)
        }
        self.pipe.decoderWakeup.signal()
        self.dropChunk()
    }

    /// Stops holding chunks back from the decoder, remembering where this output stood.
    private func leavePipe() {
        if self.reader.consuming.load(ordering: .relaxed) {
            self.pipe.parkedCursor.store(self.reader.cursor.load(ordering: .relaxed), ordering: .releasing)
        }
        self.reader.consuming.store(false, ordering: .releasing)
    }

    private func openStream(_ format: AudioFormat) -> Bool {
        defer { self.settleReopening() }
        // As mpd's: the first stream enables the device (and a device whose enabling failed is tried again).
        if !self.deviceEnabled {
            self.enableDevice()
            guard self.deviceEnabled else { return false }
        }
        // The chunks come in `audio_output_format` already (the decoder converts, as mpd's); the output's own
        // `format` applies after the filter chain, as mpd's convert filter ends its chain.
        var wanted = format
        // mpd's ReplayGain filter widens 16-bit samples to 24 bits when a software mixer follows (its
        // `allow_convert`), whatever the volumes: such an output plays 16-bit songs as 24-bit.
        let widen = self.softwareMixer != nil && format.sampleFormat == .s16 && wanted.sampleFormat == .s16
        if widen { wanted.sampleFormat = .s24 }
        // The device gets what the filter chain makes (16 bits after `normalize`, a route's channels).
        wanted = PlayerPCMConverter.filteredFormat(
            wanted, widening16To24: false, filters: self.configuration.filters,
            softwareVolume: self.softwareMixer != nil)
        if let mask = self.formatMask { wanted = mask.applied(to: wanted) }
        do throws(OutputError) {
            let output: AudioFormat
            do throws(OutputError) {
                output = try self.device.open(wanted)
            } catch {
                throw OutputError("Failed to open \(self.logName); \(error.message)")
            }
            do throws(OutputError) {
                try self.converter.configure(
                    input: format, output: output, maxFrames: self.pipe.chunkBytes / max(1, format.frameSize),
                    widening16To24: widen, filters: self.configuration.filters,
                    softwareVolume: self.softwareMixer != nil, resampler: self.shared.resampler)
            } catch {
                self.device.close()
                throw OutputError("Failed to convert for \(self.logName); \(error.message)")
            }
            self.deviceFrameSize = output.frameSize
            self.deviceRate = output.sampleRate
            self.streamOpen = true
            self.openedFormat = format
            // As `mpd`, which opens an output's mixer once the output opened (before a resume is answered).
            if self.mixer != nil { self.post(.outputOpened(output: self.id)) }
            if self.recovering {
                self.recovering = false
                self.post(.outputRecovered(output: self.id))
            }
            return true
        } catch {
            self.fail(error)
            return false
        }
    }

    private func writeRemaining() {
        while self.remainingOffset < self.remaining.count {
            if self.pending.load(ordering: .acquiring) { return }
            let rest = UnsafeRawBufferPointer(rebasing: self.remaining[self.remainingOffset...])
            do throws(OutputError) {
                let consumed = try self.device.play(rest)
                self.remainingOffset += consumed
            } catch {
                // As mpd: the device's reason in the log; the player, finding no output to reopen, says only that.
                self.fail(
                    OutputError("Failed to play on \(self.logName): \(error.message)"),
                    reported: "Failed to open audio output")
                return
            }
            self.publishPosition()
        }
    }

    private func publishPosition() {
        let deviceFrames = self.remainingOffset / self.deviceFrameSize - self.device.delayFrames
        // Song frames per device frame: 1 unless audio_output_format or the output resamples.
        let songFramesPerDeviceFrame = Double(self.chunk.songFormat.sampleRate) / Double(max(1, self.deviceRate))
        let heard = Int64(self.chunk.songFrame) + Int64((Double(deviceFrames) * songFramesPerDeviceFrame).rounded())
        self.positionVersion.add(1, ordering: .acquiringAndReleasing)
        self.positionToken.store(self.chunk.token, ordering: .releasing)
        self.positionGeneration.store(self.chunk.generation, ordering: .releasing)
        self.positionFrames.store(max(0, heard), ordering: .releasing)
        self.positionSongFrames.store(self.chunk.songFrames, ordering: .releasing)
        self.positionSongFramesOverride.store(self.chunk.songFramesOverrideLibrary, ordering: .releasing)
        self.positionFormat.store(Self.pack(self.chunk.songFormat), ordering: .releasing)
        self.positionBitRate.store(self.chunk.bitRate, ordering: .releasing)
        self.positionVersion.add(1, ordering: .acquiringAndReleasing)
    }

    private func pauseAtBorder(_ header: ChunkHeader) {
        // Stop in front of the queued song: it is now the current one, at 0 s.
        guard self.playResamplerTail() else { return }
        self.chunk = header
        self.chunk.songFrame = 0
        self.remaining = UnsafeRawBufferPointer(start: nil, count: 0)
        self.remainingOffset = 0
        guard self.drainDevice() else { return }
        self.publishPosition()
        if self.shared.announcedToken.exchange(header.token, ordering: .acquiringAndReleasing) != header.token {
            self.post(.songStarted(token: header.token, generation: header.generation))
        }
        if self.shared.borderPausedToken.exchange(header.token, ordering: .acquiringAndReleasing) != header.token {
            self.post(.pausedAtBorder(token: header.token, generation: header.generation))
        }
        self.applied.mode = .pause
        self.pausedInDevice = self.streamOpen
    }

    /// Nothing left to read: wait for the decoder, or play out the end of the stream.
    private func reachedEndOfPipe(_ cursor: UInt64) {
        // Nothing to open the stream for yet: a resume is done.
        self.settleReopening()
        var state = self.shared.endState.load(ordering: .sequentiallyConsistent)
        if state == PlayerEndState.endOfStream.rawValue {
            // The loop ends the stream, after what it was told before (a `songStarted` it may still queue a song
            // for): an output that ended it here would close a stream the next song could have gone on in.
            if self.shared.endState.compareExchange(
                expected: state, desired: PlayerEndState.endRequested.rawValue, ordering: .sequentiallyConsistent
            ).exchanged {
                self.post(
                    .endReached(
                        generation: self.shared.generation.load(ordering: .acquiring),
                        written: self.pipe.written.load(ordering: .acquiring)))
            }
            state = self.shared.endState.load(ordering: .sequentiallyConsistent)
        }
        // The decoder may have published a chunk just before it marked the end.
        guard state == PlayerEndState.claimed.rawValue, cursor >= self.pipe.written.load(ordering: .acquiring) else {
            self.reader.wakeup.wait(unless: {
                self.pending.load(ordering: .acquiring) || self.pipe.written.load(ordering: .acquiring) > cursor
                    || self.shared.endState.load(ordering: .acquiring) != state
            })
            return
        }
        if self.streamOpen {
            guard self.playResamplerTail() else { return }
            guard self.drainDevice() else { return }
            self.closeStream()
        }
        self.ended = true
        // With no chunk since the pipe was flushed (a song without samples, a seek to its end) the stream still
        // ended, in the generation the loop started last.
        self.post(
            .outputEnded(
                output: self.id, token: self.hasChunk ? self.chunk.token : nil,
                generation: self.hasChunk ? self.chunk.generation : self.shared.generation.load(ordering: .acquiring)))
    }

    // MARK: - Formats

    private static func pack(_ format: AudioFormat) -> UInt64 {
        let sample = UInt64(format.sampleFormat.ordinal)
        return UInt64(format.sampleRate) << 16 | sample << 8 | UInt64(format.channels & 0xFF)
    }

    private static func unpack(_ packed: UInt64) -> AudioFormat {
        let formats: [SampleFormat] = [.s8, .s16, .s24, .s32, .float, .dsd]
        return AudioFormat(
            sampleRate: Int(packed >> 16), sampleFormat: formats[Int((packed >> 8) & 0xFF) % formats.count],
            channels: Int(packed & 0xFF))
    }

}
