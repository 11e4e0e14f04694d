// SPDX-License-Identifier: GPL-3.0-or-later

import EventLoop
import Formats
import Input
import Model
import Synchronization

/// The player: a decoder thread decoding ahead into a preallocated chunk pipe and one thread per output
/// playing it, driven from the event loop through `PlayerControl`.
///
/// Loop-confined: create it and call every member on the event loop thread; events reach `onEvent` there,
/// in the order they happened. Commands that rearrange the pipe (play, seek, stop, replacing a queued song
/// that is already decoding) wait until the audio threads acknowledge them, never longer.
public final class Player: PlayerControl {
    public var onEvent: (PlayerEvent) -> Void = { _ in }

    public var borderPause: Bool {
        get { self.shared.borderPause.load(ordering: .relaxed) }
        set { self.shared.borderPause.store(newValue, ordering: .releasing) }
    }

    /// `crossfade` in seconds; applies from the next song change the decoder reaches (as in `mpd`, a change
    /// already decided keeps its fade).
    public var crossfadeSeconds: Double {
        get { self.shared.crossFade.seconds }
        set { self.shared.crossFade.seconds = newValue }
    }
    public var mixRampDB: Double {
        get { self.shared.crossFade.mixRampDB }
        set { self.shared.crossFade.mixRampDB = newValue }
    }
    public var mixRampDelay: Double {
        get { self.shared.crossFade.mixRampDelay }
        set { self.shared.crossFade.mixRampDelay = newValue }
    }

    public var replayGainMode: ReplayGainMode {
        get { self.shared.mode }
        set {
            let index = ReplayGainMode.allCases.firstIndex(of: newValue) ?? 0
            self.shared.replayGainMode.store(index, ordering: .relaxed)
        }
    }

    private let loop: EventLoop
    private let logger: Logger
    /// The `input_cache`, if any.
    private let inputCache: InputCache?
    private let pipe: PlayerChunkPipe
    private let shared: PlayerShared
    private let decoder: PlayerDecoderThread
    /// What ``outputs`` lists, in order: the outputs, and the dummies of those moved to another player.
    private var listing: [Listed]
    /// The outputs this player plays to (the ones ``outputs`` lists that are not dummies).
    private var outputThreads: [PlayerOutputThread] {
        self.listing.compactMap { if case .output(let output) = $0 { output } else { nil } }
    }
    /// Posts an engine event to the loop; any thread.
    private let post: @Sendable (PlayerEngineEvent) -> Void
    private var isShutDown = false
    /// Whether anything was played yet (`mpd` starts its player thread then): until then, enabling an output only
    /// marks it; from then on, enabling or disabling any output enables every enabled one that is not yet.
    private var started = false

    // MARK: Control state
    private var state: PlayerState = .stop
    /// Incremented whenever the pipe is flushed; events from older generations are stale.
    private var generation: UInt64 = 0
    private var currentSong: PlayableSong?
    private var queuedSong: PlayableSong?
    /// Where the current song started (play or seek), reported until an output plays from there.
    private var startSeconds: Double = 0
    private var endedOutputs: Set<Int> = []
    /// The song the outputs in `endedOutputs` played out.
    private var endedToken: UInt64 = 0

    /// The decoder factory of the standard formats: the plugins for the file's suffix, in `mpd`'s order.
    public static let standardDecoders: @Sendable (String) throws(FormatError) -> any Decoder = {
        (path) throws(FormatError) in try FormatRegistry.standard.openDecoder(path: path)
    }

    /// Creates the player and starts its threads. Loop thread.
    ///
    /// - Parameters:
    ///   - loop: the event loop that calls the player and receives its events.
    ///   - decoders: opens a decoder for a file path (on the decoder thread); `Player.standardDecoders` by default.
    ///   - streams: opens a decoder for a URL (on the decoder thread), reading through an input that the
    ///     cancellation interrupts; the flag says ReplayGain is on (`mpd` then reads the stream's APE tag first);
    ///     `nil`: URLs are opened with `decoders`.
    ///   - apeReplayGainReader: reads the ReplayGain of a file's APE tag (on the decoder thread) for a song whose
    ///     decoder and library entry have none, while ReplayGain is on, as `mpd`'s decoder thread reads it;
    ///     `nil`: none is read.
    ///   - localPaths: the local path of a song whose path is a storage's URI of a file it has not made local yet
    ///     (a `udisks://` file system not mounted yet), making it so first (mounting it; on the decoder thread, so
    ///     it may block, until the cancellation given is cancelled: the loop cancels it as it cancels an open when
    ///     it leaves the song), as `mpd` maps such a song before playing it; `nil` for any other path, or when it
    ///     fails or is cancelled. The song is then decoded as that local file.
    ///   - outputs: each configured output with its device and mixer, in configuration order. A `SoftwareMixer`
    ///     is applied by the output thread; `mixer_type "software"` without a mixer gets one.
    ///   - outputSlots: how many outputs may ever play from this player: every configured output, when outputs
    ///     move between players (``attachOutput(_:)``); at least `outputs.count`.
    ///   - audioBufferSize: `audio_buffer_size` in bytes (`mpd` 0.23's default: 4 MiB).
    ///   - replayGain: preamp, missing preamp, limit.
    ///   - outputRetrySeconds: how long a failed output waits before it tries again.
    ///   - audioOutputFormat: `audio_output_format` (such as `48000:16:2` or `*:24:*`), which every song is
    ///     converted to by the decoder thread, before ReplayGain, each output's filter chain and its own `format`
    ///     (as `mpd`'s decoder converts); `nil`: none.
    ///   - resampler: what the outputs and `audio_output_format` resample with (the `resampler` block; Debian's
    ///     `mpd` default).
    ///   - clock: what times the retries of failed outputs; `SystemClock` but in tests.
    ///   - inputCache: the `input_cache` that ``prefetch(path:)`` fills (`decoders` should open files through it);
    ///     `nil`: none.
    ///   - logger: where the player logs (never per period).
    public init(
        loop: EventLoop,
        decoders: @escaping @Sendable (String) throws(FormatError) -> any Decoder = Player.standardDecoders,
        streams: (@Sendable (String, InputCancellation, Bool) throws(FormatError) -> any Decoder)? = nil,
        apeReplayGainReader: (@Sendable (String) -> ReplayGainInfo?)? = nil,
        localPaths: (@Sendable (String, InputCancellation) -> String?)? = nil,
        outputs: [(OutputConfiguration, any AudioOutput, (any Mixer)?)], outputSlots: Int = 0,
        audioBufferSize: Int = 4 << 20,
        replayGain: ReplayGainSettings = ReplayGainSettings(), outputRetrySeconds: Double = 10,
        audioOutputFormat: AudioFormatMask? = nil, resampler: Resampler = .standard,
        clock: any PlaybackClock = SystemClock(), inputCache: InputCache? = nil, logger: Logger
    ) {
        loop.preconditionOnLoop()
        self.loop = loop
        self.logger = logger
        self.inputCache = inputCache
        let pipe = PlayerChunkPipe(bufferSize: audioBufferSize, readers: max(outputs.count, outputSlots))
        let shared = PlayerShared(
            replayGain: replayGain, retryNanoseconds: UInt64(max(0, outputRetrySeconds) * 1e9),
            outputFormatMask: audioOutputFormat, resampler: resampler, clock: clock)
        self.pipe = pipe
        self.shared = shared
        let relay = PlayerEventRelay(loop: loop)
        let post: @Sendable (PlayerEngineEvent) -> Void = { event in relay.post(event) }
        self.post = post
        self.decoder = PlayerDecoderThread(
            pipe: pipe, shared: shared, factory: decoders, streams: streams, apeReplayGainReader: apeReplayGainReader,
            localPaths: localPaths, logger: logger, post: post)
        self.listing = outputs.enumerated().map { index, output in
            let (configuration, device, given) = output
            let mixer = (given ?? (configuration.mixerType == .software ? SoftwareMixer() : nil)).map(MixerControl.init)
            return .output(
                PlayerOutputThread(
                    id: index, configuration: configuration, device: device, mixer: mixer,
                    enabled: configuration.enabled, pipe: pipe, shared: shared, logger: logger, post: post))
        }
        relay.player = self
        // As mpd, no mixer is opened yet: a global one on its first use, any one when its output opens.
        self.decoder.start()
        for output in self.outputThreads {
            output.start()
            // Applies `enabled` from the configuration on the output thread.
            output.send { _ in }
        }
    }

    // MARK: - Playing

    public func play(_ song: PlayableSong, atSeconds seconds: Double) {
        self.loop.preconditionOnLoop()
        // As mpd: with every output disabled the song is loaded but the player pauses, with an error.
        let outputs = self.hasEnabledOutput
        self.started = true
        self.state = outputs ? .play : .pause
        self.currentSong = song
        self.queuedSong = nil
        self.restart(song, atSeconds: seconds, start: .play)
        if outputs { self.retryFailedOutputs() } else { self.reportNoOutput("All audio outputs are disabled") }
    }

    /// As `mpd`, which opens its outputs with force when a song starts or a pause ends: an output that failed (to
    /// enable, open or play) tries again now rather than when its retry is due.
    private func retryFailedOutputs() {
        for output in self.outputThreads where output.failed.load(ordering: .acquiring) {
            output.send { $0.retry &+= 1 }
        }
    }

    private var hasEnabledOutput: Bool { self.outputThreads.contains { $0.wanted.enabled } }

    /// Pauses because no output can play (mpd's `paused = true` with an output error) and reports `message`
    /// once the current command is over.
    private func reportNoOutput(_ message: String) {
        self.state = .pause
        for output in self.outputThreads { output.send { $0.mode = .pause } }
        let generation = self.generation
        LoopBound(self, loop: self.loop).execute { player in
            guard player.generation == generation, !player.isShutDown, player.state != .stop else { return }
            player.onEvent(.outputFailed(message: message))
        }
    }

    public func queue(_ song: PlayableSong?) {
        self.loop.preconditionOnLoop()
        let previous = self.queuedSong
        guard previous?.token != song?.token else { return }
        self.queuedSong = song
        guard self.state != .stop else { return }
        let (newestToken, border) = self.decoder.newestSong
        if let previous, newestToken == previous.token, self.dropDecodingQueuedSong(border: border, for: song) {
            return
        }
        self.decoder.setQueued(song)
        // The decoder finished the last song before this one was queued: append it, unless the loop already ended
        // the stream (then `finished` is on its way and the playlist starts it anew). An output that read the
        // whole stream waits for the loop (`endRequested`): it goes on with this song.
        guard let song, self.reopenEndedStream() else { return }
        self.decoder.setQueued(nil)
        self.decoder.send(.start(.init(song: song, seconds: 0, generation: self.generation, start: .queued)))
    }

    /// Marks the stream running again if the decoder had ended it and the loop had not (`endOfStream`,
    /// `endRequested`); returns whether it did.
    private func reopenEndedStream() -> Bool {
        var state = self.shared.endState.load(ordering: .sequentiallyConsistent)
        while state == PlayerEndState.endOfStream.rawValue || state == PlayerEndState.endRequested.rawValue {
            let (exchanged, original) = self.shared.endState.compareExchange(
                expected: state, desired: PlayerEndState.running.rawValue, ordering: .sequentiallyConsistent)
            if exchanged { return true }
            state = original
        }
        return false
    }

    /// The decoder already decodes the queued song being replaced: cuts its chunks off the pipe and starts `song`
    /// (if any) in its place. Returns `false`, touching nothing, when an output already plays those chunks: then it
    /// is the current song, and `song` is queued after it as any queued song.
    ///
    /// The outputs are held first (each answers within one device write), so the decision cannot change; the
    /// decoder is then parked with its input cancelled, so the wait never depends on a stalled server.
    private func dropDecodingQueuedSong(border: UInt64, for song: PlayableSong?) -> Bool {
        for output in self.outputThreads { output.send(wait: true) { $0.hold = true } }
        defer { for output in self.outputThreads { output.send { $0.hold = false } } }
        let started = self.pipe.readers.contains {
            $0.consuming.load(ordering: .acquiring)
                && ($0.cursor.load(ordering: .acquiring) > border || $0.fadeBorder.load(ordering: .acquiring) == border)
        }
        guard !started else { return false }
        self.decoder.send(.park, wait: true, cancelInput: true)
        self.pipe.written.store(border, ordering: .releasing)
        self.decoder.setQueued(nil)
        if let song {
            self.shared.endState.store(PlayerEndState.running.rawValue, ordering: .sequentiallyConsistent)
            self.decoder.send(.start(.init(song: song, seconds: 0, generation: self.generation, start: .queued)))
        } else {
            self.decoder.send(.stop, wait: true)
            self.shared.endState.store(PlayerEndState.endOfStream.rawValue, ordering: .sequentiallyConsistent)
        }
        return true
    }

    public func setPaused(_ paused: Bool) {
        self.loop.preconditionOnLoop()
        guard self.state != .stop else { return }
        guard paused || self.hasEnabledOutput else {
            self.reportNoOutput("All audio outputs are disabled")
            return
        }
        self.state = paused ? .pause : .play
        // As mpd: the mixer of an output without a pause mode closes before the output does (unless global).
        if paused { for output in self.outputThreads where !output.device.hasPauseMode { output.mixer?.autoClose() } }
        // The loop does not wait: a command that pauses or resumes answers once ``whenOutputsApplied(_:)`` says
        // every output stopped writing (or opened its stream again).
        for output in self.outputThreads {
            output.send {
                $0.mode = paused ? .pause : .play
                if !paused { $0.resumes &+= 1 }
            }
        }
        if !paused {
            self.retryFailedOutputs()
            self.finishIfAllEnded(token: self.endedToken)
        }
    }

    public func stop() {
        self.loop.preconditionOnLoop()
        self.generation += 1
        self.state = .stop
        self.currentSong = nil
        self.queuedSong = nil
        self.decoder.setQueued(nil)
        self.decoder.send(.stop, cancelInput: true)
        for output in self.outputThreads {
            // As mpd's release of its outputs: a mixer that is not global closes with its output.
            output.mixer?.autoClose()
            output.send {
                $0.mode = .stop
                $0.cancel &+= 1
            }
        }
    }

    public func seek(token: UInt64, toSeconds seconds: Double) -> Bool {
        self.loop.preconditionOnLoop()
        guard self.state != .stop, let song = self.currentSong, song.token == token else { return false }
        var target = max(0, seconds)
        // The length status shows: the library's, or the decoder's where mpd's decoder reports its own.
        if let duration = self.snapshot.durationSeconds ?? Self.durationSeconds(of: song) {
            target = min(target, duration)
        }
        // mpd fails a seek past the start of a song its decoder is still decoding and cannot seek in.
        if target > 0, self.decoder.unseekableSong == token { return false }
        // As mpd, which keeps the song's audio format and bit rate over a seek: shown until an output plays again.
        let heard = self.snapshot
        if let format = heard.audioFormat, heard.token == token {
            self.heardBeforeSeek = (token, format, heard.bitRate)
        }
        self.restart(song, atSeconds: target, start: .none)
        return true
    }

    /// Flushes the pipe and starts decoding `song` at `seconds`: parks the decoder, holds every output
    /// (dropping what their devices hold), moves every cursor to the head of the pipe, then lets them go.
    private func restart(_ song: PlayableSong, atSeconds seconds: Double, start: ChunkStart) {
        self.generation += 1
        if start != .none { self.heardBeforeSeek = nil }
        self.startSeconds = max(0, seconds)
        self.endedOutputs = []
        // Another song: its stream, stalled or not, is left. A seek within a remote song leaves it too (the
        // decoder opens the stream again at the position, as a seek over HTTP asks for a new range anyway): the
        // loop must not wait for a decoder blocked on a stalled server.
        self.decoder.send(.park, wait: true, cancelInput: start != .none || song.isRemote)
        for output in self.outputThreads {
            output.send(wait: true) {
                $0.hold = true
                $0.cancel &+= 1
            }
        }
        let head = self.pipe.written.load(ordering: .acquiring)
        self.pipe.parkedCursor.store(head, ordering: .releasing)
        for output in self.outputThreads {
            output.reader.cursor.store(head, ordering: .releasing)
            let consuming = output.wanted.enabled && !output.failed.load(ordering: .acquiring)
            output.reader.consuming.store(consuming, ordering: .releasing)
        }
        self.shared.endState.store(PlayerEndState.running.rawValue, ordering: .sequentiallyConsistent)
        self.shared.generation.store(self.generation, ordering: .releasing)
        if start != .none { self.shared.announcedToken.store(0, ordering: .releasing) }
        self.shared.borderPausedToken.store(0, ordering: .releasing)
        self.shared.clearFadePlans()
        self.decoder.forgetNewestSong()
        self.decoder.setQueued(nil)
        // The decoder starts once this loop turn is over, after asking the playlist for the next song, so the
        // queued song is known before the current one can end.
        let generation = self.generation
        LoopBound(self, loop: self.loop).execute { player in
            guard player.generation == generation, !player.isShutDown else { return }
            player.onEvent(.decoderStarting(token: song.token))
            guard player.generation == generation, !player.isShutDown else { return }
            player.decoder.setQueued(player.queuedSong)
            player.decoder.send(.start(.init(song: song, seconds: seconds, generation: generation, start: start)))
        }
        let mode: PlayerOutputThread.Mode = self.state == .pause ? .pause : .play
        for output in self.outputThreads {
            output.send {
                $0.hold = false
                $0.mode = mode
            }
        }
    }

    // MARK: - Status

    /// The length the decoder of a song reported in place of the library's (`totalFramesOverrideLibrary`),
    /// once an output heard it: kept for that song while no output position is current.
    private var decoderDuration: (token: UInt64, seconds: Double)?
    /// The audio format and bit rate heard when the song with `token` was last sought in, shown until an output
    /// plays it again.
    private var heardBeforeSeek: (token: UInt64, format: AudioFormat, bitRate: Int)?
    /// The format the decoder opened the song with `token` in (mpd's `audio_format` after the decoder's
    /// start-up), shown until an output plays it; kept over seeks within the song.
    private var decodedFormat: (token: UInt64, format: AudioFormat)?

    /// Queues a local file for the input cache's thread (only absolute paths are cached). Loop thread; returns at
    /// once.
    public func prefetch(path: String) {
        self.inputCache?.prefetch(path)
    }

    public var prefetches: Bool { self.inputCache != nil }

    public var snapshot: PlayerSnapshot {
        self.loop.preconditionOnLoop()
        guard self.state != .stop, let song = self.currentSong else { return PlayerSnapshot() }
        // Until the outputs have heard the song again (after a seek), the decoder's length seen last.
        let known = self.decoderDuration.flatMap { $0.token == song.token ? $0.seconds : nil }
        var snapshot = PlayerSnapshot(
            state: self.state, token: song.token, elapsedSeconds: self.startSeconds,
            durationSeconds: known ?? Self.durationSeconds(of: song))
        if let heard = self.heardBeforeSeek, heard.token == song.token {
            snapshot.audioFormat = heard.format
            snapshot.bitRate = heard.bitRate
        } else if let decoded = self.decodedFormat, decoded.token == song.token {
            snapshot.audioFormat = decoded.format
        }
        for output in self.outputThreads where output.wanted.enabled && !output.failed.load(ordering: .relaxed) {
            guard let position = output.position, position.generation == self.generation, position.token == song.token
            else { continue }
            let rate = Double(max(1, position.format.sampleRate))
            snapshot.elapsedSeconds = Double(position.frames) / rate
            // The library's length (what mpd's decoder reports too) wins, unless the decoder says its own is
            // what mpd's reports; the decoder's count is also the fallback.
            if snapshot.durationSeconds == nil || position.songFramesOverrideLibrary, position.songFrames > 0 {
                snapshot.durationSeconds = Double(position.songFrames) / rate
                if position.songFramesOverrideLibrary {
                    self.decoderDuration = (song.token, snapshot.durationSeconds ?? 0)
                }
            }
            snapshot.audioFormat = position.format
            snapshot.bitRate = position.bitRate
            break
        }
        return snapshot
    }

    private static func durationSeconds(of song: PlayableSong) -> Double? {
        let end = song.rangeEndMilliseconds ?? song.durationMilliseconds
        return end.map { Double($0 - min($0, song.rangeStartMilliseconds)) / 1000 }
    }

    // MARK: - Mixers

    public var volume: Int? {
        self.loop.preconditionOnLoop()
        var total = 0
        var count = 0
        for output in self.outputThreads {
            // As mpd: a software mixer counts even while its output is disabled.
            guard let mixer = output.mixer, output.wanted.enabled || mixer.isSoftware else { continue }
            do throws(OutputError) {
                let volume = try mixer.volume()
                guard volume >= 0 else { continue }
                total += volume
                count += 1
            } catch {
                self.mixerLogger.error("Failed to read mixer for '\(output.configuration.name)': \(error.message)")
            }
        }
        return count > 0 ? total / count : nil
    }

    /// `mpd`'s mixer domain.
    private var mixerLogger: Logger { self.logger.labelled("mixer") }

    public func setVolume(_ volume: Int) -> VolumeChange {
        self.loop.preconditionOnLoop()
        // mpd's ranks: no mixer < disabled < failed < changed; the first failure is the one reported.
        var rank = 0
        var failure: String?
        for output in self.outputThreads {
            guard let mixer = output.mixer else { continue }
            // As mpd: software mixers follow even while their output is disabled.
            guard output.wanted.enabled && mixer.mixer.acceptsVolume || mixer.isSoftware else {
                rank = max(rank, 1)
                continue
            }
            do throws(OutputError) {
                try mixer.setVolume(volume)
                rank = 3
            } catch {
                let name = output.configuration.name
                self.mixerLogger.error("Failed to set mixer for '\(name)': \(error.message)")
                if failure == nil {
                    failure = "Failed to set mixer for '\(name)'; \(error.message)"
                    rank = 2
                }
            }
        }
        switch rank {
        case 3: return .changed
        case 2: return .failed(failure ?? "")
        case 1: return .allDisabled
        default: return .noMixer
        }
    }

    public func setSoftwareVolume(_ volume: Int) -> Bool {
        self.loop.preconditionOnLoop()
        var found = false
        for output in self.outputThreads {
            guard let mixer = output.mixer?.mixer as? SoftwareMixer else { continue }
            // A software mixer only scales samples: it cannot fail.
            try? mixer.setVolume(volume)
            found = true
        }
        return found
    }

    // MARK: - Outputs

    public var outputs: [OutputDescription] {
        self.loop.preconditionOnLoop()
        return self.listing.enumerated().map { index, listed in
            switch listed {
            case .output(let output):
                OutputDescription(
                    id: index, name: output.configuration.name, plugin: output.device.plugin,
                    enabled: output.wanted.enabled, attributes: output.device.attributes,
                    hasMixer: output.mixer != nil)
            case .dummy(let name, let enabled):
                .dummy(id: index, name: name, enabled: enabled)
            }
        }
    }

    public func setOutput(id: Int, enabled: Bool) -> Bool {
        self.loop.preconditionOnLoop()
        guard self.listing.indices.contains(id) else { return false }
        guard case .output(let output) = self.listing[id] else {
            // As mpd: a dummy keeps the flag, and plays nothing.
            self.listing[id] = .dummy(name: self.listing[id].name, enabled: enabled)
            return true
        }
        // As mpd: disabling an output closes its mixer, global or not (forgetting a failure).
        if !enabled { output.mixer?.close() }
        output.send {
            $0.enabled = enabled
            if enabled { $0.mode = self.outputMode }
        }
        self.applyEnabled()
        // As mpd: playing on with no output enabled fails at the next chunk and pauses.
        if !enabled, self.state == .play, !self.hasEnabledOutput { self.reportNoOutput("Failed to open audio output") }
        return true
    }

    public func whenOutputsApplied(_ done: @escaping @Sendable () -> Void) {
        self.loop.preconditionOnLoop()
        let outputs = self.outputThreads
        guard !outputs.isEmpty else { return done() }
        let countdown = Countdown(outputs.count, done)
        for output in outputs { output.whenApplied { countdown.tick() } }
    }

    public func setOutputAttribute(id: Int, name: String, value: String) throws(OutputError) -> Bool {
        self.loop.preconditionOnLoop()
        guard self.listing.indices.contains(id) else { return false }
        guard case .output(let output) = self.listing[id] else {
            throw OutputError("Cannot set attribute on dummy output")
        }
        try output.device.setAttribute(name: name, value: value)
        return true
    }

    public func detachOutput(named name: String) -> DetachedOutput? {
        self.loop.preconditionOnLoop()
        guard let index = self.listing.firstIndex(where: { $0.isOutput && $0.name == name }),
            case .output(let output) = self.listing[index]
        else { return nil }
        let enabled = output.wanted.enabled
        // As mpd: the output is disabled and closed, its thread ends; a dummy stays in its place. The loop does not
        // wait: the thread that takes the device over starts once this one let go of it (``attachOutput(_:)``).
        output.send {
            $0.enabled = false
            $0.quit = true
        }
        self.listing[index] = .dummy(name: name, enabled: false)
        self.endedOutputs.remove(output.id)
        if self.state == .play {
            if !self.hasEnabledOutput {
                self.reportNoOutput("Failed to open audio output")
            } else if let token = self.currentSong?.token {
                self.finishIfAllEnded(token: token)
            }
        }
        return DetachedOutput(
            name: name, enabled: enabled,
            engine: .init(
                slot: output.id, configuration: output.configuration, device: output.device, mixer: output.mixer,
                released: { done in output.whenApplied(done) }))
    }

    public func attachOutput(_ detached: DetachedOutput) {
        self.loop.preconditionOnLoop()
        guard let engine = detached.engine else {
            preconditionFailure("an output without a device cannot join a player")
        }
        let output = PlayerOutputThread(
            id: engine.slot, configuration: engine.configuration, device: engine.device, mixer: engine.mixer,
            enabled: false, pipe: self.pipe, shared: self.shared, logger: self.logger, post: self.post)
        // As mpd: it takes the place of its dummy, if it was here before; else it joins the end of the list.
        if let index = self.listing.firstIndex(where: { !$0.isOutput && $0.name == detached.name }) {
            self.listing[index] = .output(output)
        } else {
            self.listing.append(.output(output))
        }
        // Its requests wait in its mailbox until it starts, once the thread it leaves let go of the device.
        engine.released { output.start() }
        output.send {
            $0.enabled = detached.enabled
            $0.mode = self.outputMode
        }
        self.applyEnabled()
    }

    /// Once something was played, has every enabled output's device enabled (as `mpd`'s player thread does when an
    /// output's flag changes), a device whose enabling failed too; before, nothing (an output's device is enabled
    /// when it first plays).
    private func applyEnabled() {
        guard self.started else { return }
        for output in self.outputThreads where !output.wanted.started { output.send { $0.started = true } }
        for output in self.outputThreads where output.wanted.enabled && output.failed.load(ordering: .acquiring) {
            output.send { $0.reenable &+= 1 }
        }
    }

    private var outputMode: PlayerOutputThread.Mode {
        switch self.state {
        case .stop: .stop
        case .play: .play
        case .pause: .pause
        }
    }

    public func shutdown() {
        self.loop.preconditionOnLoop()
        guard !self.isShutDown else { return }
        self.isShutDown = true
        self.state = .stop
        self.decoder.send(.quit, wait: true, cancelInput: true)
        for output in self.outputThreads { output.send(wait: true) { $0.quit = true } }
        for output in self.outputThreads { output.mixer?.close() }
    }

    // MARK: - Events from the audio threads

    /// A function that reports a hardware mixer's volume changed outside Fermata (a `.mixerChanged` event
    /// follows on the loop). Read it on the loop; call it from any thread (mixers' monitor threads do).
    public var mixerChangeReporter: @Sendable () -> Void {
        let post = self.post
        return { post(.mixerChanged) }
    }

    fileprivate func handle(_ event: PlayerEngineEvent) {
        guard !self.isShutDown else { return }
        switch event {
        case .mixerChanged:
            self.onEvent(.mixerChanged)
        case .streamTag(let token, let revision, let generation):
            let tags = self.shared.takeTags(revision: revision)
            guard generation == self.generation, self.state != .stop, let tags else { return }
            self.onEvent(.tagChanged(token: token, tags: tags))
        case .decoderOpened(let token, let format, let generation):
            guard generation == self.generation, self.state != .stop, self.currentSong?.token == token else { return }
            self.decodedFormat = (token, format)
            self.onEvent(.decoderStarted(token: token))
        case .songStarted(let token, let generation):
            guard generation == self.generation, self.state != .stop else { return }
            if let queued = self.queuedSong, queued.token == token {
                self.currentSong = queued
                self.queuedSong = nil
                self.startSeconds = 0
            }
            self.onEvent(.songStarted(token: token))
        case .pausedAtBorder(let token, let generation):
            guard generation == self.generation, self.state != .stop else { return }
            self.setPaused(true)
            self.onEvent(.pausedAtBorder(token: token))
        case .endReached(let generation, let written):
            // Whatever the loop had to queue it has (events come in order): nothing more follows. Not a request
            // from before a song was appended and read to its end: the request for that end follows this one.
            guard generation == self.generation, self.pipe.written.load(ordering: .acquiring) == written else {
                return
            }
            if self.shared.endState.compareExchange(
                expected: PlayerEndState.endRequested.rawValue, desired: PlayerEndState.claimed.rawValue,
                ordering: .sequentiallyConsistent
            ).exchanged {
                self.pipe.wakeReaders()
            }
        case .outputEnded(let output, let token, let generation):
            guard generation == self.generation, self.state != .stop else { return }
            guard let token = token ?? self.currentSong?.token else { return }
            self.endedOutputs.insert(output)
            self.endedToken = token
            self.finishIfAllEnded(token: token)
        case .outputFailed(_, let message):
            self.onEvent(.outputsChanged)
            guard self.state != .stop else { return }
            let working = self.outputThreads.contains { $0.wanted.enabled && !$0.failed.load(ordering: .acquiring) }
            if !working {
                // As mpd: pause (the user may resume once an output works again), with the output's error.
                if self.state == .play { self.reportNoOutput(message) }
            } else if let token = self.currentSong?.token {
                self.finishIfAllEnded(token: token)
            }
        case .outputOpened(let id):
            // Not when the output closed again meanwhile (a pause without a pause mode, a stop, a disable).
            guard let output = self.outputThreads.first(where: { $0.id == id }), let mixer = output.mixer,
                output.wanted.enabled, self.state == .play || self.state == .pause && output.device.hasPauseMode
            else { return }
            do throws(OutputError) { try mixer.open() } catch {
                self.logger.labelled("output").error(
                    "Failed to open mixer for '\(output.configuration.name)': \(error.message)")
            }
        case .outputRecovered:
            self.onEvent(.outputsChanged)
        case .decodeFailed(let token, let message, let generation, let stopped):
            guard generation == self.generation, self.state != .stop else { return }
            if self.queuedSong?.token == token { self.queuedSong = nil }
            if stopped { self.stop() }
            self.onEvent(.songFailed(token: token, message: message))
        }
    }

    private func finishIfAllEnded(token: UInt64) {
        // A song cannot end while paused (an output may have written its last chunks just before the pause):
        // the end is reported on resume.
        guard !self.endedOutputs.isEmpty, self.state == .play else { return }
        let playing = self.outputThreads.filter { $0.wanted.enabled && !$0.failed.load(ordering: .acquiring) }
        guard playing.allSatisfy({ self.endedOutputs.contains($0.id) }) else { return }
        self.stop()
        self.onEvent(.finished(token: token))
    }
}

/// Calls its function once it was ticked as many times as it was made for (from any threads).
private final class Countdown: Sendable {
    private let left: Atomic<Int>
    private let done: @Sendable () -> Void

    init(_ count: Int, _ done: @escaping @Sendable () -> Void) {
        self.left = Atomic(count)
        self.done = done
    }

    func tick() {
        if self.left.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { self.done() }
    }
}

/// Carries events from the audio threads to the player on the loop.
///
/// `@unchecked Sendable`: `player` is set once on the loop before any thread starts and read only on the loop.
private final class PlayerEventRelay: @unchecked Sendable {
    let loop: EventLoop
    weak var player: Player?

    init(loop: EventLoop) { self.loop = loop }

    /// Posts `event` to the loop. Any thread (allocates a task: once per border or failure, not per period).
    func post(_ event: PlayerEngineEvent) {
        self.loop.execute { self.player?.handle(event) }
    }
}

extension Player {
    /// An entry of the `outputs` list.
    fileprivate enum Listed {
        /// An output of this player.
        case output(PlayerOutputThread)
        /// An output that moved to another player (`mpd`'s dummy: `plugin: dummy`, plays nothing).
        case dummy(name: String, enabled: Bool)

        var name: String {
            switch self {
            case .output(let output): output.configuration.name
            case .dummy(let name, _): name
            }
        }

        var isOutput: Bool {
            if case .output = self { return true }
            return false
        }
    }
}
