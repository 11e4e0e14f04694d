// SPDX-License-Identifier: GPL-3.0-or-later

import Formats
import Glibc
import Input
import Model
import Posix
import Synchronization

/// The decoder thread: opens songs, decodes ahead into the chunk pipe, seeks, and moves on to the queued
/// song as soon as the current one is decoded (the gapless border travels with the chunks).
///
/// Commands arrive through a mailbox (mutex + condition, taken once per command, never per chunk); between
/// chunks the thread only loads an atomic flag. `@unchecked Sendable`: the mailbox is guarded by `control`,
/// the decoding state is confined to the decoder thread, everything else is atomic.
final class PlayerDecoderThread: @unchecked Sendable {
    /// Where to start decoding a song.
    struct Start: Sendable {
        var song: PlayableSong
        /// Seconds from the song's (range) start.
        var seconds: Double
        var generation: UInt64
        /// How the first chunk begins the song (`.none` for a seek within the same song).
        var start: ChunkStart
    }

    enum Command: Sendable {
        /// Stop touching the pipe until the next command (the decoder is kept).
        case park
        /// Continue after `park`.
        case resume
        /// Start a song (or seek, when it is the song being decoded and `start` is `.none`).
        case start(Start)
        /// Drop the decoder and idle.
        case stop
        /// End the thread.
        case quit
    }

    private let pending = Atomic<Bool>(false)
    private let pipe: PlayerChunkPipe
    private let shared: PlayerShared
    private let factory: @Sendable (String) throws(FormatError) -> any Decoder
    private let streams: (@Sendable (String, InputCancellation, Bool) throws(FormatError) -> any Decoder)?
    /// Reads the ReplayGain of a file's APE tag (`Player.init`'s `apeReplayGainReader`).
    private let apeReplayGainReader: (@Sendable (String) -> ReplayGainInfo?)?
    /// Maps a storage's URI of a file not local yet to its local path (`Player.init`'s `localPaths`), given up on
    /// when its cancellation is cancelled.
    private let localPaths: (@Sendable (String, InputCancellation) -> String?)?
    /// The cancellation of the remote input being opened or decoded (or of the mount being made for a song), if
    /// any: the loop cancels it before it waits for this thread, which may be blocked on a stalled server or
    /// device.
    private let inputCancellation = Mutex<InputCancellation?>(nil)
    private let post: @Sendable (PlayerEngineEvent) -> Void
    private let logger: Logger

    // MARK: Mailbox (guarded by `control`)
    private let control = Condition()
    private var command: Command?
    /// Whether `command` (pending) leaves the input being opened or decoded (`send`'s `cancelInput`).
    private var commandCancelsInput = false
    private var commandSequence: UInt64 = 0
    private var acknowledged: UInt64 = 0
    private var queuedSong: PlayableSong?
    /// The newest song in the pipe (being decoded or decoded to its end) and the sequence of its first chunk.
    private var newestToken: UInt64?
    /// The newest song's token while it is being decoded by a decoder that cannot seek (mpd's
    /// `IsUnseekableCurrentSong`), else `nil`.
    private var unseekableToken: UInt64?
    private var songBorder: UInt64 = 0

    // MARK: Decoder-thread state
    private var decoder: (any Decoder)?
    private var song: PlayableSong?
    private var generation: UInt64 = 0
    private var parked = false
    private var nextStart: ChunkStart = .none
    /// The revision of the stream tags the song being decoded read last (`ChunkHeader.tagRevision`; 0: none yet).
    /// A new song starts at 0: a revision no output played before the song changed must not reach the next song.
    private var tagRevision: UInt64 = 0
    /// The last revision given out, for any song: revisions only grow (outputs announce each one once).
    private var lastTagRevision: UInt64 = 0
    private var songFrame: UInt64 = 0
    private var endFrame: UInt64?
    private var songFrames: UInt64 = 0
    /// The open decoder's `totalFramesOverrideLibrary`, for the chunks' headers.
    private var songFramesOverrideLibrary = false
    private var rangeStartFrame: UInt64 = 0
    private var chunkStamp = ChunkHeader()
    /// The ReplayGain the decoder reported last: a new one (a later stream of an Ogg chain) re-stamps the chunks.
    private var decoderReplayGain: ReplayGainInfo?
    /// The song decoded to its end last in this run of songs: the old side of the next song change.
    private var fadingOut: PlayerCrossFade.Song?
    /// `audio_output_format`'s conversion of the song being decoded, when it changes the song's format.
    private var conversion: PlayerDecoderConversion?

    init(
        pipe: PlayerChunkPipe, shared: PlayerShared,
        factory: @escaping @Sendable (String) throws(FormatError) -> any Decoder,
        streams: (@Sendable (String, InputCancellation, Bool) throws(FormatError) -> any Decoder)? = nil,
        apeReplayGainReader: (@Sendable (String) -> ReplayGainInfo?)? = nil,
        localPaths: (@Sendable (String, InputCancellation) -> String?)? = nil,
        logger: Logger, post: @escaping @Sendable (PlayerEngineEvent) -> Void
    ) {
        self.localPaths = localPaths
        self.pipe = pipe
        self.shared = shared
        self.factory = factory
        self.streams = streams
        self.apeReplayGainReader = apeReplayGainReader
        self.logger = logger
        self.post = post
    }

    /// Starts the thread. Loop thread, once.
    func start() {
        NamedThread.detach("decoder") { [self] in self.run() }
    }

    // MARK: - Loop side

    /// Sends a command; with `wait`, returns once the decoder thread handled it. With `cancelInput`, also
    /// interrupts the remote input (or the mount) of the song being opened or decoded (the song is being left),
    /// so the wait never depends on a server or a device: the one published now, or the one the decoder thread
    /// publishes before it takes the command. Loop thread.
    func send(_ command: Command, wait: Bool = false, cancelInput: Bool = false) {
        self.control.lock()
        self.command = command
        // A command it replaces before the decoder thread took it may have left the song already.
        self.commandCancelsInput = self.commandCancelsInput || cancelInput
        self.commandSequence += 1
        let sequence = self.commandSequence
        self.pending.store(true, ordering: .releasing)
        self.control.broadcast()
        self.control.unlock()
        // After the command is set: a cancellation published from now on sees it (`publish(_:)`).
        if cancelInput { self.inputCancellation.withLock { $0 }?.cancel() }
        self.pipe.decoderWakeup.signal()
        guard wait else { return }
        self.control.lock()
        while self.acknowledged < sequence { self.control.wait() }
        self.control.unlock()
    }

    /// Sets the song to decode after the current one. Loop thread.
    func setQueued(_ song: PlayableSong?) {
        self.control.lock()
        self.queuedSong = song
        self.control.unlock()
    }

    /// The token of the newest song in the pipe and the sequence number of its first chunk. Loop thread.
    var newestSong: (token: UInt64?, border: UInt64) {
        self.control.lock()
        defer { self.control.unlock() }
        return (self.newestToken, self.songBorder)
    }

    /// The token of the song being decoded when its decoder cannot seek (a seek into it fails, as in mpd).
    var unseekableSong: UInt64? {
        self.control.lock()
        defer { self.control.unlock() }
        return self.unseekableToken
    }

    /// Forgets the newest song (the loop flushed the pipe). Loop thread, with the decoder parked.
    func forgetNewestSong() {
        self.control.lock()
        self.newestToken = nil
        self.control.unlock()
    }

    // MARK: - Decoder thread

    private func run() {
        while true {
            if self.pending.load(ordering: .acquiring) || self.decoder == nil || self.parked {
                self.control.lock()
                while self.commandSequence == self.acknowledged && (self.decoder == nil || self.parked) {
                    self.control.wait()
                }
                let command = self.commandSequence != self.acknowledged ? self.command : nil
                let sequence = self.commandSequence
                self.command = nil
                self.commandCancelsInput = false
                self.pending.store(false, ordering: .releasing)
                self.control.unlock()
                if let command {
                    let quit = self.handle(command)
                    self.control.lock()
                    self.acknowledged = sequence
                    self.control.broadcast()
                    self.control.unlock()
                    if quit { return }
                }
                continue
            }
            self.decodeChunk()
        }
    }

    private func handle(_ command: Command) -> Bool {
        switch command {
        case .park:
            self.parked = true
        case .resume:
            self.parked = false
        case .stop:
            self.parked = false
            self.fadingOut = nil
            self.close()
        case .quit:
            self.close()
            return true
        case .start(let start):
            self.parked = false
            self.generation = start.generation
            if start.start != .queued { self.fadingOut = nil }
            if start.start == .none, let song = self.song, song.token == start.song.token, self.decoder != nil {
                self.seek(toSeconds: start.seconds, reopening: start)
            } else {
                self.open(start.song, atSeconds: start.seconds, start: start.start)
            }
        }
        return false
    }

    private func close() {
        self.decoder = nil
        self.conversion = nil
        self.song = nil
        self.inputCancellation.withLock { $0 = nil }
        self.control.lock()
        self.newestToken = nil
        self.unseekableToken = nil
        self.control.unlock()
    }

    /// Opens `song`; on failure reports it and goes on with the queued song, if any.
    private func open(_ first: PlayableSong, atSeconds seconds: Double, start: ChunkStart) {
        var song = first
        var seconds = seconds
        while true {
            let cancellation = InputCancellation()
            // A storage's file not local yet is made so (mounted), then decoded as the local file it is; the loop
            // cancels the mount as it cancels an open.
            if song.isRemote, let localPaths = self.localPaths {
                self.publish(cancellation)
                if let local = localPaths(song.path, cancellation) { song.path = local }
                if cancellation.isCancelled {
                    self.close()
                    return
                }
            }
            do throws(FormatError) {
                var decoder = try self.openDecoder(song, cancellation: cancellation)
                song.replayGain = self.replayGain(of: song, decoder: decoder)
                let rate = UInt64(max(1, decoder.format.sampleRate))
                self.rangeStartFrame = song.rangeStartMilliseconds * rate / 1000
                let total = decoder.totalFrames
                self.songFramesOverrideLibrary = song.rangeEndMilliseconds == nil && decoder.totalFramesOverrideLibrary
                self.endFrame = song.rangeEndMilliseconds.map {
                    $0 * rate / 1000 - min($0 * rate / 1000, self.rangeStartFrame)
                }
                if let endFrame = self.endFrame {
                    self.songFrames = endFrame
                } else if let total {
                    self.songFrames = total - min(total, self.rangeStartFrame)
                } else {
                    self.songFrames = 0
                }
                let target = Self.frame(atSeconds: seconds, of: song, rate: rate)
                self.songFrame = 0
                // mpd skips the initial seek of a decoder that cannot seek: it starts at the beginning.
                if target > 0, decoder.isSeekable {
                    let reached = try decoder.seek(toFrame: target)
                    self.songFrame = reached - min(reached, self.rangeStartFrame)
                }
                let conversion = try self.makeConversion(for: decoder.format)
                conversion?.reset(songFrame: self.songFrame)
                self.conversion = conversion
                self.decoder = decoder
                self.song = song
                self.tagRevision = 0
                if let tags = song.tags { self.shared.publishSongTags(tags, token: song.token) }
                self.nextStart = start
                self.stamp(song, format: conversion?.output ?? decoder.format, songFormat: decoder.format)
                self.decoderReplayGain = decoder.replayGain
                self.control.lock()
                self.newestToken = song.token
                self.unseekableToken = decoder.isSeekable ? nil : song.token
                self.songBorder = self.pipe.written.load(ordering: .acquiring)
                let border = self.songBorder
                self.control.unlock()
                if start == .queued {
                    self.planCrossFade(into: decoder, song: song, border: border)
                } else {
                    // mpd's decoder start-up (`CheckDecoderStartup`): the format is known, idle `player`.
                    self.post(.decoderOpened(token: song.token, format: decoder.format, generation: self.generation))
                }
                return
            } catch {
                // Left by the loop (a command is pending): nothing to report, nothing to go on with.
                if cancellation.isCancelled {
                    self.close()
                    return
                }
                guard let next = self.reportFailure(song, error: error, start: start) else { return }
                song = next
                seconds = 0
            }
        }
    }

    /// The ReplayGain the chunks of `song` carry, which the outputs apply in the mode of the moment (so a mode set
    /// while the song plays applies to it at once, as in `mpd`): what the decoder read in the file (`mpd`'s
    /// plugins submit it whatever the mode), else the library's, else, while ReplayGain is on, the file's APE
    /// tag's (`mpd`'s decoder thread reads that only then; a remote stream's is read by `streams`, which the
    /// decoder reports as its own).
    private func replayGain(of song: PlayableSong, decoder: any Decoder) -> ReplayGainInfo {
        if let gain = decoder.replayGain { return gain }
        guard song.replayGain.isEmpty, !song.isRemote, self.shared.mode != .off, let read = self.apeReplayGainReader
        else { return song.replayGain }
        return read(song.path) ?? song.replayGain
    }

    /// The conversion `audio_output_format` asks for songs of `format` (`mpd`'s decoder `out_audio_format`), if
    /// it changes anything.
    ///
    /// - Throws: `FormatError` when the formats cannot be converted: the song fails, as in `mpd`.
    private func makeConversion(for format: AudioFormat) throws(FormatError) -> PlayerDecoderConversion? {
        guard let mask = self.shared.outputFormatMask else { return nil }
        let output = mask.applied(to: format)
        guard output != format else { return nil }
        do throws(OutputError) {
            return try PlayerDecoderConversion(
                input: format, output: output, chunkBytes: self.pipe.chunkBytes, resampler: self.shared.resampler)
        } catch {
            throw FormatError.decoder(error.message)
        }
    }

    /// Opens the decoder for `song`: a remote stream through `streams`, with `cancellation` published for
    /// the loop; a file through the factory.
    private func openDecoder(_ song: PlayableSong, cancellation: InputCancellation) throws(FormatError)
        -> any Decoder
    {
        guard let streams = self.streams, song.isRemote else {
            self.inputCancellation.withLock { $0 = nil }
            return try self.factory(song.path)
        }
        self.publish(cancellation)
        return try streams(song.path, cancellation, self.shared.mode != .off)
    }

    /// Makes `cancellation` the one the loop cancels, and cancels it at once when the pending command leaves the
    /// song (the loop cancelled the one published before). Decoder thread.
    private func publish(_ cancellation: InputCancellation) {
        self.inputCancellation.withLock { $0 = cancellation }
        self.control.lock()
        let leaving = self.command != nil && self.commandCancelsInput
        self.control.unlock()
        if leaving { cancellation.cancel() }
    }

    /// Seeks within the song being decoded (reopening it when the decoder refuses, or when the loop cancelled its
    /// remote input for the seek: a decoder that seeks within what it holds would otherwise go on to a read that
    /// fails as cancelled, and the song would stop).
    private func seek(toSeconds seconds: Double, reopening start: Start) {
        guard var decoder = self.decoder else { return }
        if self.inputCancellation.withLock({ $0?.isCancelled ?? false }) {
            self.open(start.song, atSeconds: seconds, start: .none)
            return
        }
        let rate = UInt64(max(1, decoder.format.sampleRate))
        var target = Self.frame(atSeconds: seconds, of: start.song, rate: rate)
        if let endFrame = self.endFrame { target = min(target, self.rangeStartFrame + endFrame) }
        do throws(FormatError) {
            let reached = try decoder.seek(toFrame: target)
            self.decoder = decoder
            self.songFrame = reached - min(reached, self.rangeStartFrame)
            self.conversion?.reset(songFrame: self.songFrame)
            self.nextStart = .none
            self.control.lock()
            self.songBorder = self.pipe.written.load(ordering: .acquiring)
            self.control.unlock()
        } catch {
            self.open(start.song, atSeconds: seconds, start: .none)
        }
    }

    /// The frame of the file `seconds` after `song`'s (range) start, as `mpd` computes a seek's: whole milliseconds
    /// from the file's start, times the rate, over 1000 (`SongTime::ToScale` of the range's start plus the
    /// position). The position came in whole milliseconds (`SongTime::FromS`): `2.3 * 44100` in floating point
    /// would land a frame early.
    static func frame(atSeconds seconds: Double, of song: PlayableSong, rate: UInt64) -> UInt64 {
        let milliseconds = UInt64((max(0, seconds) * 1000).rounded())
        return (song.rangeStartMilliseconds + milliseconds) * rate / 1000
    }

    /// What the cross-fade decision needs to know about the song `decoder` decodes.
    private func crossFadeSide(_ decoder: any Decoder, song: PlayableSong) -> PlayerCrossFade.Song {
        let rate = Double(max(1, decoder.format.sampleRate))
        return PlayerCrossFade.Song(
            seconds: self.songFrames > 0 ? Double(self.songFrames) / rate : nil,
            format: self.shared.outputFormatMask?.applied(to: decoder.format) ?? decoder.format,
            replayGainDB: self.replayGainDB(song.replayGain), mixRampStart: decoder.mixRampStart,
            mixRampEnd: decoder.mixRampEnd)
    }

    /// The ReplayGain adjustment in dB that MixRamp levels are corrected by (0 when off or unknown).
    private func replayGainDB(_ info: ReplayGainInfo) -> Double {
        let mode = self.shared.mode
        let gain = mode == .album ? (info.albumGain ?? info.trackGain) : info.trackGain
        guard mode != .off, gain != nil else { return 0 }
        let scale = self.shared.replayGain.scale(
            mode: mode, trackGain: info.trackGain.map(Float.init) ?? .nan,
            trackPeak: info.trackPeak.map(Float.init) ?? .nan,
            albumGain: info.albumGain.map(Float.init) ?? .nan, albumPeak: info.albumPeak.map(Float.init) ?? .nan)
        return 20 * log10(Double(scale))
    }

    /// Decides the cross-fade into the queued song just opened and publishes it for the outputs.
    /// Always publishes (a plan of 0 chunks when the songs do not cross-fade), so a plan made for a queued song
    /// that was replaced before it was heard never applies to its replacement.
    private func planCrossFade(into decoder: any Decoder, song: PlayableSong, border: UInt64) {
        let settings = self.shared.crossFade
        var chunks = 0
        if let previous = self.fadingOut {
            let next = self.crossFadeSide(decoder, song: song)
            let chunkFrames = self.pipe.chunkFrames(frameSize: next.format.frameSize)
            let capped: Bool
            (chunks, capped) = settings.chunks(
                from: previous, to: next, chunkSeconds: Double(chunkFrames) / Double(max(1, next.format.sampleRate)),
                maxChunks: self.pipe.capacity - self.pipe.decoderThreshold - 1)
            if capped { self.logger.warning("audio_buffer_size too small for computed MixRamp overlap") }
        }
        self.shared.publish(PlayerFadePlan(border: border, chunks: chunks, adds: settings.adds))
    }

    private func stamp(_ song: PlayableSong, format: AudioFormat, songFormat: AudioFormat) {
        self.chunkStamp = ChunkHeader(
            token: song.token, generation: self.generation, songFrame: 0,
            songFrames: self.songFrames,
            songFramesOverrideLibrary: self.songFramesOverrideLibrary, frames: 0, format: format,
            songFormat: songFormat,
            start: .none)
        self.stampReplayGain(song.replayGain)
    }

    private func stampReplayGain(_ gain: ReplayGainInfo) {
        self.chunkStamp.trackGain = gain.trackGain.map(Float.init) ?? .nan
        self.chunkStamp.trackPeak = gain.trackPeak.map(Float.init) ?? .nan
        self.chunkStamp.albumGain = gain.albumGain.map(Float.init) ?? .nan
        self.chunkStamp.albumPeak = gain.albumPeak.map(Float.init) ?? .nan
    }

    /// Decodes one chunk into the pipe, waiting for space; returns early when a command arrives.
    private func decodeChunk() {
        guard let decoder = self.decoder else { return }
        // Waits for room, and for a reader: with no output consuming, nothing would ever pace the decoder.
        while self.pipe.freeChunks() < 1 || !self.pipe.hasConsumer() {
            if self.pending.load(ordering: .acquiring) { return }
            self.pipe.decoderWakeup.wait(unless: {
                self.pending.load(ordering: .acquiring)
                    || (self.pipe.freeChunks() >= self.pipe.decoderThreshold && self.pipe.hasConsumer())
            })
        }
        let sequence = self.pipe.written.load(ordering: .acquiring)
        let frames: Int
        let songFrame: UInt64
        if let conversion = self.conversion {
            songFrame = conversion.songFrame(ofOutputFrame: conversion.outputFrame)
            guard let converted = self.decodeConverted(conversion, into: sequence) else { return }
            frames = converted
        } else {
            songFrame = self.songFrame
            let frameSize = decoder.format.frameSize
            let capacityFrames = self.decodableFrames(self.pipe.chunkFrames(frameSize: frameSize))
            guard
                let decoded = self.decode(
                    into: UnsafeMutableRawBufferPointer(
                        rebasing: self.pipe.pcm(sequence)[0..<(capacityFrames * frameSize)]),
                    frames: capacityFrames)
            else { return }
            frames = decoded
        }
        guard frames > 0 else {
            self.songEnded()
            return
        }
        let header = self.pipe.header(sequence)
        header.pointee = self.chunkStamp
        header.pointee.generation = self.generation
        header.pointee.songFrame = songFrame
        header.pointee.frames = frames
        header.pointee.bitRate = (self.decoder ?? decoder).bitRate
        header.pointee.start = self.nextStart
        header.pointee.tagRevision = self.tagRevision
        self.nextStart = .none
        self.pipe.publish(sequence)
    }

    /// At most `frames`, and no more than the song's range leaves.
    private func decodableFrames(_ frames: Int) -> Int {
        guard let endFrame = self.endFrame else { return frames }
        return Int(min(UInt64(frames), endFrame - min(endFrame, self.songFrame)))
    }

    /// Fills chunk `sequence` with whole `mpd` chunks of the converted format (decoding and converting until
    /// enough are staged, or the song ends). Returns the frames written (0: the song ended), `nil` when the
    /// decoder failed and that was handled.
    private func decodeConverted(_ conversion: PlayerDecoderConversion, into sequence: UInt64) -> Int? {
        let wanted = self.pipe.chunkFrames(frameSize: conversion.output.frameSize)
        while conversion.stagedFrames < wanted, !conversion.inputEnded {
            let capacity = self.decodableFrames(conversion.inputFrames)
            guard let frames = self.decode(into: conversion.scratch, frames: capacity) else { return nil }
            if frames == 0 {
                conversion.inputEnded = true
            } else {
                conversion.decode(frames)
            }
        }
        return conversion.take(into: self.pipe.pcm(sequence), capacityFrames: wanted)
    }

    /// Decodes up to `frames` frames into `buffer` and advances the song's position. Returns the frames decoded
    /// (0: the song ended, or its decoder failed after some of it was played), `nil` when the decoder failed
    /// and that was handled (the song reported as failed, the queued one opened, or the input cancelled).
    private func decode(into buffer: UnsafeMutableRawBufferPointer, frames capacity: Int) -> Int? {
        guard var decoder = self.decoder, let song = self.song, capacity > 0 else { return 0 }
        let frames: Int
        do throws(FormatError) {
            frames = try decoder.decode(
                into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<(capacity * decoder.format.frameSize)]))
            self.decoder = decoder
            // As mpd's SubmitReplayGain: the frames just decoded and all after them take the new gain.
            if let gain = decoder.replayGain, gain != self.decoderReplayGain {
                self.decoderReplayGain = gain
                self.song?.replayGain = gain
                self.stampReplayGain(gain)
            }
            // Only a remote song takes the tags its stream brings (mpd's `LockUpdateSongTag` skips files).
            if song.isRemote, let tags = decoder.readTag() {
                self.lastTagRevision += 1
                self.tagRevision = self.lastTagRevision
                self.shared.publishTags(tags, revision: self.tagRevision)
            }
        } catch {
            if self.inputCancellation.withLock({ $0?.isCancelled ?? false }) {
                self.close()
                return nil
            }
            if self.nextStart != .none {
                // Nothing of this song reached the pipe: it failed, as when it cannot be opened.
                if let next = self.reportFailure(song, error: error, start: self.nextStart) {
                    self.open(next, atSeconds: 0, start: self.nextStart)
                }
                return nil
            }
            self.logger.warning("decoding ended early", ["uri": song.uri, "error": "\(error)"])
            return 0
        }
        self.songFrame += UInt64(frames)
        return frames
    }

    /// Reports that `song` failed and takes the queued song, if any, to try next (else marks the end).
    private func reportFailure(_ song: PlayableSong, error: FormatError, start: ChunkStart) -> PlayableSong? {
        self.logger.warning("cannot decode", ["uri": song.uri, "error": "\(error)"])
        self.decoder = nil
        self.song = nil
        self.conversion = nil
        self.control.lock()
        self.unseekableToken = nil
        let next = self.queuedSong
        self.queuedSong = nil
        self.control.unlock()
        let stopped = next == nil && start == .play
        self.post(
            .decodeFailed(
                token: song.token, message: Self.failureMessage(song, error), generation: self.generation,
                stopped: stopped))
        if next == nil {
            self.shared.endState.store(
                (stopped ? PlayerEndState.stopped : .endOfStream).rawValue, ordering: .sequentiallyConsistent)
            self.pipe.wakeReaders()
        }
        return next
    }

    /// `mpd`'s error for a song that could not be decoded: its URI alone when every plugin declined it, else the
    /// file's path and what failed ("Failed to decode /music/a.mp3; avformat_open_input() failed: End of file").
    static func failureMessage(_ song: PlayableSong, _ error: FormatError) -> String {
        if case .notRecognized = error { return "Failed to decode \(song.uri)" }
        return "Failed to decode \(song.path); \(error.mpdMessage)"
    }

    /// The current song is decoded: go on with the queued one, or mark the end of the stream.
    private func songEnded() {
        self.control.lock()
        let next = self.queuedSong
        self.queuedSong = nil
        self.unseekableToken = nil
        if next == nil {
            self.shared.endState.store(PlayerEndState.endOfStream.rawValue, ordering: .sequentiallyConsistent)
        }
        self.control.unlock()
        if next == nil { self.pipe.wakeReaders() }
        if let decoder = self.decoder, let song = self.song { self.fadingOut = self.crossFadeSide(decoder, song: song) }
        self.decoder = nil
        self.song = nil
        self.conversion = nil
        if let next { self.open(next, atSeconds: 0, start: .queued) }
    }
}
