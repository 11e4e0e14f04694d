// SPDX-License-Identifier: GPL-3.0-or-later

import EventLoop
import Library
import MPDProtocol
import Model
import Playback
import Posix
import StoredPlaylists

/// The state file (`state_file`): restored once at start-up, then written atomically after changes and at
/// shutdown, in `mpd`'s format, for the default partition.
///
/// Beyond `mpd`, which forgets them at a restart, the other partitions are kept in a file of their own beside it,
/// `state_file` with `.partitions` appended (``partitionsPath``): for each, a `partition: NAME` line, then the
/// partition's state in the state file's format (its outputs, modes, queue and position). Its outputs are moved
/// back into it at start-up, each enabled or disabled as saved; the dummies an output leaves behind in a partition
/// other than the default one are not kept. `mpd` ignores that file: switching back to it loses only the extra
/// partitions.
///
/// Durability: a change to the queue, the modes, the volume, the outputs or the player's state is on disk at
/// most `maximumLagSeconds` after it happened (the write starts `writeDelaySeconds` after it); `mpd` waits
/// `state_file_interval` instead. The elapsed time alone, which changes all the time while playing, is written
/// every `state_file_interval`, as `mpd` writes it. A failed write is logged and leaves the previous file.
///
/// Loop-confined: created and used on the event loop thread.
final class StateFileService {
    /// The longest the file on disk lags behind an acknowledged change, in seconds (the durability rule).
    static let maximumLagSeconds = 1.0
    /// How long a change waits for others before the file is written: half the bound, leaving the other half
    /// for the write and its fsyncs.
    static let writeDelaySeconds = maximumLagSeconds / 2

    private let options: StateFileOptions
    private unowned let server: Server
    /// The text last written (or read at start-up), to skip writes that would change nothing.
    private var lastText: String?
    /// The same for the partitions file.
    private var lastPartitionsText: String?
    /// The pending write after a change, if any.
    private var pendingWrite: ClockTimer?
    /// The periodic write of the elapsed time (every `state_file_interval`).
    private var periodicWrite: ClockTimer?
    /// Whether changes are being made by the restore itself (they need no write).
    private var restoring = false

    init(options: StateFileOptions, server: Server) {
        self.options = options
        self.server = server
    }

    // MARK: - Restoring

    /// Reads the state file and applies it: the software volume, the outputs' states, the modes, the queue,
    /// then the current song, playing, paused or stopped as saved (`restore_paused` turns play into pause).
    /// A missing file is not an error; an unreadable one is logged.
    ///
    /// Call once, after the database is loaded and before any client connects.
    func restore() {
        self.restoring = true
        defer { self.restoring = false }
        if let text = self.readText(atPath: self.options.path, what: "state file") {
            self.apply(self.parse(text, path: self.options.path), to: self.server.defaultPartition)
            self.lastText = self.currentState().serialized()
        }
        self.restorePartitions()
        self.lastPartitionsText = self.partitionsText()
        self.schedulePeriodicWrite()
    }

    /// The file the partitions other than the default one are kept in.
    var partitionsPath: String { self.options.path + ".partitions" }

    /// Makes the partitions of the partitions file again, moves their outputs into them and restores their state.
    private func restorePartitions() {
        guard let file = self.readText(atPath: self.partitionsPath, what: "partitions file") else { return }
        let partitions = self.server.partitions!
        for (name, text) in Self.sections(of: file) {
            guard Partition.isValidName(name), partitions.named(name) == nil,
                partitions.all.count < PartitionList.maximumCount
            else {
                self.server.logger.warning("ignoring a saved partition", ["file": self.partitionsPath, "name": name])
                continue
            }
            let state = self.parse(text, path: self.partitionsPath)
            let partition = partitions.add(named: name)
            for output in state.outputs where partitions.moveOutput(named: output.name, to: partition) == .noSuchOutput
            {
                self.server.logger.debug("ignoring the state of an unknown output", ["output": output.name])
            }
            self.apply(state, to: partition)
        }
    }

    /// The text of the file at `path`, or `nil` when it is missing (not an error) or cannot be read (logged).
    private func readText(atPath path: String, what: String) -> String? {
        do {
            return String(decoding: try readFile(atPath: path), as: UTF8.self)
        } catch {
            if error.errno != .noSuchFile {
                self.server.logger.error("cannot read \(what)", ["file": path, "error": "\(error)"])
            }
            return nil
        }
    }

    /// `text` in the state file's format, its warnings logged.
    private func parse(_ text: String, path: String) -> StateFile {
        let (state, warnings) = StateFile.parse(text, maximumQueueLength: self.server.options.maxPlaylistLength)
        for warning in warnings { self.server.logger.warning(warning, ["file": path]) }
        return state
    }

    /// The partitions file's sections: each partition's name and its state file text.
    static func sections(of text: String) -> [(name: String, text: String)] {
        var sections: [(name: String, text: String)] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("partition: ") {
                sections.append((String(line.dropFirst("partition: ".count)), ""))
            } else if !sections.isEmpty {
                sections[sections.count - 1].text += line + "\n"
            }
        }
        return sections
    }

    /// The partitions file's text: every partition but the default one.
    private func partitionsText() -> String {
        self.server.partitions.all.dropFirst().map { partition in
            "partition: \(partition.name)\n" + self.currentState(of: partition).serialized()
        }.joined()
    }

    private func apply(_ state: StateFile, to partition: Partition) {
        let playlist = partition.playlist
        let player = playlist.player
        if let volume = state.softwareVolume {
            partition.softwareVolume = volume
            _ = player.setSoftwareVolume(volume)
        }
        let isDefault = partition === self.server.defaultPartition
        // mpd only ever disables: an output saved as enabled keeps its configured state. The outputs of the
        // other partitions are saved as they were, either way.
        for output in state.outputs where !output.enabled || !isDefault {
            guard let id = player.outputs.first(where: { $0.name == output.name && !$0.isDummy })?.id
            else {
                if isDefault {
                    self.server.logger.debug("ignoring the state of an unknown output", ["output": output.name])
                }
                continue
            }
            _ = player.setOutput(id: id, enabled: output.enabled)
        }
        if isDefault { self.restore(state.mounts) }
        guard state.hasPlayerState else { return }
        playlist.setRepeat(state.repeatMode)
        playlist.setSingle(state.single)
        playlist.setConsume(state.consume)
        player.crossfadeSeconds = Double(state.crossfadeSeconds)
        player.mixRampDB = state.mixRampDB
        player.mixRampDelay = state.mixRampDelay
        playlist.restore(state.queue.compactMap { entry in self.song(for: entry).map { ($0, entry.priority) } })
        playlist.setRandom(state.random)
        guard !playlist.queue.isEmpty else { return }
        var position = state.current ?? 0
        if position < 0 || position >= playlist.queue.count { position = 0 }
        var playerState = state.state
        if playerState == .play && self.options.restorePaused { playerState = .pause }
        switch playerState {
        case .stop:
            playlist.restoreCurrent(position: position)
            return
        case .play, .pause:
            do throws(PlaylistError) {
                if state.elapsedSeconds == 0 {
                    try playlist.play(position: position)
                } else {
                    try playlist.seek(position: position, seconds: state.elapsedSeconds)
                }
            } catch {
                self.server.logger.warning("cannot resume the saved song", ["error": error.message])
            }
        }
        if playerState == .pause { playlist.setPaused(true) }
    }

    /// Mounts the storages saved in the state file, as `mpd` restores them: their databases are mounted without an
    /// update (even when one has no file yet), all in one rebuild of the snapshot; any failure is logged and that
    /// mount skipped.
    private func restore(_ saved: [StateFile.MountState]) {
        guard let library = self.server.library, self.server.options.library != nil, !saved.isEmpty else {
            return
        }
        let logger = self.server.logger
        var storages: [(path: String, storage: any Storage)] = []
        for mount in saved {
            guard !mount.path.isEmpty, !mount.uri.isEmpty else {
                logger.error("Missing value in mountpoint state.")
                continue
            }
            if mount.uri == self.server.options.musicDirectory {
                logger.error("This storage is already mounted", ["uri": mount.uri])
                continue
            }
            do {
                guard let storage = try self.server.options.storageOpener(mount.uri) else {
                    logger.error("Unrecognized storage URI: \(mount.uri)")
                    continue
                }
                storages.append((mount.path, storage))
            } catch {
                logger.error("Failed to restore mount to \(mount.uri): \(error)")
            }
        }
        for (path, error) in library.restoreMounts(storages) {
            switch error {
            case .mountPointBusy: logger.error("Mount point busy", ["mount": path])
            case .storageMounted: logger.error("This storage is already mounted", ["mount": path])
            default: logger.error("Failed to restore mount at \(path): \(error)")
            }
        }
    }

    /// The queue song for a saved entry, as `mpd`'s song loader finds it: a database song (with the saved
    /// range), a URL the server can stream, or a file outside the music directory that can be read; `nil`
    /// (skipped) otherwise.
    private func song(for entry: StateFile.Entry) -> QueueEntry? {
        var song: QueueSong
        var uri = entry.uri
        if URIScheme.hasPrefixIgnoringCase(uri.utf8, "file://") { uri = String(uri.dropFirst(7)) }
        let musicDirectory = self.server.options.musicDirectory
        if uri.hasPrefix("/"), let relative = PlaylistFile.relative(uri, to: musicDirectory) {
            uri = relative
        }
        if uri.hasPrefix("/") {
            guard let file = QueueCommands.fileSong(uri, options: self.server.options) else { return nil }
            song = file
        } else if URIScheme.schemeEnd(uri) != nil {
            guard QueueCommands.isRemote(uri, options: self.server.options) else { return nil }
            var info = SongInfo(tags: entry.tags)
            info.durationMilliseconds = entry.durationSeconds.map { UInt64(max(0, $0) * 1000) }
            song = QueueSong(uri: uri, modificationTime: entry.modificationTime, info: info)
        } else {
            guard let database = self.server.library?.database, let index = database.song(at: uri) else { return nil }
            let stored = Server.queueEntry(index, of: database)
            // A whole file needs no song of its own (a cue track's range is replaced by the saved one).
            if case .stored = stored, entry.rangeStartMilliseconds == 0, (entry.rangeEndMilliseconds ?? 0) == 0 {
                return stored
            }
            song = stored.song
        }
        song.startMilliseconds = entry.rangeStartMilliseconds
        song.endMilliseconds = entry.rangeEndMilliseconds ?? 0
        return .song(song)
    }

    // MARK: - Writing

    /// The state now, as the file holds it.
    func currentState() -> StateFile { self.currentState(of: self.server.defaultPartition) }

    /// The state of `partition` now, in the state file's form; the other partitions save only their own outputs
    /// (not the dummies of those that left).
    private func currentState(of partition: Partition) -> StateFile {
        let playlist = partition.playlist
        let player = playlist.player
        var state = StateFile()
        state.softwareVolume = partition.softwareVolume
        let outputs =
            partition === self.server.defaultPartition
            ? player.outputs : player.outputs.filter { !$0.isDummy }
        state.outputs = outputs.map { StateFile.OutputState(name: $0.name, enabled: $0.enabled) }
        if partition === self.server.defaultPartition, let library = self.server.library {
            state.mounts = library.mounts.sorted { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }.map {
                StateFile.MountState(path: $0.path, uri: $0.storage.uri)
            }
        }
        state.hasPlayerState = true
        if playlist.playing {
            let snapshot = player.snapshot
            state.state = snapshot.state == .pause ? .pause : .play
            state.elapsedSeconds = snapshot.elapsedSeconds
        }
        state.current = playlist.currentPosition
        let queue = playlist.queue
        state.random = queue.random
        state.repeatMode = queue.repeatMode
        state.single = queue.single
        state.consume = queue.consume
        // mpd writes the whole seconds, truncated.
        state.crossfadeSeconds = Int(player.crossfadeSeconds)
        state.mixRampDB = player.mixRampDB
        state.mixRampDelay = player.mixRampDelay
        state.queue = queue.items.map { item in
            // A song of the library is saved by URI alone: no need to build its tags.
            if item.stored != nil { return StateFile.Entry(uri: item.uri, priority: item.priority) }
            let song = item.song
            let hasRange = song.startMilliseconds > 0 || song.endMilliseconds > 0
            guard !song.isInDatabase || hasRange else { return StateFile.Entry(uri: song.uri, priority: item.priority) }
            return StateFile.Entry(
                uri: song.uri, priority: item.priority, rangeStartMilliseconds: song.startMilliseconds,
                rangeEndMilliseconds: song.endMilliseconds > 0 ? song.endMilliseconds : nil, tags: song.info.tags,
                durationSeconds: song.info.durationMilliseconds.map { Double($0) / 1000 },
                modificationTime: song.modificationTime, isFull: true)
        }
        return state
    }

    /// Something the file records changed: write it within `maximumLagSeconds`.
    func changed() {
        guard !self.restoring, self.pendingWrite == nil else { return }
        self.pendingWrite = self.options.clock.schedule(on: self.server.loop, afterSeconds: Self.writeDelaySeconds) {
            [unowned self] in
            self.pendingWrite = nil
            self.write()
        }
    }

    private func schedulePeriodicWrite() {
        let interval = max(1, self.options.intervalSeconds)
        self.periodicWrite = self.options.clock.schedule(on: self.server.loop, afterSeconds: interval) {
            [unowned self] in
            self.periodicWrite = nil
            self.write()
            self.schedulePeriodicWrite()
        }
    }

    /// Writes the file now if its content would change (atomically: temporary file, fsync, rename, directory
    /// fsync). A failure is logged; the previous file stays, and the next change tries again.
    func write() {
        self.lastText = self.write(
            self.currentState().serialized(), toPath: self.options.path, unless: self.lastText, what: "state file")
        let partitions = self.partitionsText()
        // No file until there is a partition to keep.
        guard !partitions.isEmpty || self.lastPartitionsText != nil else { return }
        self.lastPartitionsText = self.write(
            partitions, toPath: self.partitionsPath, unless: self.lastPartitionsText, what: "partitions file")
    }

    /// Writes `text` to `path` (atomically) unless it is `last`, what the file held already.
    ///
    /// - Returns: what the file holds now (`last` when the write failed, which is logged).
    private func write(_ text: String, toPath path: String, unless last: String?, what: String) -> String? {
        guard text != last else { return last }
        do {
            try AtomicFile.write(Array(text.utf8), toPath: path)
            return text
        } catch {
            self.server.logger.error("cannot write \(what)", ["file": path, "error": "\(error)"])
            return last
        }
    }

    /// Writes the file (if changed) and stops the timers: the server is shutting down.
    func shutdown() {
        self.pendingWrite?.cancel()
        self.periodicWrite?.cancel()
        self.pendingWrite = nil
        self.periodicWrite = nil
        self.write()
    }
}

/// The state file settings.
public struct StateFileOptions: Sendable {
    /// `state_file`: where the file lives.
    public var path: String
    /// `state_file_interval` in seconds: how often the elapsed time alone is saved while playing.
    public var intervalSeconds: Double
    /// `restore_paused`: a file saved while playing resumes paused.
    public var restorePaused: Bool
    /// The clock the writes are scheduled on: `SystemClock` but in tests.
    public var clock: any PlaybackClock

    /// Creates the settings.
    public init(
        path: String, intervalSeconds: Double = 120, restorePaused: Bool = false,
        clock: any PlaybackClock = SystemClock()
    ) {
        self.path = path
        self.intervalSeconds = intervalSeconds
        self.restorePaused = restorePaused
        self.clock = clock
    }
}
