// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Library
import MPDProtocol
import Model
import Playback
import Posix

/// The queue: adding, deleting, moving, priorities, ranges, tags and listing.
enum QueueCommands {
    static let all: [Command] = [
        Command("add", .add, 1, 2, add),
        Command("addid", .add, 1, 2, addid),
        Command("addtagid", .add, 3, 3, addtagid),
        Command("clear", .player, 0, 0) { context in
            context.partition.playlist.clear()
            return .ok
        },
        Command("cleartagid", .add, 1, 2, cleartagid),
        Command("delete", .player, 1, 1) { context throws(AckError) in
            let range = try QueueRange.parse(context.arguments[0])
            let playlist = context.partition.playlist
            try playlistAction { () throws(PlaylistError) in
                try playlist.delete(start: range.start, end: range.end ?? Int(UInt32.max))
            }
            return .ok
        },
        Command("deleteid", .player, 1, 1) { context throws(AckError) in
            let id = try ArgumentParser.unsigned(context.arguments[0])
            let playlist = context.partition.playlist
            try playlistAction { () throws(PlaylistError) in try playlist.delete(id: Int(id)) }
            return .ok
        },
        Command("findadd", .add, 1, nil) { context throws(AckError) in try matchAdd(&context, foldCase: false) },
        Command("move", .player, 2, 2, move),
        Command("moveid", .player, 2, 2, moveid),
        Command("playlist", .read, 0, 0, playlist),
        Command("playlistfind", .read, 1, nil) { context throws(AckError) in try find(&context, foldCase: false) },
        Command("playlistid", .read, 0, 1, playlistid),
        Command("playlistinfo", .read, 0, 1, playlistinfo),
        Command("playlistsearch", .read, 1, nil) { context throws(AckError) in try find(&context, foldCase: true) },
        Command("plchanges", .read, 1, 2) { context throws(AckError) in try changes(&context, positionsOnly: false) },
        Command("plchangesposid", .read, 1, 2) { context throws(AckError) in
            try changes(&context, positionsOnly: true)
        },
        Command("prio", .player, 2, nil, prio),
        Command("prioid", .player, 2, nil, prioid),
        Command("rangeid", .add, 2, 2, rangeid),
        Command("searchadd", .add, 1, nil) { context throws(AckError) in try matchAdd(&context, foldCase: true) },
        Command("shuffle", .player, 0, 1) { context throws(AckError) in
            let range = try context.arguments.first.map { text throws(AckError) in try QueueRange.parse(text) } ?? .all
            let playlist = context.partition.playlist
            try playlistAction { () throws(PlaylistError) in
                try playlist.shuffle(start: range.start, end: range.end ?? Int(UInt32.max))
            }
            return .ok
        },
        Command("swap", .player, 2, 2) { context throws(AckError) in
            let first = try ArgumentParser.unsigned(context.arguments[0])
            let second = try ArgumentParser.unsigned(context.arguments[1])
            let playlist = context.partition.playlist
            try playlistAction { () throws(PlaylistError) in try playlist.swap(Int(first), Int(second)) }
            return .ok
        },
        Command("swapid", .player, 2, 2) { context throws(AckError) in
            let first = try ArgumentParser.unsigned(context.arguments[0])
            let second = try ArgumentParser.unsigned(context.arguments[1])
            let playlist = context.partition.playlist
            try playlistAction { () throws(PlaylistError) in try playlist.swap(id: Int(first), id: Int(second)) }
            return .ok
        },
    ]

    // MARK: - Adding

    /// The database songs under `uri` ("" for all): a directory recursively, or one song.
    ///
    /// - Throws: `No such directory` (50).
    static func songs(at uri: String, in database: Database) throws(AckError) -> [Int32] {
        if uri.isEmpty { return database.visibleSongs() }
        if let directory = database.directory(at: uri) {
            var result: [Int32] = []
            database.walk(from: directory, recursive: true) { result.append($0) }
            return result
        }
        if let song = database.song(at: uri), !Self.containsDoubleSlash(uri) { return [song] }
        throw AckError(.noExist, "No such directory")
    }

    /// Whether `uri` holds `//` (a byte scan: `String.contains` searches through generic string processing).
    static func containsDoubleSlash(_ uri: String) -> Bool {
        var previous: UInt8 = 0
        for byte in uri.utf8 {
            if byte == UInt8(ascii: "/") && previous == byte { return true }
            previous = byte
        }
        return false
    }

    /// Appends database songs, as one bulk edit for `add` (`findadd` and `searchadd` bump the version per song
    /// in mpd 0.23), then moves them to `position` when it is before the old end.
    static func append(
        _ songs: [Int32], from database: Database, to playlist: Playlist, position: Int, bulk: Bool
    ) throws(AckError) {
        let oldCount = playlist.queue.count
        if bulk { playlist.beginBulk() }
        var failure: PlaylistError?
        for index in songs {
            do {
                try playlist.append(Server.queueEntry(index, of: database))
            } catch {
                failure = error
                break
            }
        }
        if bulk { playlist.commitBulk() }
        if position < oldCount {
            // mpd ignores a failing move here.
            try? playlist.move(start: oldCount, end: playlist.queue.count, to: position)
        }
        if let failure { throw failure.ack }
    }

    /// Where an `add`/`addid` URI points (`mpd`'s `LocateUri`).
    enum Location {
        /// A path in the music directory ("" for all of it).
        case database(String)
        /// A file outside the music directory, which a local client may add.
        case file(String)
        /// A URL an input plugin opens (a stream, a remote file).
        case remote(String)
    }

    /// Whether an input plugin opens `uri` (`mpd`'s `uri_supported_scheme`: its scheme, ASCII
    /// case-insensitively).
    static func isRemote(_ uri: String, options: ServerOptions) -> Bool {
        options.remoteSchemes.contains { URIScheme.hasPrefixIgnoringCase(uri.utf8, $0) }
    }

    /// How to open `uri` when it names something an input plugin reads (`http://…`, not `file://`), or nil
    /// for a song path, a local file, a scheme no plugin opens, or a server without remote input.
    static func remoteOpener(for uri: String, options: ServerOptions) -> RemoteOpener? {
        guard URIScheme.hasScheme(uri), !URIScheme.hasPrefixIgnoringCase(uri.utf8, "file://"),
            Self.isRemote(uri, options: options)
        else { return nil }
        return options.remoteOpener
    }

    /// Locates `uri`: `file://` and absolute paths inside the music directory become relative; outside it
    /// they are for local clients (whether this one may read the file is checked where it is read, off the loop).
    ///
    /// - Throws: `Malformed file:// URI`, `Unsupported URI scheme` (2), `Access denied` (4) for a client that is not
    ///   local.
    static func locate(_ uri: String, context: CommandContext) throws(AckError) -> Location {
        var path = uri
        if URIScheme.hasPrefixIgnoringCase(path.utf8, "file://") {
            path = String(path.dropFirst(7))
            guard path.hasPrefix("/") else { throw AckError(.arg, "Malformed file:// URI") }
        }
        guard path.hasPrefix("/") else {
            if path == uri, self.isRemote(uri, options: context.services.options) { return .remote(uri) }
            return .database(try DatabaseCommands.relativeURI(path, context: context))
        }
        if let root = context.services.options.musicDirectory {
            let prefix = root.hasSuffix("/") ? root : root + "/"
            if path.hasPrefix(prefix) { return .database(String(path.dropFirst(prefix.count))) }
        }
        // Whether this client may read the file is decided off the loop, where it is read (it may take a stat).
        guard context.session.peerUserID != nil else { throw AckError(.permission, "Access denied") }
        return .file(path)
    }

    /// Checks that the client may read the song file `path` outside the music directory
    /// (``SessionSettings/allowFile(_:peerUserID:)``) and reads it, off the loop (`add` and `addid` of a local file),
    /// in the reading session of the command or command list (``SessionSettings/reading(with:)``), then hands it to
    /// `finish` on the loop with the position the command's second argument names in the queue as it is then (`nil`
    /// without one; the argument was checked before the file was read), which adds it.
    ///
    /// - Throws: through `finish`'s reply, `Access denied` (4) and `Failed to access PATH: …` (52) of the check, then
    ///   `mpd`'s errors of ``fileSong(_:reader:)``.
    private static func readingFile(
        _ path: String, context: CommandContext,
        finish: @escaping (QueueSong, Int?, inout CommandContext) throws(AckError) -> CommandResult
    ) -> CommandResult {
        let reader = context.services.options.library.map { context.session.reading(with: $0.updater.reader) }
        let positionText = context.arguments.count > 1 ? context.arguments[1] : nil
        let peerUserID = context.session.peerUserID
        return .deferred(
            DeferredReply(work: { _ -> Result<QueueSong, AckError> in
                do throws(AckError) {
                    try SessionSettings.allowFile(path, peerUserID: peerUserID)
                } catch {
                    return .failure(error)
                }
                return reader.map { Self.fileSong(path, reader: $0) } ?? .failure(AckError(.noExist, "No such song"))
            }) { result, context throws(AckError) in
                let song = try result.get()
                let playlist = context.partition.playlist
                let position = try positionText.map { text throws(AckError) in
                    try QueueArguments.insertPosition(text, playlist: playlist)
                }
                return try finish(song, position, &context)
            })
    }

    /// A song outside the music directory, read with the library's reader; `nil` when it cannot be read. Blocks.
    static func fileSong(_ path: String, options: ServerOptions) -> QueueSong? {
        options.library.flatMap { try? Self.fileSong(path, reader: $0.updater.reader).get() }
    }

    /// A song outside the music directory, read with `reader`. Fails as `mpd`'s `DetachedSong::LoadFile`: a file
    /// that cannot be looked at is a system error (`Failed to access PATH: …`, 52), anything but a regular file or a
    /// file no plugin reads `No such song` (50). Blocks.
    static func fileSong(_ path: String, reader: any SongInfoReader) -> Result<QueueSong, AckError> {
        let status: FileStatus
        do {
            status = try FileStatus(path: path)
        } catch {
            return .failure(AckError(.system, "Failed to access \(path): \(error.errno)"))
        }
        guard status.kind == .regular else { return .failure(AckError(.noExist, "No such song")) }
        guard let info = try? reader.readInfo(path: path) else { return .failure(AckError(.noExist, "No such song")) }
        return .success(QueueSong(uri: path, modificationTime: status.modificationTime, info: info))
    }

    static func add(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        var uri = context.arguments[0]
        // "add /" never meant anything, but clients send it to add everything, so it does.
        if uri == "/" { uri = "" }
        let playlist = context.partition.playlist
        let position =
            try context.arguments.count > 1
            ? QueueArguments.insertPosition(context.arguments[1], playlist: playlist) : playlist.queue.count
        switch try self.locate(uri, context: context) {
        case .database(let relative):
            let database = try DatabaseCommands.database(context)
            try self.append(
                try self.songs(at: relative, in: database), from: database, to: playlist, position: position,
                bulk: true)
        case .file(let path):
            return Self.readingFile(path, context: context) { song, position, context throws(AckError) in
                let playlist = context.partition.playlist
                try self.insert(song, at: position ?? playlist.queue.count, into: playlist)
                return .ok
            }
        case .remote(let url):
            try self.insert(QueueSong(uri: url), at: position, into: playlist)
        }
        return .ok
    }

    /// Appends one song and moves it to `position` (`mpd` ignores a failing move here).
    private static func insert(_ song: QueueSong, at position: Int, into playlist: Playlist) throws(AckError) {
        let oldCount = playlist.queue.count
        try playlistAction { () throws(PlaylistError) in try playlist.append(song) }
        if position < oldCount { try? playlist.move(start: oldCount, end: oldCount + 1, to: position) }
    }

    static func addid(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let playlist = context.partition.playlist
        let target =
            try context.arguments.count > 1
            ? QueueArguments.insertPosition(context.arguments[1], playlist: playlist) : nil
        let song: QueueEntry
        switch try self.locate(context.arguments[0], context: context) {
        case .database(let relative):
            let database = try DatabaseCommands.database(context)
            guard let index = database.song(at: relative) else { throw AckError(.noExist, "No such song") }
            song = Server.queueEntry(index, of: database)
        case .file(let path):
            return Self.readingFile(path, context: context) { song, target, context throws(AckError) in
                try self.addSong(.song(song), at: target, to: context.partition.playlist, context: &context)
            }
        case .remote(let url):
            song = .song(QueueSong(uri: url))
        }
        return try self.addSong(song, at: target, to: playlist, context: &context)
    }

    /// `addid`'s end: appends `song`, moves it to `target` (undoing the append when that fails), prints its id.
    private static func addSong(
        _ song: QueueEntry, at target: Int?, to playlist: Playlist, context: inout CommandContext
    ) throws(AckError) -> CommandResult {
        let position = playlist.queue.count
        let id = try playlistAction { () throws(PlaylistError) in try playlist.append(song) }
        if let target {
            do throws(PlaylistError) {
                try playlist.move(start: position, end: position + 1, to: target)
            } catch {
                try? playlist.delete(id: id)
                throw error.ack
            }
        }
        context.write("Id", id)
        return .ok
    }

    static func matchAdd(_ context: inout CommandContext, foldCase: Bool) throws(AckError) -> CommandResult {
        let playlist = context.partition.playlist
        let (rest, positionText) = FilterSelection.splitPosition(context.arguments[...])
        let position =
            try positionText.map { text throws(AckError) in
                try QueueArguments.insertPosition(text, playlist: playlist)
            } ?? playlist.queue.count
        let selection = try FilterSelection.parse(arguments: rest, foldCase: foldCase, regex: SearchCommands.regex)
        let database = try DatabaseCommands.database(context)
        let selected = try SearchCommands.select(database, SongQuery(selection))
        try self.append(selected, from: database, to: playlist, position: position, bulk: false)
        return .ok
    }

    // MARK: - Editing

    static func move(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let range = try QueueRange.parse(context.arguments[0])
        guard let end = range.end else { throw AckError(.arg, "Open-ended range not supported") }
        return try self.move(range.start..<max(range.start, end), to: context.arguments[1], context: context)
    }

    static func moveid(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let id = try ArgumentParser.unsigned(context.arguments[0])
        guard let position = context.partition.playlist.queue.position(ofID: Int(id)) else {
            throw AckError(.noExist, "No such song")
        }
        return try self.move(position..<(position + 1), to: context.arguments[1], context: context)
    }

    private static func move(_ range: Range<Int>, to text: String, context: CommandContext) throws(AckError)
        -> CommandResult
    {
        let playlist = context.partition.playlist
        let to = try QueueArguments.moveDestination(text, range: range, playlist: playlist)
        try playlistAction { () throws(PlaylistError) in
            try playlist.move(start: range.lowerBound, end: range.upperBound, to: to)
        }
        return .ok
    }

    static func prio(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let priority = UInt8(try ArgumentParser.unsigned(context.arguments[0], maximum: 255))
        let playlist = context.partition.playlist
        for text in context.arguments.dropFirst() {
            let range = try QueueRange.parse(text)
            try playlistAction { () throws(PlaylistError) in
                try playlist.setPriority(start: range.start, end: range.end ?? Int(UInt32.max), priority)
            }
        }
        return .ok
    }

    static func prioid(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let priority = UInt8(try ArgumentParser.unsigned(context.arguments[0], maximum: 255))
        let playlist = context.partition.playlist
        for text in context.arguments.dropFirst() {
            let id = try ArgumentParser.unsigned(text)
            try playlistAction { () throws(PlaylistError) in try playlist.setPriority(id: Int(id), priority) }
        }
        return .ok
    }

    /// `START:END` in fractional seconds, either side optional, neither negative, END after START unless 0;
    /// `nil` when malformed.
    static func timeRange(_ text: String) -> (start: UInt64, end: UInt64)? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        func milliseconds(_ part: Substring) -> UInt64?? {
            // An empty side is zero; anything else must be a whole C float.
            if part.isEmpty { return .some(0) }
            guard let value = try? QueueArguments.float(String(part)), value >= 0 else { return .none }
            return .some(UInt64(value * 1000))
        }
        guard let start = milliseconds(text[..<colon]) ?? nil,
            let end = milliseconds(text[text.index(after: colon)...]) ?? nil
        else { return nil }
        guard end == 0 || end > start else { return nil }
        return (start, end)
    }

    static func rangeid(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let id = try ArgumentParser.unsigned(context.arguments[0])
        guard let (start, end) = self.timeRange(context.arguments[1]) else { throw AckError(.arg, "Bad range") }
        let playlist = context.partition.playlist
        try playlistAction { () throws(PlaylistError) in
            try playlist.setRange(id: Int(id), startMilliseconds: start, endMilliseconds: end)
        }
        return .ok
    }

    /// Tag edits are for remote songs only; every queue song is a local file today.
    private static func editTags(_ context: CommandContext, tagArgument: String?) throws(AckError) {
        let id = try ArgumentParser.unsigned(context.arguments[0])
        if let name = tagArgument, TagType(parsing: name) == nil {
            throw AckError(.arg, "Unknown tag type: \(name)")
        }
        guard let position = context.partition.playlist.queue.position(ofID: Int(id)),
            position < context.partition.playlist.queue.count
        else { throw AckError(.noExist, "No such song") }
        throw AckError(.permission, "Cannot edit tags of local file")
    }

    static func addtagid(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        try self.editTags(context, tagArgument: context.arguments[1])
        return .ok
    }

    static func cleartagid(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        try self.editTags(context, tagArgument: context.arguments.count > 1 ? context.arguments[1] : nil)
        return .ok
    }

    // MARK: - Listing

    /// Writes the queue song block of `position`: the song block (with `Range:`), `Pos:`, `Id:`, `Prio:`.
    static func writeItem(at position: Int, context: CommandContext) {
        let snapshot = SongPrinter.Snapshot(context.services.library?.database)
        var reply = ReplyBuffer(capacity: 1024)
        let item = context.partition.playlist.queue.items[position]
        Self.appendItem(
            item, at: position, song: snapshot.flatMap { item.song(in: $0.database) }, songs: snapshot?.songs,
            visibleTags: DatabaseCommands.visibleTags(context), to: &reply)
        context.reply.write(bytes: reply.bytes)
    }

    /// The queue song blocks of `positions` (see `writeItem(at:context:)`) as a reply streamed to the client while
    /// it is made, in pieces of about 64 KiB, rather than queued whole (30 MB for 100k songs). It is made from the
    /// queue as it is now (a copy, which costs nothing unless the queue changes before the reply is out) and from
    /// the library's snapshot of now, so what other clients do meanwhile does not show in it; and it is sized
    /// first, so that a reply over `max_output_buffer_size` drops the client with nothing sent, as `mpd` does.
    static func streamItems<Positions: RandomAccessCollection<Int>>(at positions: Positions, context: CommandContext)
        -> CommandResult
    {
        let queue = context.partition.playlist.queue
        let tags = DatabaseCommands.visibleTags(context)
        let snapshot = SongPrinter.Snapshot(context.services.library?.database)
        let paths = snapshot?.database.directoryPathTable()
        // The items' song numbers in the snapshot (-1: none), in the order of `positions`, for the printer to ask for
        // its songs' memory ahead of it (`SongTable.prefetch`): a queue's songs lie scattered over the table.
        let numbers = snapshot.map { queue.songNumbers(at: positions, inStore: ObjectIdentifier($0.database)) } ?? []
        return .stream(
            ReplyStream.sized(
                from: positions.startIndex, to: positions.endIndex, sink: context.reply,
                quickBound: {
                    // Every item a song of the snapshot at the table's largest block: no look at each song.
                    guard let songs = snapshot?.songs, !numbers.contains(-1) else { return nil }
                    let (total, overflow) = numbers.count.multipliedReportingOverflow(
                        by: SongPrinter.largestSizeBound(of: songs, extra: 80))
                    return overflow ? nil : total
                },
                bound: {
                    var total = 0
                    var scratch = ReplyBuffer()
                    // The song table read once (each read retains and releases every column), as for the pieces.
                    let songs = snapshot?.songs
                    var offset = 0
                    _ = queue.visitItems(at: positions, from: positions.startIndex) { item, position in
                        songs?.prefetch(numbers, before: offset)
                        defer { offset += 1 }
                        if let songs, offset < numbers.count, numbers[offset] >= 0 {
                            let song = numbers[offset]
                            // `Pos`, `Id` and `Prio` lines of 20 digits at most.
                            total += SongPrinter.sizeBound(song, of: songs, extra: 80)
                        } else {
                            // Not from the snapshot (a URL, a file outside the library): few, measured.
                            scratch.removeAll()
                            Self.appendItem(
                                item, at: position, song: nil, songs: songs, visibleTags: tags, to: &scratch)
                            total += scratch.bytes.count
                        }
                        return true
                    }
                    return total
                }
            ) { start, reply, bytes in
                // Items are read in place: a copy of each would retain and release its song.
                let songs = snapshot?.songs
                var offset = positions.distance(from: positions.startIndex, to: start)
                return queue.visitItems(at: positions, from: start) { item, position in
                    guard reply.bytes.count < bytes else { return false }
                    songs?.prefetch(numbers, before: offset, paths: paths)
                    let song = offset < numbers.count && numbers[offset] >= 0 ? numbers[offset] : nil
                    offset += 1
                    Self.appendItem(
                        item, at: position, song: song, songs: songs, paths: paths, visibleTags: tags, to: &reply)
                    return true
                }
            })
    }

    /// Appends one queue song block: the song block (with `Range:`), `Pos:`, `Id:`, `Prio:` (when not 0). A song
    /// of the snapshot is written from its columns.
    /// `songs` is the snapshot's table, read once by the caller for many items: each read of
    /// `SongPrinter.Snapshot.songs` retains and releases every column of the table; `paths` its
    /// `directoryPathTable()`, when the caller has it.
    /// `song` is the item's song number in the snapshot (`nil` for a song of its own), as the caller found it.
    static func appendItem(
        _ item: Queue.Item, at position: Int, song: Int32?, songs: SongTable?, paths: TagValueTable? = nil,
        visibleTags: TagMask, to reply: inout ReplyBuffer
    ) {
        if let songs, let song {
            SongPrinter.appendSong(
                song, of: songs, visibleTags: visibleTags, playlistLine: false, paths: paths, to: &reply)
        } else {
            SongPrinter.appendSong(item.song, visibleTags: visibleTags, to: &reply)
        }
        // `Prio: ` and 20 digits at most, and the newline, three times.
        reply.write(atMost: 3 * 27) { out in
            out.put("Pos: ")
            out.put(decimal: UInt64(position))
            out.put(byte: UInt8(ascii: "\n"))
            out.put("Id: ")
            out.put(decimal: UInt64(item.id))
            out.put(byte: UInt8(ascii: "\n"))
            if item.priority != 0 {
                out.put("Prio: ")
                out.put(decimal: UInt64(item.priority))
                out.put(byte: UInt8(ascii: "\n"))
            }
        }
    }

    static func playlist(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        var text = ""
        for (position, item) in context.partition.playlist.queue.items.enumerated() {
            text += "\(position):file: \(PlaylistCommands.withoutCredentials(item.uri))\n"
        }
        context.write(raw: text)
        return .ok
    }

    static func playlistinfo(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let range = try context.arguments.first.map { text throws(AckError) in try QueueRange.parse(text) } ?? .all
        return self.streamItems(at: try range.clipped(to: context.partition.playlist.queue.count), context: context)
    }

    static func playlistid(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let queue = context.partition.playlist.queue
        guard let text = context.arguments.first else {
            return self.streamItems(at: 0..<queue.count, context: context)
        }
        let id = try ArgumentParser.unsigned(text)
        guard let position = queue.position(ofID: Int(id)) else { throw AckError(.noExist, "No such song") }
        // Id 0 maps to position 0 even in an empty queue (see `Queue.position(ofID:)`): then nothing is printed.
        if position < queue.count { self.writeItem(at: position, context: context) }
        return .ok
    }

    static func find(_ context: inout CommandContext, foldCase: Bool) throws(AckError) -> CommandResult {
        let filter = try FilterParser.parse(
            arguments: context.arguments[...], foldCase: foldCase, regex: SearchCommands.regex)
        let snapshot = SongPrinter.Snapshot(context.services.library?.database)
        return self.streamItems(
            at: context.partition.playlist.queue.positions(matching: filter, snapshot: snapshot), context: context)
    }

    static func changes(_ context: inout CommandContext, positionsOnly: Bool) throws(AckError) -> CommandResult {
        let version = try ArgumentParser.u32(context.arguments[0])
        let range = try context.arguments.count > 1 ? QueueRange.parse(context.arguments[1]) : .all
        let queue = context.partition.playlist.queue
        // ClipRelaxed: never an error.
        let end = min(range.end ?? queue.count, queue.count)
        let start = min(range.start, end)
        guard positionsOnly else {
            // The positions gathered first, in one loop over the items' versions: a lazy filter read each item
            // through a copy (its song retained and released) on every index step, twice (the size bound, then the
            // pieces); all of them (`plchanges 0`) are the range itself.
            var changed: [Int] = []
            queue.forEachNewer(in: start..<end, than: version) { position, _ in changed.append(position) }
            if changed.count == end - start { return self.streamItems(at: start..<end, context: context) }
            return self.streamItems(at: changed, context: context)
        }
        return Self.streamPositionsAndIDs(queue, in: start..<end, newerThan: version, sink: context.reply)
    }

    /// `plchangesposid`'s reply (see `positionsAndIDs(_:in:newerThan:)`) streamed in pieces of at most 64 KiB, each
    /// made in a buffer of its own size: made whole, the reply of a 100k-song queue was two fresh 2.4 MB buffers (its
    /// own and the connection's copy), whose pages the kernel had to clear each time. Sized first, as `mpd`
    /// buffers it whole, from its bound of 52 bytes per position.
    static func streamPositionsAndIDs(
        _ queue: Queue, in positions: Range<Int>, newerThan version: UInt32, sink: any ReplySink
    ) -> CommandResult {
        guard !positions.isEmpty else { return .ok }
        return .stream(
            ReplyStream.sized(
                from: positions.lowerBound, to: positions.upperBound, sink: sink,
                bound: { Self.mostBytesPerPosition * positions.count }
            ) { start, reply, bytes in
                let end = min(
                    start + max(1, (bytes - reply.bytes.count) / Self.mostBytesPerPosition), positions.upperBound)
                reply.append(bytes: Self.positionsAndIDs(queue, in: start..<end, newerThan: version))
                return end
            })
    }

    /// The longest `cpos: P\nId: I\n`: two keys, two numbers of at most 20 digits, two newlines.
    static let mostBytesPerPosition = 6 + 4 + 2 * 20 + 2

    /// `cpos: P\nId: I\n` for each item of `positions` newer than `version`, written straight into one buffer.
    static func positionsAndIDs(_ queue: Queue, in positions: Range<Int>, newerThan version: UInt32) -> [UInt8] {
        guard !positions.isEmpty else { return [] }
        // A writer value, not nested functions over a captured count: those made every byte an exclusivity check
        // (`swift_beginAccess`, 40 % of a 100k-song `plchangesposid 0`).
        return ByteWriter.bytes(capacity: Self.mostBytesPerPosition * positions.count) { writer in
            queue.forEachNewer(in: positions, than: version) { position, id in
                writer.put("cpos: ")
                writer.put(position)
                writer.put("\nId: ")
                writer.put(id)
                writer.put("\n")
            }
        }
    }
}
