// SPDX-License-Identifier: GPL-3.0-or-later

import Library
import MPDProtocol
import Model
import Playback
import Posix
import Sticker

/// The services every client's commands share, whatever their partition, as `mpd`'s `Instance` holds them beside
/// its partitions: the start time, the settings in force, the log, the command table, the music and sticker
/// databases, the idle events that concern every client, and every client's settings (messages between clients).
///
/// A snapshot the server makes for each command; the services themselves are loop-confined.
struct SharedServices {
    /// When the server started, for `stats`' uptime.
    let startTime: UInt64
    /// The settings in force.
    let options: ServerOptions
    /// Where the server logs.
    let logger: Logger
    /// The music database, when a music directory is configured.
    let library: LibraryService?
    /// The sticker database, when `sticker_file` is set and the server has started.
    let stickers: StickerDatabase?
    /// The commands the server knows.
    let commands: CommandTable
    /// Every partition, `default` first.
    let partitions: PartitionList
    /// The server's monotonic clock (a test's, or the system's).
    let clock: any PlaybackClock
    /// Runs the stored playlist edits one at a time (each reads, changes and replaces whole files), and the reads
    /// of local playlists, in the order they came: one long-lived thread of the server's, not one per reply.
    let playlistWorker: SerialWorker
    private let raise: (IdleEvent) -> Void
    private let sessions: () -> [SessionSettings]

    init(
        startTime: UInt64, options: ServerOptions, logger: Logger, library: LibraryService?,
        stickers: StickerDatabase?, commands: CommandTable, partitions: PartitionList,
        clock: any PlaybackClock = SystemClock(), playlistWorker: SerialWorker = SerialWorker("playlists"),
        raise: @escaping (IdleEvent) -> Void, sessions: @escaping () -> [SessionSettings]
    ) {
        self.clock = clock
        self.playlistWorker = playlistWorker
        self.startTime = startTime
        self.options = options
        self.logger = logger
        self.library = library
        self.stickers = stickers
        self.commands = commands
        self.partitions = partitions
        self.raise = raise
        self.sessions = sessions
    }

    /// The settings of every connected client (`channels`, `sendmessage`).
    var allSessions: [SessionSettings] { self.sessions() }

    /// Raises `event` for every client, whatever its partition (`stored_playlist`, `database`, `partition`, the
    /// player's state), through the same path as a partition's events.
    func emit(_ event: IdleEvent) { self.raise(event) }
}
