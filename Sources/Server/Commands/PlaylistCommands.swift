// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Library
import MPDProtocol
import Model
import Playback
import Playlists
import Posix
import StoredPlaylists

/// Stored playlists: `listplaylists`, `listplaylist`, `listplaylistinfo`, `load`, `playlistadd`, `playlistclear`,
/// `playlistdelete`, `playlistmove`, `rename`, `rm`, `save`, `searchaddpl`.
///
/// Playlists are read, and edits read and write their files, off the loop (deferred replies), one at a time on the
/// playlist worker (a remote playlist on a thread of its own). Every change is on disk (atomic replace, fsync)
/// before the reply, and raises idle `stored_playlist`.
enum PlaylistCommands {
    static let all: [Command] = [
        Command("load", .add, 1, 3, load),
        Command("save", .control, 1, 1, save).available(when: enabled),
        Command("listplaylist", .read, 1, 1) { context throws(AckError) in try listplaylist(&context, info: false) },
        Command("listplaylistinfo", .read, 1, 1) { context throws(AckError) in
            try listplaylist(&context, info: true)
        },
        Command("listplaylists", .read, 0, 0, listplaylists).available(when: enabled),
        Command("playlistadd", .control, 2, 3, playlistadd).available(when: enabled),
        Command("playlistclear", .control, 1, 1, playlistclear).available(when: enabled),
        Command("playlistdelete", .control, 2, 2, playlistdelete).available(when: enabled),
        Command("playlistmove", .control, 3, 3, playlistmove).available(when: enabled),
        Command("rename", .control, 2, 2, rename).available(when: enabled),
        Command("rm", .control, 1, 1, rm).available(when: enabled),
        Command("searchaddpl", .control, 2, nil, searchaddpl),
    ]

    /// `mpd` lists the stored-playlist commands only with a playlist directory.
    @Sendable static func enabled(_ services: SharedServices) -> Bool { services.options.playlists.isEnabled }

    /// The playlist directory's settings.
    static func directory(_ context: CommandContext) -> PlaylistDirectory { context.services.options.playlists }

    /// Runs a file operation, turning its error into `mpd`'s ACK (an I/O failure is logged too).
    static func perform<T>(
        _ context: CommandContext, _ body: () throws(StoredPlaylistError) -> T
    ) throws(AckError) -> T {
        try perform(context.services.logger, body)
    }

    /// ``perform(_:_:)-(CommandContext,_)`` logging to `logger`, from any thread.
    static func perform<T>(_ logger: Logger, _ body: () throws(StoredPlaylistError) -> T) throws(AckError) -> T {
        do {
            return try body()
        } catch {
            let code: AckCode
            switch error.kind {
            case .disabled: code = .unknown
            case .badName, .badRange: code = .arg
            case .noSuchList: code = .noExist
            case .exists: code = .exist
            case .tooLarge: code = .playlistMax
            case .io:
                code = .system
                logger.error("stored playlist not written", ["error": error.message])
            }
            throw AckError(code, error.message)
        }
    }

    /// Runs `edit`, which reads and writes stored playlist files (with `perform(_:_:)` for their errors), off the
    /// loop on the server's playlist worker (``SharedServices/playlistWorker``), after the edits before it, and
    /// replies once it is on disk: `OK`, and idle `stored_playlist` when it says it changed something; its `ACK`
    /// when it failed.
    static func editing(
        _ context: CommandContext, _ edit: @escaping @Sendable () throws(AckError) -> Bool
    ) -> CommandResult {
        .deferred(
            DeferredReply(
                worker: context.services.playlistWorker,
                work: { _ -> Result<Bool, AckError> in
                    do throws(AckError) {
                        return .success(try edit())
                    } catch {
                        return .failure(error)
                    }
                }
            ) { result, context throws(AckError) in
                if try result.get() { context.services.emit(.storedPlaylist) }
                return .ok
            })
    }

    /// A change of the playlist files, as ``editing(_:_:)`` runs it: `body` is done (its errors are `mpd`'s ACKs).
    static func change(_ context: CommandContext, _ body: @escaping @Sendable () throws(StoredPlaylistError) -> Void)
        -> CommandResult
    {
        let logger = context.services.logger
        return Self.editing(context) { () throws(AckError) in
            try perform(logger, body)
            return true
        }
    }

    // MARK: - Listing

    /// Reads the playlist directory off the loop, on the playlist worker (after the edits queued before it).
    static func listplaylists(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let (playlists, logger) = (directory(context), context.services.logger)
        return .deferred(
            DeferredReply(
                worker: context.services.playlistWorker,
                work: { _ -> Result<[PlaylistDirectory.Info], AckError> in
                    do throws(AckError) {
                        return .success(try perform(logger) { () throws(StoredPlaylistError) in try playlists.list() })
                    } catch {
                        return .failure(error)
                    }
                }
            ) { result, context throws(AckError) in
                context.write(raw: text(of: try result.get()))
                return .ok
            })
    }

    /// `playlist: NAME` and `Last-Modified` lines, as `listplaylists` and the root `lsinfo` print them.
    static func text(of playlists: [PlaylistDirectory.Info]) -> String {
        playlists.map { "playlist: \($0.name)\nLast-Modified: \(SongPrinter.iso8601($0.modificationTime))\n" }
            .joined()
    }

    /// The stored playlists of `playlists` after the root's directories and songs in `lsinfo`; a failure is logged
    /// to `logger` and the list left out, as in `mpd`. Any thread (it reads the directory).
    static func rootListing(_ playlists: PlaylistDirectory, logger: Logger) -> String {
        guard playlists.isEnabled else { return "" }
        do {
            return text(of: try playlists.list())
        } catch {
            logger.error("cannot list stored playlists", ["error": error.message])
            return ""
        }
    }

    /// One entry of a listed playlist: what the playlist gave, its URI as `mpd` prints it and the database
    /// song, if it is one.
    struct ListedSong {
        /// The entry as the playlist plugin gave it.
        var entry: PlaylistEntry
        /// The URI, resolved against the playlist's directory, with dot segments squashed (a database song
        /// found by its absolute path is shown by its database URI).
        var uri: String
        /// The song in the database, if the entry names one.
        var song: Int32?
        /// The song read off the loop from the local file outside the music directory the entry names, when the
        /// client may read it and it is a song.
        var file: QueueSong?
    }

    /// A playlist as `listplaylist`, `listplaylistinfo` and `load` read it off the loop: its entries, the URI each
    /// names as `mpd`'s `playlist_check_translate_song` makes it (joined to the playlist's directory, dot segments
    /// squashed), and, by entry, the songs of the local files outside the music directory the client may read
    /// (`mpd`'s song loader reads them; read only for the entries a command uses).
    struct ReadPlaylist: Sendable {
        var entries: [PlaylistEntry]
        var uris: [String]
        var files: [Int: QueueSong] = [:]

        /// The playlist of `entries`, relative ones relative to `base`.
        init(_ entries: [PlaylistEntry], base: String?) {
            self.entries = entries
            self.uris = entries.map { entry in
                var uri = entry.uri
                if let base, !uri.hasPrefix("/"), !URIScheme.hasScheme(uri) {
                    // mpd's PathTraitsUTF8::Build: an empty entry names the playlist's directory.
                    uri = uri.isEmpty ? base : base + "/" + uri
                }
                return PlaylistFile.squashDotSegments(uri)
            }
        }
    }

    /// The work that reads a playlist off the loop: the playlist, or `nil` when there is none a plugin reads (what
    /// went wrong is logged, as `mpd` logs it).
    typealias Reading = @Sendable (InputCancellation) -> ReadPlaylist?

    /// Locates the playlist `name` on the loop (its URI errors are the command's) and gives the work that reads it
    /// and the worker it runs on, or `nil` when nothing could: a URL an input plugin opens (`mpd`'s
    /// `playlist_open_remote`), on a thread of its own (no worker: it may wait on the network for long), else, on the
    /// playlist worker, as `mpd`'s `playlist_mapper_open`, a valid stored playlist name in the playlist directory
    /// (`name.m3u`), then a safe relative URI in the music directory, read by the playlist plugin its suffix names
    /// (`Playlists.PlaylistRegistry`).
    ///
    /// - Throws: `Malformed file:// URI`, `Access denied` for a path outside the music directory.
    static func reading(_ name: String, context: CommandContext) throws(AckError) -> (
        read: Reading, worker: SerialWorker?
    )? {
        let options = context.services.options
        let logger = context.services.logger
        if let opener = QueueCommands.remoteOpener(for: name, options: options) {
            let plugins = options.playlistPlugins
            let read: Reading = { cancellation in
                switch RemotePlaylist.read(name, opener: opener, plugins: plugins, cancellation: cancellation) {
                case .failure(let error):
                    logger.error("cannot open remote playlist", ["error": error.mpdMessage])
                    return nil
                case .success(let playlist):
                    return playlist.map { ReadPlaylist($0.entries, base: $0.base) }
                }
            }
            return (read, nil)
        }
        var located = name
        if URIScheme.hasPrefixIgnoringCase(located.utf8, "file://") {
            located = String(located.dropFirst(7))
            guard located.hasPrefix("/") else { throw AckError(.arg, "Malformed file:// URI") }
        }
        if located.hasPrefix("/") {
            // Local files outside the music directory are for local clients only (not supported yet).
            guard let relative = PlaylistFile.relative(located, to: options.musicDirectory) else {
                throw AckError(.permission, "Access denied")
            }
            located = relative
        } else if URIScheme.hasScheme(located) {
            // No input plugin opens this one.
            return nil
        }
        let playlists = directory(context)
        let read: Reading = { [located] _ in
            Self.playlistEntries(located, playlists: playlists, options: options, logger: logger).map {
                ReadPlaylist($0.entries, base: $0.base)
            }
        }
        return (read, context.services.playlistWorker)
    }

    /// The work that reads, off the loop, the local files outside the music directory that the entries of `range`
    /// name, those the client may read (`mpd`'s song loader for a local client), in the reading session of the
    /// command or command list (``SessionSettings/reading(with:)``: a file only FFmpeg reads goes to a scan worker).
    static func fileReading(_ range: QueueRange, context: CommandContext)
        -> @Sendable (inout ReadPlaylist, InputCancellation) -> Void
    {
        let musicDirectory = context.services.options.musicDirectory
        let peerUserID = context.session.peerUserID
        // Only a local client may name such files.
        let reader =
            peerUserID == nil
            ? nil : context.services.options.library.map { context.session.reading(with: $0.updater.reader) }
        return { playlist, cancellation in
            guard let reader else { return }
            let end = min(range.end ?? playlist.uris.count, playlist.uris.count)
            guard range.start < end else { return }
            let paths = (range.start..<end).compactMap { index -> (Int, String)? in
                var path = playlist.uris[index]
                if URIScheme.hasPrefixIgnoringCase(path.utf8, "file://") { path = String(path.dropFirst(7)) }
                // Inside the music directory only the database counts.
                guard path.hasPrefix("/"), PlaylistFile.relative(path, to: musicDirectory) == nil,
                    (try? SessionSettings.allowFile(path, peerUserID: peerUserID)) != nil
                else { return nil }
                return (index, path)
            }
            for (index, path) in paths where !cancellation.isCancelled {
                playlist.files[index] = try? QueueCommands.fileSong(path, reader: reader).get()
            }
        }
    }

    /// `read`, then `files` (when given) of what it read.
    private static func then(
        _ read: @escaping Reading, _ files: (@Sendable (inout ReadPlaylist, InputCancellation) -> Void)?
    ) -> Reading {
        { cancellation in
            guard var playlist = read(cancellation) else { return nil }
            files?(&playlist, cancellation)
            return playlist
        }
    }

    /// The entries of a playlist read off the loop, with the database songs they name in the library as it is now.
    static func listed(_ playlist: ReadPlaylist, context: CommandContext) -> [ListedSong] {
        let musicDirectory = context.services.options.musicDirectory
        let database = context.services.library?.database
        return playlist.entries.indices.map { index in
            let (entry, uri, file) = (playlist.entries[index], playlist.uris[index], playlist.files[index])
            guard let (relative, song) = Self.databaseSong(uri, database: database, musicDirectory: musicDirectory)
            else { return ListedSong(entry: entry, uri: uri, song: nil, file: file) }
            return ListedSong(entry: entry, uri: relative, song: song, file: file)
        }
    }

    /// The parsed entries of the playlist at `located` (a stored playlist name or a URI relative to the
    /// music directory) and the directory its relative entries are relative to; `nil` when neither place
    /// has a playlist the plugins read (a file they fail on is logged, as `mpd` logs it).
    /// Blocks.
    private static func playlistEntries(
        _ located: String, playlists: PlaylistDirectory, options: ServerOptions, logger: Logger
    ) -> (entries: [PlaylistEntry], base: String?)? {
        if PlaylistDirectory.isValidName(located), let bytes = try? playlists.content(located) {
            do {
                let suffix = String(PlaylistDirectory.suffix.dropFirst())
                return (try options.playlistPlugins.entries(bytes, suffix: suffix), nil)
            } catch {
                logger.error("cannot read playlist", ["name": located, "error": error.message])
            }
        }
        guard DatabaseCommands.isSafeLocalURI(located), let root = options.musicDirectory,
            let suffix = Suffix.ofURI(located)
        else { return nil }
        let base = located.contains("/") ? String(located[..<located.lastIndex(of: "/")!]) : nil
        let path = root + "/" + located
        // mpd opens by URI first: the embcue plugin reads a song file's CUESHEET tag.
        let plugins = options.playlistPlugins
        if plugins.readsEmbeddedCueSheets, EmbeddedCuePlaylistPlugin.supports(suffix: suffix),
            let reader = options.commentReader,
            let pairs = try? reader(path), let sheet = EmbeddedCuePlaylistPlugin.cuesheet(in: pairs)
        {
            let name = String(located.split(separator: "/", omittingEmptySubsequences: false).last ?? "")
            return (EmbeddedCuePlaylistPlugin.entries(cuesheet: sheet, fileName: name), base)
        }
        guard plugins.supports(suffix: suffix), let bytes = try? readFile(atPath: path) else { return nil }
        do {
            return (try plugins.entries(bytes, suffix: suffix), base)
        } catch {
            logger.error("cannot read playlist", ["uri": located, "error": error.message])
            return nil
        }
    }

    /// The database song an entry names (a relative URI, an absolute path inside the music directory, or
    /// a `file://` URI of one) and its URI in the database.
    private static func databaseSong(
        _ uri: String, database: Database?, musicDirectory: String?
    ) -> (String, Int32)? {
        guard let database else { return nil }
        var path = uri
        if URIScheme.hasPrefixIgnoringCase(path.utf8, "file://") { path = String(path.dropFirst(7)) }
        if path.hasPrefix("/") {
            guard let relative = PlaylistFile.relative(path, to: musicDirectory) else { return nil }
            path = relative
        } else if URIScheme.hasScheme(path) {
            return nil
        }
        return database.song(at: path).map { (path, $0) }
    }

    static func listplaylist(_ context: inout CommandContext, info: Bool) throws(AckError) -> CommandResult {
        guard let (read, worker) = try Self.reading(context.arguments[0], context: context) else {
            throw AckError(.noExist, "No such playlist")
        }
        // As mpd's `playlist_provider_print`, both load every song: a local file read prints its path.
        let files = Self.fileReading(.all, context: context)
        return .deferred(
            DeferredReply(worker: worker, work: Self.then(read, files)) { playlist, context throws(AckError) in
                guard let playlist else { throw AckError(.noExist, "No such playlist") }
                Self.printListed(Self.listed(playlist, context: context), info: info, context: context)
                return .ok
            })
    }

    private static func printListed(_ songs: [ListedSong], info: Bool, context: CommandContext) {
        let tags = DatabaseCommands.visibleTags(context)
        let snapshot = SongPrinter.Snapshot(context.services.library?.database)
        context.reply.writeBatched(songs) { entry, reply in
            if info, let song = Self.loadableSong(entry, context: context) {
                SongPrinter.appendSong(song, from: snapshot, visibleTags: tags, to: &reply)
            } else {
                reply.rawLine("file", Self.withoutCredentials(entry.file?.uri ?? entry.uri))
            }
        }
    }

    /// A URL without `user:password@`, as `mpd` prints song URIs.
    static func withoutCredentials(_ uri: String) -> String {
        guard let end = URIScheme.schemeEnd(uri), end > 0 else { return uri }
        let bytes = Array(uri.utf8)
        let authority = end + 3
        let authorityEnd = bytes[authority...].firstIndex(of: UInt8(ascii: "/")) ?? bytes.count
        guard let at = bytes[authority..<authorityEnd].firstIndex(of: UInt8(ascii: "@")) else { return uri }
        return String(decoding: bytes[..<authority] + bytes[(at + 1)...], as: UTF8.self)
    }

    // MARK: - Changing

    /// The database songs at or below `uri` (a directory or a song), in walk order.
    ///
    /// - Throws: `No database`, `No such directory`.
    static func songs(at uri: String, context: CommandContext) throws(AckError) -> [String] {
        let database = try DatabaseCommands.database(context)
        return try DatabaseCommands.walk(database, uri: uri, recursive: true).flatMap { entry in
            guard case .songs(let run, _) = entry else { return [String]() }
            return run.map { database.songs.uri($0) }
        }
    }

    /// Inserts `uris` (made on the loop; their error is thrown after the position's) at `position` of playlist
    /// `name` (created when missing) and saves it, off the loop; nothing is written when `uris` is empty.
    ///
    /// - Throws: through the reply, `Bad position` past the end, `Stored playlist is too large`, name and I/O errors.
    static func insert(
        _ uris: Result<[String], AckError>, at position: UInt64, into name: String, context: CommandContext
    ) -> CommandResult {
        let (playlists, logger) = (directory(context), context.services.logger)
        return Self.editing(context) { () throws(AckError) in
            var entries = try perform(logger) { () throws(StoredPlaylistError) in
                do throws(StoredPlaylistError) {
                    return try playlists.load(name)
                } catch {
                    guard error.kind == .noSuchList else { throw error }
                    return []
                }
            }
            guard position <= entries.count else { throw AckError(.arg, "Bad position") }
            let added = try uris.get()
            guard !added.isEmpty else { return false }
            guard entries.count + added.count <= playlists.maximumLength else {
                throw AckError(.playlistMax, "Stored playlist is too large")
            }
            entries.insert(contentsOf: added, at: Int(position))
            try perform(logger) { () throws(StoredPlaylistError) in try playlists.save(name, uris: entries) }
            return true
        }
    }

    /// `uris` made, as a result.
    static func made(_ uris: () throws(AckError) -> [String]) -> Result<[String], AckError> {
        do throws(AckError) {
            return .success(try uris())
        } catch {
            return .failure(error)
        }
    }

    /// Appends `uris` to playlist `name` (created when missing), off the loop; nothing happens when `uris` is empty.
    static func append(_ uris: [String], to name: String, context: CommandContext) -> CommandResult {
        guard !uris.isEmpty else { return .ok }
        let playlists = directory(context)
        return change(context) { () throws(StoredPlaylistError) in try playlists.append(name, uris: uris) }
    }

    static func playlistadd(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let (name, uri) = (context.arguments[0], context.arguments[1])
        let isURL = URIScheme.hasScheme(uri)
        let context = context
        if context.arguments.count == 3 {
            let position = try ArgumentParser.unsigned(context.arguments[2])
            let uris = Self.made { () throws(AckError) in isURL ? [uri] : try songs(at: uri, context: context) }
            return insert(uris, at: position, into: name, context: context)
        }
        if isURL {
            // As mpd: a URL only an input plugin's scheme opens.
            guard QueueCommands.isRemote(uri, options: context.services.options) else {
                throw AckError(.arg, "Unsupported URI scheme")
            }
            return append([uri], to: name, context: context)
        }
        return append(try songs(at: uri, context: context), to: name, context: context)
    }

    static func playlistclear(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let (playlists, name) = (directory(context), context.arguments[0])
        return change(context) { () throws(StoredPlaylistError) in try playlists.clear(name) }
    }

    static func playlistdelete(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let (playlists, name, logger) = (directory(context), context.arguments[0], context.services.logger)
        let range = try WindowRange.parse(context.arguments[1])
        return Self.editing(context) { () throws(AckError) in
            var entries = try perform(logger) { () throws(StoredPlaylistError) in try playlists.load(name) }
            guard range.start <= entries.count else { throw AckError(.arg, "Bad song index") }
            entries.removeSubrange(range.indices(count: entries.count))
            try perform(logger) { () throws(StoredPlaylistError) in try playlists.save(name, uris: entries) }
            return true
        }
    }

    static func playlistmove(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let (playlists, name, logger) = (directory(context), context.arguments[0], context.services.logger)
        let from = try ArgumentParser.unsigned(context.arguments[1])
        let to = try ArgumentParser.unsigned(context.arguments[2])
        // mpd answers OK without looking at the playlist.
        guard from != to else { return .ok }
        return Self.editing(context) { () throws(AckError) in
            var entries = try perform(logger) { () throws(StoredPlaylistError) in try playlists.load(name) }
            guard from < entries.count, to < entries.count else { throw AckError(.arg, "Bad range") }
            entries.insert(entries.remove(at: Int(from)), at: Int(to))
            try perform(logger) { () throws(StoredPlaylistError) in try playlists.save(name, uris: entries) }
            return true
        }
    }

    static func rename(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let (playlists, from, to) = (directory(context), context.arguments[0], context.arguments[1])
        return change(context) { () throws(StoredPlaylistError) in try playlists.rename(from, to: to) }
    }

    static func rm(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let (playlists, name) = (directory(context), context.arguments[0])
        return change(context) { () throws(StoredPlaylistError) in try playlists.delete(name) }
    }

    // MARK: - The queue

    /// `save NAME`: the queue's URIs as a new playlist (`mpd` 0.23 has no append or replace mode), written off the
    /// loop from the queue as it is now (a copy, which costs nothing unless the queue changes meanwhile).
    static func save(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let (playlists, name) = (directory(context), context.arguments[0])
        let queue = context.partition.playlist.queue
        let database = context.services.library?.database
        return change(context) { () throws(StoredPlaylistError) in
            try playlists.create(name) { content in Self.appendURIs(of: queue, database: database, to: &content) }
        }
    }

    /// Appends the URI of each song of `queue` to `content`: a song of `database` from its directory's path (read once
    /// for a run of songs of one directory) and its name's bytes, with no URI string made for it.
    static func appendURIs(of queue: Queue, database: Database?, to content: inout PlaylistFile.Builder) {
        guard let database else {
            for item in queue.items { content.append(item.uri) }
            return
        }
        // Unwrapped once: a copy of the table per song retains and releases each of its columns.
        let songs = database.songs
        let numbers = queue.songNumbers(at: queue.items.indices, inStore: ObjectIdentifier(database))
        // Directory paths as bytes, from the snapshot's table of them (no `String` per song of a shuffled queue).
        let paths = database.directoryPathTable()
        let asBytes = content.takesRelativePaths && !paths.mayHoldEscapes
        for (position, song) in numbers.enumerated() {
            if song < 0 {
                content.append(queue.items[position].uri)
            } else if asBytes {
                paths.withBytes(songs.directory(song)) { path in
                    songs.withNameBytes(song) { name in content.append(path: path, name: name) }
                }
            } else {
                songs.withNameBytes(song) { name in
                    content.append(directory: songs.directory(song), path: { songs.directoryPath(song) }, name: name)
                }
            }
        }
    }

    /// `load NAME [START:END] [POSITION]`: the playlist's entries in the range, as one bulk edit; entries that
    /// name no song `mpd` could load (not in the database, an unsupported scheme, a file the client may not
    /// read) are skipped. Appended, then moved to POSITION when it is before the old end.
    static func load(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        // mpd locates the playlist (URI errors), parses the range and the position, then opens it.
        let arguments = context.arguments
        let read = try Self.reading(arguments[0], context: context)
        let range = try arguments.count > 1 ? QueueRange.parse(arguments[1]) : .all
        let position = arguments.dropFirst(2).first
        if let position { _ = try QueueArguments.insertPosition(position, playlist: context.partition.playlist) }
        guard let (read, worker) = read else {
            return try Self.load(nil, range: range, position: position, context: context)
        }
        let files = Self.fileReading(range, context: context)
        return .deferred(
            DeferredReply(worker: worker, work: Self.then(read, files)) { playlist, context throws(AckError) in
                let songs = playlist.map { Self.listed($0, context: context) }
                return try Self.load(songs, range: range, position: position, context: context)
            })
    }

    /// Appends `range` of `entries` at `position` (`load`'s second half). The position is read here, against the
    /// queue as it is now: a remote playlist's songs arrive after its fetch, and a relative position (`+1`)
    /// follows the current song as it moved meanwhile.
    private static func load(
        _ entries: [ListedSong]?, range: QueueRange, position argument: String?, context: CommandContext
    ) throws(AckError) -> CommandResult {
        let playlist = context.partition.playlist
        playlist.beginBulk()
        defer { playlist.commitBulk() }
        let oldCount = playlist.queue.count
        var position = oldCount
        if let argument { position = try QueueArguments.insertPosition(argument, playlist: playlist) }
        guard let entries else { throw AckError(.noExist, "No such playlist") }
        let end = min(range.end ?? entries.count, entries.count)
        if range.start < end {
            for entry in entries[range.start..<end] {
                guard let song = self.loadableSong(entry, context: context) else { continue }
                try playlistAction { () throws(PlaylistError) in try playlist.append(song) }
            }
        }
        if position < oldCount {
            // mpd ignores a failing move here.
            try? playlist.move(start: oldCount, end: playlist.queue.count, to: position)
        }
        return .ok
    }

    /// The song for a playlist entry as `mpd`'s song loader makes it (`playlist_check_translate_song`), or
    /// `nil` when it would skip it: a database song, a file a local client may read outside the music
    /// directory, or a URL of a scheme Fermata plays. The playlist's tags come first, then the song's of
    /// the other types; the playlist's duration and range win.
    static func loadableSong(_ entry: ListedSong, context: CommandContext) -> QueueEntry? {
        let metadata = context.services.options.metadataToUse
        let given = entry.entry.tags.filter { metadata.contains($0.type) }
        if let index = entry.song, let database = context.services.library?.database, given.isEmpty,
            entry.entry.durationMilliseconds == nil, entry.entry.startMilliseconds == 0,
            entry.entry.endMilliseconds == 0
        {
            // Nothing of the playlist's to merge: the snapshot's song as it is.
            let stored = Server.queueEntry(index, of: database)
            if case .stored = stored { return stored }
        }
        guard var song = Self.loaderSong(entry, context: context) else { return nil }
        let types = Set(given.map(\.type))
        song.info.tags = given + song.info.tags.filter { !types.contains($0.type) }
        if let duration = entry.entry.durationMilliseconds { song.info.durationMilliseconds = duration }
        if entry.entry.startMilliseconds != 0 { song.startMilliseconds = entry.entry.startMilliseconds }
        if entry.entry.endMilliseconds != 0 { song.endMilliseconds = entry.entry.endMilliseconds }
        return .song(song)
    }

    /// The song `mpd`'s `SongLoader` loads for an entry's URI, before the playlist's tags are merged in.
    private static func loaderSong(_ entry: ListedSong, context: CommandContext) -> QueueSong? {
        if let index = entry.song, let database = context.services.library?.database {
            return Server.queueSong(database.songs[Int(index)])
        }
        var uri = entry.uri
        if URIScheme.hasPrefixIgnoringCase(uri.utf8, "file://") { uri = String(uri.dropFirst(7)) }
        // Inside the music directory only the database counts; outside it, a local client's readable file, read
        // off the loop.
        if uri.hasPrefix("/") { return entry.file }
        guard URIScheme.schemeEnd(uri) != nil, QueueCommands.isRemote(uri, options: context.services.options) else {
            return nil
        }
        return QueueSong(uri: uri)
    }

    static func searchaddpl(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        var arguments = context.arguments[...]
        let name = arguments.removeFirst()
        var position: UInt64?
        if arguments.count >= 2 && arguments[arguments.endIndex - 2] == "position" {
            position = try ArgumentParser.unsigned(arguments[arguments.endIndex - 1])
            arguments.removeLast(2)
        }
        let selection = try FilterSelection.parse(arguments: arguments, foldCase: true, regex: SearchCommands.regex)
        let database = try DatabaseCommands.database(context)
        let context = context
        let found = { () throws(AckError) -> [String] in
            try SearchCommands.select(database, SongQuery(selection)).map { database.songs.uri($0) }
        }
        if let position, position != UInt64(UInt32.max) {
            return insert(Self.made(found), at: position, into: name, context: context)
        }
        return append(try found(), to: name, context: context)
    }
}
