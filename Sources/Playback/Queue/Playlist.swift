// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// The queue plus playback state: the current song, the playing flag, the modes, the song queued next in the
/// player; drives a `PlayerControl` and reacts to its events as `mpd`'s `playlist` does.
///
/// Loop-confined: create it and call every member on the event loop thread.
public final class Playlist {
    /// What changed, for idle events (`playlist`, `player`, `options`, `mixer`, `output`).
    public struct Changes: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// The queue (idle `playlist`).
        public static let playlist = Changes(rawValue: 1)
        /// Playback state or the current song (idle `player`).
        public static let player = Changes(rawValue: 2)
        /// repeat, random, single, consume, crossfade, mixramp, replay gain (idle `options`).
        public static let options = Changes(rawValue: 4)
        /// The volume (idle `mixer`).
        public static let mixer = Changes(rawValue: 8)
        /// An output (idle `output`).
        public static let output = Changes(rawValue: 16)
    }

    private enum ErrorKind {
        case none, decoder, output
    }

    /// The songs, their order and the modes.
    public private(set) var queue: Queue
    /// The player this playlist drives.
    public let player: any PlayerControl
    /// The current song's order index, or -1.
    public private(set) var current = -1
    /// The order index of the song handed to the player to play next, or -1.
    public private(set) var queued = -1
    /// Whether playback is on (paused counts as playing).
    public private(set) var playing = false
    /// The player error `status` shows as `error:`, if any.
    public private(set) var error: String?
    /// `replay_gain_mode` as configured (`auto` is resolved for the player).
    public var replayGainMode = ReplayGainMode.off {
        didSet { self.updateEffectiveReplayGainMode() }
    }
    /// Called after every change, on the loop thread.
    public var onChange: (Changes) -> Void = { _ in }

    private var errorKind = ErrorKind.none
    private var stopOnError = false
    private var errorCount = 0
    private var bulkEdit = false
    private var bulkModified = false
    private var nextToken: UInt64 = 0
    private var currentToken: UInt64?
    private var queuedToken: UInt64?
    private let resolvePath: (String) -> String

    /// Creates an empty playlist driving `player`, and sets the player's `onEvent`.
    ///
    /// - Parameters:
    ///   - resolvePath: the absolute file system path of a song URI (music directory + URI).
    public init(queue: Queue, player: any PlayerControl, resolvePath: @escaping (String) -> String) {
        self.queue = queue
        self.player = player
        self.resolvePath = resolvePath
        player.onEvent = { [unowned self] event in self.handle(event) }
        self.updateEffectiveReplayGainMode()
    }

    // MARK: - State

    /// The current song's position, if any.
    public var currentPosition: Int? { self.current >= 0 ? self.queue.order[self.current] : nil }

    /// The position `status` reports as `nextsong` (single and repeat give the current song; consume is
    /// ignored).
    public var nextPosition: Int? {
        guard self.current >= 0 else { return nil }
        if self.queue.single != .off && self.queue.repeatMode { return self.queue.order[self.current] }
        if self.current + 1 < self.queue.count { return self.queue.order[self.current + 1] }
        if self.queue.repeatMode { return self.queue.order[0] }
        return nil
    }

    /// The id of the song queued in the player, if playing.
    private var queuedID: Int? {
        self.playing && self.queued >= 0 ? self.queue.item(atOrder: self.queued).id : nil
    }

    private func emit(_ changes: Changes) { self.onChange(changes) }

    private func onModified() {
        if self.bulkEdit {
            self.bulkModified = true
            return
        }
        self.queue.incrementVersion()
        self.emit(.playlist)
    }

    private func makeToken() -> UInt64 {
        self.nextToken += 1
        return self.nextToken
    }

    private func playable(atOrder orderIndex: Int, token: UInt64) -> PlayableSong {
        let song = self.queue.item(atOrder: orderIndex).song
        return PlayableSong(
            token: token, uri: song.realURI ?? song.uri, path: self.resolvePath(song.realURI ?? song.uri),
            replayGain: song.info.replayGain,
            durationMilliseconds: song.info.durationMilliseconds, rangeStartMilliseconds: song.startMilliseconds,
            rangeEndMilliseconds: song.endMilliseconds == 0 ? nil : song.endMilliseconds,
            tags: URIScheme.hasScheme(song.uri) ? nil : song.info.tags)
    }

    /// `mpd`'s `Partition::PrefetchQueue`: the song after the current one goes to the player's input cache.
    /// Nothing is looked up without a cache, and the next song's tags are never copied out.
    private func prefetchNext() {
        guard self.player.prefetches, self.playing, self.current >= 0,
            let next = self.queue.nextOrder(after: self.current)
        else { return }
        self.player.prefetch(path: self.resolvePath(self.queue.item(atOrder: next).playableURI))
    }

    private func updateEffectiveReplayGainMode() {
        var mode = self.replayGainMode
        if mode == .auto { mode = self.queue.random ? .track : .album }
        self.player.replayGainMode = mode
    }

    // MARK: - The song queued in the player

    private func queueSong(atOrder orderIndex: Int) {
        self.queued = orderIndex
        let token = self.makeToken()
        self.queuedToken = token
        self.player.queue(self.playable(atOrder: orderIndex, token: token))
    }

    /// Makes the player's next song match the queue after a change; `previous` is the id queued before it.
    private func updateQueuedSong(previous: Int?) {
        guard self.playing else { return }
        if previous == nil && self.bulkEdit { return }
        var nextOrder = self.current >= 0 ? self.queue.nextOrder(after: self.current) : 0
        if nextOrder == 0 && self.queue.random && self.queue.single == .off && self.current >= 0 {
            // A new random order for each pass through the queue.
            let position = self.queue.order[self.current]
            self.queue.shuffleOrder()
            self.current = self.queue.order(ofPosition: position)
            nextOrder = 0
        }
        let nextID = nextOrder.map { self.queue.item(atOrder: $0).id }
        if previous != nil && nextID != previous {
            self.player.queue(nil)
            self.queued = -1
            self.queuedToken = nil
        }
        if let nextOrder {
            if nextID != previous {
                self.queueSong(atOrder: nextOrder)
            } else {
                self.queued = nextOrder
            }
        }
    }

    /// Resets the priority of the song that just started.
    private func songStarted() {
        if self.queue.setPriority(position: self.queue.order[self.current], 0, afterOrder: -1, reorder: false) {
            self.onModified()
        }
    }

    private func queuedSongStarted() {
        let oldCurrent = self.current
        self.current = self.queued
        self.queued = -1
        self.currentToken = self.queuedToken
        self.queuedToken = nil
        if self.queue.consume { self.deleteOrder(oldCurrent) }
        self.emit(.player)
        self.songStarted()
    }

    private func playOrder(_ orderIndex: Int) {
        self.playing = true
        self.queued = -1
        self.queuedToken = nil
        self.current = orderIndex
        let token = self.makeToken()
        self.currentToken = token
        self.clearError()
        self.player.play(self.playable(atOrder: orderIndex, token: token), atSeconds: 0)
        self.emit(.player)
        self.songStarted()
    }

    // MARK: - Player events

    /// Reacts to a player event (the player's `onEvent` calls this).
    public func handle(_ event: PlayerEvent) {
        defer {
            // As mpd's player sync (a decoder started for `play`, a seek or a song border): the input cache gets
            // the next song.
            switch event {
            case .songStarted, .decoderStarting: self.prefetchNext()
            default: break
            }
        }
        switch event {
        case .songStarted(let token):
            // Only a border is news: the start of a song `play` or `seek` asked for raised `player` with the
            // command and again at the decoder's start-up (`decoderStarted`), and our event comes when audio
            // reaches an output, which a `pause` right after `play` delays.
            guard self.playing else { return }
            if token == self.queuedToken {
                self.emit(.player)
                self.queuedSongStarted()
            } else if token != self.currentToken {
                return
            }
            if self.queued < 0 { self.updateQueuedSong(previous: nil) }
        case .decoderStarting(let token):
            guard self.playing, token == self.currentToken, self.queued < 0 else { return }
            self.updateQueuedSong(previous: nil)
        case .decoderStarted(let token):
            // As mpd's decoder start-up, a moment after the command's own `player`: a client that went back
            // to idle at once is woken again.
            guard self.playing, token == self.currentToken else { return }
            self.emit(.player)
        case .finished(let token):
            self.emit(.player)
            guard self.playing, token == self.currentToken else { return }
            self.playerStopped()
        case .songFailed(let token, let message):
            self.emit(.player)
            self.error = message
            self.errorKind = .decoder
            guard self.playing else { return }
            if token == self.currentToken {
                // With a queued song the player goes on with it (a songStarted follows); otherwise it stopped.
                // Either way the failure counts, as mpd's player stops and `ResumePlayback` counts it before it
                // plays the next song: once every song of the queue failed in a row, playback stops there.
                if self.player.snapshot.state == .stop {
                    self.playerStopped()
                } else {
                    // mpd's player stops here and its playlist plays the next song, which clears the error
                    // (`PlayerControl::SeekLocked`); ours went on with it at once: the same outcome.
                    self.errorCount += 1
                    self.error = nil
                    self.errorKind = .none
                }
            } else if token == self.queuedToken {
                if self.player.snapshot.state == .stop {
                    // The current song ended and the next could not start: it counts as played.
                    self.current = self.queued
                    self.playerStopped()
                } else {
                    self.queued = -1
                    self.queuedToken = nil
                }
            }
        case .outputFailed(let message):
            // As mpd: the player paused on the song (its playlist stops only when the player stops).
            self.emit(.player)
            self.error = message
            self.errorKind = .output
        case .pausedAtBorder:
            self.emit(.player)
            if self.queue.single == .oneshot {
                self.queue.single = .off
                self.player.borderPause = false
                self.emit(.options)
            }
        case .mixerChanged:
            self.emit(.mixer)
        case .outputsChanged:
            self.emit(.output)
        case .tagChanged(let token, let tags):
            self.streamTagChanged(token: token, tags: tags)
        }
    }

    /// A stream's new tags, now playing, replace the current song's tags (its duration stays), as `mpd` does for
    /// remote songs only (`LockUpdateSongTag`, `playlist::TagModified`): idle `player` and, with the queue's
    /// version raised, `playlist`.
    private func streamTagChanged(token: UInt64, tags: [TagItem]) {
        guard self.playing, token == self.currentToken else { return }
        let order = self.current
        guard order >= 0, order < self.queue.count else { return }
        let position = self.queue.order[order]
        // Remote as mpd's `DetachedSong::IsRemote` sees it: by the URI the player opens, so a song of a mounted
        // storage (`m/x.flac`, played from `smb://…`) is remote too.
        guard URIScheme.hasScheme(self.resolvePath(self.queue.items[position].playableURI)) else { return }
        var song = self.queue.items[position].song
        self.emit(.player)
        song.info.tags = tags
        self.queue.replaceSong(at: position, with: song)
        self.onModified()
    }

    /// The player stopped by itself: go on with the next song, or stop after errors (`ResumePlayback`).
    private func playerStopped() {
        self.currentToken = nil
        self.queuedToken = nil
        self.queued = -1
        if self.errorKind == .none {
            self.errorCount = 0
        } else {
            self.errorCount += 1
        }
        if (self.stopOnError && self.errorKind != .none) || self.errorKind == .output
            || self.errorCount >= self.queue.count
        {
            self.stop()
        } else {
            try? self.playNext()
        }
    }

    // MARK: - Playback control

    /// Clears the `error:` line (`clearerror`).
    public func clearError() {
        self.error = nil
        self.errorKind = .none
    }

    /// `stop`: keeps the current song; in random mode the order is shuffled again.
    public func stop() {
        guard self.playing else { return }
        self.player.stop()
        self.emit(.player)
        self.queued = -1
        self.queuedToken = nil
        self.currentToken = nil
        self.playing = false
        if self.queue.random {
            let position = self.queue.order[self.current]
            self.queue.shuffleOrder()
            self.current = self.queue.order(ofPosition: position)
        }
    }

    private func moveOrderToCurrent(_ orderIndex: Int) -> Int {
        guard self.queue.random else { return orderIndex }
        if self.playing { return self.queue.moveOrder(orderIndex, after: self.current) }
        if self.current >= 0 { return self.queue.moveOrder(orderIndex, before: self.current) }
        return self.queue.moveOrder(orderIndex, before: 0)
    }

    /// `play [POS]`; -1 resumes, or plays the current or first song.
    ///
    /// - Throws: `Bad song index`.
    public func play(position: Int) throws(PlaylistError) {
        self.clearError()
        var orderIndex = position
        if position == -1 {
            if self.queue.isEmpty { return }
            if self.playing {
                self.setPaused(false)
                return
            }
            orderIndex = max(self.current, 0)
        } else if position < 0 || position >= self.queue.count {
            throw .badSongIndex
        }
        if self.queue.random {
            if position >= 0 { orderIndex = self.queue.order(ofPosition: position) }
            orderIndex = self.moveOrderToCurrent(orderIndex)
        }
        self.stopOnError = false
        self.errorCount = 0
        self.playOrder(orderIndex)
    }

    /// `playid [ID]`; -1 as `play`.
    ///
    /// - Throws: `No such song`.
    public func play(id: Int) throws(PlaylistError) {
        if id == -1 { return try self.play(position: -1) }
        guard let position = self.queue.position(ofID: id) else { throw .noSuchSong }
        try self.play(position: position)
    }

    /// `next`, or the end of a song: the next song in order, or stop at the end (and forget the current
    /// song). Consume removes the song left.
    ///
    /// - Parameter ignoringSingle: the `next` command plays on even in single mode.
    /// - Throws: `Not playing`.
    public func playNext(ignoringSingle: Bool = false) throws(PlaylistError) {
        guard self.playing else { throw .notPlaying }
        let single = self.queue.single
        if ignoringSingle { self.queue.single = .off }
        defer { if ignoringSingle { self.queue.single = single } }
        let oldCurrent = self.current
        self.stopOnError = false
        if let nextOrder = self.queue.nextOrder(after: self.current) {
            if nextOrder == 0 && self.queue.random { self.queue.shuffleOrder() }
            self.playOrder(nextOrder)
        } else {
            self.stop()
            self.current = -1
        }
        if self.queue.consume { self.deleteOrder(oldCurrent) }
    }

    /// `previous`: the song before in order; from the first, the last with repeat, else the first again.
    ///
    /// - Throws: `Not playing`.
    public func playPrevious() throws(PlaylistError) {
        guard self.playing else { throw .notPlaying }
        let orderIndex: Int
        if self.current > 0 {
            orderIndex = self.current - 1
        } else if self.queue.repeatMode {
            orderIndex = self.queue.count - 1
        } else {
            orderIndex = self.current
        }
        self.playOrder(orderIndex)
    }

    /// `pause` without argument: toggles, unless stopped.
    public func togglePause() {
        let state = self.player.snapshot.state
        guard state != .stop else { return }
        self.player.setPaused(state == .play)
        self.emit(.player)
    }

    /// `pause 0|1`: nothing when stopped or already in that state.
    public func setPaused(_ paused: Bool) {
        let state = self.player.snapshot.state
        guard (state == .play && paused) || (state == .pause && !paused) else { return }
        self.player.setPaused(paused)
        self.emit(.player)
    }

    /// A time argument as `mpd` keeps it: whole milliseconds, computed in `float` from the parsed `float`
    /// (`SongTime::FromS`), so `0.7` is 700 ms (in `double`, 699).
    static func milliseconds(_ seconds: Double) -> Double {
        Double((Float(seconds) * 1000).rounded(.towardZero))
    }

    private func seek(order orderIndex: Int, milliseconds: Double) throws(PlaylistError) {
        self.clearError()
        self.stopOnError = true
        self.errorCount = 0
        var orderIndex = orderIndex
        let sameSong = self.playing && self.current == orderIndex && self.currentToken != nil
        if !sameSong {
            orderIndex = self.moveOrderToCurrent(orderIndex)
            self.playing = true
            self.current = orderIndex
        }
        self.queued = -1
        self.queuedToken = nil
        let seconds = milliseconds / 1000
        if sameSong, let token = self.currentToken {
            if !self.player.seek(token: token, toSeconds: seconds) {
                self.error = "Not seekable"
                self.errorKind = .decoder
                self.updateQueuedSong(previous: nil)
                throw PlaylistError(.player, "Not seekable")
            }
        } else {
            // mpd's seek into another song keeps a paused player paused (play's own start unpauses).
            let wasPaused = self.player.snapshot.state == .pause
            let token = self.makeToken()
            self.currentToken = token
            self.player.play(self.playable(atOrder: orderIndex, token: token), atSeconds: seconds)
            if wasPaused { self.player.setPaused(true) }
        }
        self.emit(.player)
        self.updateQueuedSong(previous: nil)
    }

    /// `seek POS TIME`: seeks in the song at `position`, starting it if it is not the current one.
    ///
    /// - Throws: `Bad song index`; `Not seekable`.
    public func seek(position: Int, seconds: Double) throws(PlaylistError) {
        guard position >= 0 && position < self.queue.count else { throw .badSongIndex }
        try self.seek(
            order: self.queue.random ? self.queue.order(ofPosition: position) : position,
            milliseconds: Self.milliseconds(seconds))
    }

    /// `seekid ID TIME`.
    ///
    /// - Throws: `No such song`; `Not seekable`.
    public func seek(id: Int, seconds: Double) throws(PlaylistError) {
        guard let position = self.queue.position(ofID: id) else { throw .noSuchSong }
        try self.seek(position: position, seconds: seconds)
    }

    /// `seekcur [+-]TIME`: relative to the elapsed time when `relative`; never before 0.
    ///
    /// - Throws: `Not playing`; `Not seekable`.
    public func seekCurrent(seconds: Double, relative: Bool) throws(PlaylistError) {
        guard self.playing else { throw .notPlaying }
        // As mpd: the argument in milliseconds, plus the elapsed time in milliseconds.
        var target = Self.milliseconds(seconds)
        if relative {
            let snapshot = self.player.snapshot
            guard snapshot.state != .stop else { throw .notPlaying }
            target += (snapshot.elapsedSeconds * 1000 + 1e-6).rounded(.towardZero)
        }
        if target < 0 { target = 0 }
        try self.seek(order: self.current, milliseconds: target)
    }

    // MARK: - Modes

    /// `repeat`.
    public func setRepeat(_ value: Bool) {
        guard value != self.queue.repeatMode else { return }
        self.queue.repeatMode = value
        self.player.borderPause = self.queue.single != .off && !self.queue.repeatMode
        self.updateQueuedSong(previous: self.queuedID)
        self.emit(.options)
    }

    /// `single`.
    public func setSingle(_ value: SingleMode) {
        guard value != self.queue.single else { return }
        self.queue.single = value
        self.player.borderPause = self.queue.single != .off && !self.queue.repeatMode
        self.updateQueuedSong(previous: self.queuedID)
        self.emit(.options)
    }

    /// `consume`.
    public func setConsume(_ value: Bool) {
        guard value != self.queue.consume else { return }
        self.queue.consume = value
        self.emit(.options)
    }

    /// `random`: shuffles the order (the playing song first) or restores it; turned on while stopped, it
    /// forgets the current song.
    public func setRandom(_ value: Bool) {
        guard value != self.queue.random else { return }
        let previous = self.queuedID
        self.queue.random = value
        if value {
            let position = self.playing ? self.currentPosition : nil
            self.queue.shuffleOrder()
            if let position {
                self.current = self.queue.moveOrder(from: self.queue.order(ofPosition: position), to: 0)
            } else {
                self.current = -1
            }
        } else {
            if self.current >= 0 { self.current = self.queue.order[self.current] }
            self.queue.restoreOrder()
        }
        self.updateQueuedSong(previous: previous)
        self.emit(.options)
        self.updateEffectiveReplayGainMode()
    }

    // MARK: - Editing

    /// Starts a bulk edit: one version bump and one idle event for many changes.
    public func beginBulk() {
        precondition(!self.bulkEdit)
        self.bulkEdit = true
        self.bulkModified = false
    }

    /// Ends a bulk edit.
    public func commitBulk() {
        precondition(self.bulkEdit)
        self.bulkEdit = false
        guard self.bulkModified else { return }
        if self.queued < 0 { self.updateQueuedSong(previous: nil) }
        self.onModified()
    }

    /// `clear`: stops, then empties the queue (ids keep counting).
    public func clear() {
        self.stop()
        self.queue.removeAll()
        self.current = -1
        self.onModified()
    }

    /// Appends a song; in random mode it is shuffled into the songs not yet played.
    ///
    /// - Returns: its id.
    /// - Throws: `Playlist is too large`.
    @discardableResult
    public func append(_ song: QueueSong) throws(PlaylistError) -> Int {
        try self.append(.song(song))
    }

    /// Appends an entry (a song of the library's snapshot, or one of its own), as `append(_:)` appends a song.
    @discardableResult
    public func append(_ entry: QueueEntry) throws(PlaylistError) -> Int {
        guard !self.queue.isFull else { throw .tooLarge }
        let previous = self.queuedID
        let id = self.queue.append(entry)
        if self.queue.random {
            let start = self.queued >= 0 ? self.queued + 1 : self.current + 1
            if start < self.queue.count { self.queue.shuffleOrderLastWithPriority(start, self.queue.count) }
        }
        self.updateQueuedSong(previous: previous)
        self.onModified()
        return id
    }

    private func deleteInternal(position: Int, previous: inout Int?) {
        let songOrder = self.queue.order(ofPosition: position)
        if self.playing && self.current == songOrder {
            let paused = self.player.snapshot.state == .pause
            // The current song goes: the next one plays instead, or playback stops.
            self.current = self.queue.nextOrder(after: self.current) ?? -1
            if self.current == songOrder { self.current = -1 }
            if self.current >= 0 && !paused {
                self.playOrder(self.current)
            } else {
                self.player.stop()
                self.emit(.player)
                self.playing = false
                self.queued = -1
                self.queuedToken = nil
                self.currentToken = nil
            }
            previous = nil
        } else if self.current == songOrder {
            self.current = -1
        }
        self.queue.delete(position: position)
        if self.current > songOrder { self.current -= 1 }
    }

    /// `delete POS`.
    ///
    /// - Throws: `Bad song index`.
    public func delete(position: Int) throws(PlaylistError) {
        guard position >= 0 && position < self.queue.count else { throw .badSongIndex }
        var previous = self.queuedID
        self.deleteInternal(position: position, previous: &previous)
        self.updateQueuedSong(previous: previous)
        self.onModified()
    }

    private func deleteOrder(_ orderIndex: Int) {
        try? self.delete(position: self.queue.order[orderIndex])
    }

    /// `delete START:END` (END clipped to the length; an empty range does nothing).
    ///
    /// - Throws: `Bad song index` when START is past the end.
    public func delete(start: Int, end: Int) throws(PlaylistError) {
        guard start <= self.queue.count else { throw .badSongIndex }
        let end = min(end, self.queue.count)
        guard start < end else { return }
        var previous = self.queuedID
        for position in stride(from: end - 1, through: start, by: -1) {
            self.deleteInternal(position: position, previous: &previous)
        }
        self.updateQueuedSong(previous: previous)
        self.onModified()
    }

    /// `deleteid ID`.
    ///
    /// - Throws: `No such song`.
    public func delete(id: Int) throws(PlaylistError) {
        guard let position = self.queue.position(ofID: id) else { throw .noSuchSong }
        try self.delete(position: position)
    }

    /// Moves positions `start..<end` to start at `to`.
    ///
    /// - Throws: `Bad song index`.
    public func move(start: Int, end: Int, to: Int) throws(PlaylistError) {
        let count = self.queue.count
        guard start >= 0 && start < count && end - 1 >= 0 && end - 1 < count else { throw .badSongIndex }
        // mpd's destination is unsigned: a negative one is out of range too.
        guard to >= 0 && to + (end - start) - 1 < count else { throw .badSongIndex }
        if start == to { return }
        let previous = self.queuedID
        self.queue.moveRange(start, end, to: to)
        if !self.queue.random && self.current >= 0 {
            // mpd's own bounds, kept as they are.
            if self.current >= start && self.current < end {
                self.current += to - start
            } else if self.current >= end && self.current <= to {
                self.current -= end - start
            } else if self.current >= to && self.current < start {
                self.current += end - start
            }
        }
        self.updateQueuedSong(previous: previous)
        self.onModified()
    }

    /// `swap POS1 POS2`.
    ///
    /// - Throws: `Bad song index`.
    public func swap(_ a: Int, _ b: Int) throws(PlaylistError) {
        let count = self.queue.count
        guard a >= 0 && a < count && b >= 0 && b < count else { throw .badSongIndex }
        let previous = self.queuedID
        self.queue.swapPositions(a, b)
        if self.queue.random {
            self.queue.swapOrders(self.queue.order(ofPosition: a), self.queue.order(ofPosition: b))
        } else if self.current >= 0 {
            if self.current == a {
                self.current = b
            } else if self.current == b {
                self.current = a
            }
        }
        self.updateQueuedSong(previous: previous)
        self.onModified()
    }

    /// `swapid ID1 ID2`.
    ///
    /// - Throws: `No such song`.
    public func swap(id a: Int, id b: Int) throws(PlaylistError) {
        guard let first = self.queue.position(ofID: a), let second = self.queue.position(ofID: b) else {
            throw .noSuchSong
        }
        try self.swap(first, second)
    }

    /// `prio N START:END` (END clipped).
    ///
    /// - Throws: `Bad song index` when START is past the end.
    public func setPriority(start: Int, end: Int, _ priority: UInt8) throws(PlaylistError) {
        guard start <= self.queue.count else { throw .badSongIndex }
        let end = min(end, self.queue.count)
        guard start < end else { return }
        let position = self.currentPosition
        let previous = self.queuedID
        self.queue.setPriorityRange(start, end, priority, afterOrder: self.current)
        if let position { self.current = self.queue.order(ofPosition: position) }
        self.updateQueuedSong(previous: previous)
        self.onModified()
    }

    /// `prioid N ID`.
    ///
    /// - Throws: `No such song`.
    public func setPriority(id: Int, _ priority: UInt8) throws(PlaylistError) {
        guard let position = self.queue.position(ofID: id) else { throw .noSuchSong }
        try self.setPriority(start: position, end: position + 1, priority)
    }

    /// `shuffle [START:END]`: the playing song, if in the range, goes first and stays; not playing, the
    /// current song is forgotten.
    ///
    /// - Throws: `Bad song index`.
    public func shuffle(start: Int, end: Int) throws(PlaylistError) {
        guard start <= self.queue.count else { throw .badSongIndex }
        let end = min(end, self.queue.count)
        var start = start
        guard start + 2 <= end else { return }
        let previous = self.queuedID
        if self.playing && self.current >= 0 {
            let position = self.queue.order[self.current]
            if position >= start && position < end {
                self.queue.swapPositions(start, position)
                self.current = self.queue.random ? self.queue.order(ofPosition: start) : start
                start += 1
            }
        } else {
            self.current = -1
        }
        self.queue.shufflePositions(start, end)
        self.updateQueuedSong(previous: previous)
        self.onModified()
    }

    /// `rangeid ID START:END` in milliseconds (END 0: to the end).
    ///
    /// - Throws: `No such song`; `Cannot edit the current song`; `Invalid start offset`.
    public func setRange(id: Int, startMilliseconds: UInt64, endMilliseconds: UInt64) throws(PlaylistError) {
        guard let position = self.queue.position(ofID: id), position < self.queue.count else { throw .noSuchSong }
        var wasQueued = false
        if self.playing {
            // mpd compares the position with order indices here; kept as it is.
            if position == self.current { throw PlaylistError(.denied, "Cannot edit the current song") }
            if position == self.queued {
                self.player.queue(nil)
                self.queued = -1
                self.queuedToken = nil
                wasQueued = true
            }
        }
        var song = self.queue.items[position].song
        var end = endMilliseconds
        if let duration = song.info.durationMilliseconds {
            if startMilliseconds > duration { throw PlaylistError(.badRange, "Invalid start offset") }
            if end >= duration { end = 0 }
        }
        song.startMilliseconds = startMilliseconds
        song.endMilliseconds = end
        self.queue.replaceSong(at: position, with: song)
        if wasQueued { self.updateQueuedSong(previous: nil) }
        self.onModified()
    }

    // MARK: - Restoring (the state file)

    /// Appends songs read from the state file as `mpd` restores them: each with its priority, in position
    /// order, without shuffling or an idle event; the version is incremented once at the end. Songs past
    /// `max_playlist_length` are dropped.
    ///
    /// Call before any client connects, with playback stopped.
    public func restore(_ songs: [(entry: QueueEntry, priority: UInt8)]) {
        precondition(!self.playing)
        for (entry, priority) in songs where !self.queue.isFull { self.queue.append(entry, priority: priority) }
        self.queue.incrementVersion()
    }

    /// Makes `position` the current song of a stopped queue, as `mpd` restores `current:` with `state: stop`:
    /// the position is taken as an order index, as `mpd` takes it (the same song unless random is on).
    public func restoreCurrent(position: Int) {
        precondition(!self.playing && position >= 0 && position < self.queue.count)
        self.current = position
    }

    /// After a database update: removes queued songs whose file is gone (except the one playing), then
    /// refreshes the tags of songs whose file changed (their audio format stays); the others keep what they had.
    ///
    /// No item refers to an older snapshot afterwards, so that it can be freed: an unchanged song of the library
    /// is held in `store` when it reads the same there, else as a value of its own (also a song kept though it is
    /// no longer in the database).
    ///
    /// - Parameters:
    ///   - store: the new snapshot.
    ///   - lookup: the song now in the database at a URI, or `nil` when it is gone.
    ///   - isKept: whether a song no longer in the database stays all the same (the update did not remove it).
    public func databaseModified(
        _ store: any SongStore, lookup: (String) -> QueueEntry?, isKept: (String) -> Bool = { _ in false }
    ) {
        let playingPosition = self.playing ? self.currentPosition : nil
        for position in stride(from: self.queue.count - 1, through: 0, by: -1) where position != playingPosition {
            let item = self.queue.items[position]
            if item.isInDatabase && lookup(item.uri) == nil && !isKept(item.uri) {
                try? self.delete(position: position)
            }
        }
        var modified = false
        for position in 0..<self.queue.count {
            let item = self.queue.items[position]
            let old = item.stored
            if let old, old.store === store { continue }
            guard item.isInDatabase, let fresh = lookup(item.uri) else {
                // The song playing, or one kept, gone from the database: it keeps what it had.
                if old != nil { self.queue.rehold(at: position, as: .song(item.song)) }
                continue
            }
            let freshTime: Int64? =
                switch fresh {
                case .stored(let freshStore, let number): freshStore.modificationTime(number)
                case .song(let song): song.modificationTime
                }
            guard freshTime != item.modificationTime else {
                if let old { self.queue.rehold(at: position, as: Self.entry(old, in: fresh) ?? .song(item.song)) }
                continue
            }
            var song = item.song
            let freshSong = fresh.song
            song.modificationTime = freshSong.modificationTime
            let format = song.info.audioFormat
            song.info = freshSong.info
            song.info.audioFormat = format
            if case .stored = fresh, song == freshSong {
                self.queue.replaceEntry(at: position, with: fresh)
            } else {
                self.queue.replaceSong(at: position, with: song)
            }
            modified = true
        }
        if modified { self.onModified() }
    }

    /// After the snapshot was replaced by one with the same songs and more or fewer others (a storage mounted or
    /// unmounted): nothing queued changes, as `mpd`'s queue hears nothing of it, but no item refers to an older
    /// snapshot afterwards (see `databaseModified`), so that it can be freed.
    ///
    /// - Parameters:
    ///   - store: the new snapshot.
    ///   - lookup: the song now in the database at a URI, or `nil` when there is none.
    public func snapshotReplaced(_ store: any SongStore, lookup: (String) -> QueueEntry?) {
        for position in 0..<self.queue.count {
            let item = self.queue.items[position]
            guard let old = item.stored, old.store !== store else { continue }
            self.queue.rehold(at: position, as: Self.entry(old, in: lookup(item.uri)) ?? .song(item.song))
        }
    }

    /// `fresh` when it is a stored song that reads as song `old.song` of `old.store`.
    private static func entry(_ old: (store: any SongStore, song: Int32), in fresh: QueueEntry?) -> QueueEntry? {
        guard case .stored(let store, let number)? = fresh, store.isSame(number, as: old.store, old.song) else {
            return nil
        }
        return fresh
    }
}
