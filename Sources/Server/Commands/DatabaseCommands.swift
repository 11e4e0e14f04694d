// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Library
import MPDProtocol
import Model
import Posix
import StoredPlaylists

/// Browsing and updating the music database: `lsinfo`, `listall`, `listallinfo`, `update`, `rescan`.
enum DatabaseCommands {
    static let all: [Command] = [
        Command("listall", .read, 0, 1) { context throws(AckError) in try list(&context, full: false) },
        Command("listallinfo", .read, 0, 1) { context throws(AckError) in try list(&context, full: true) },
        Command("listfiles", .read, 0, 1, listfiles),
        Command("lsinfo", .read, 0, 1, lsinfo),
        Command("rescan", .control, 0, 1) { context throws(AckError) in try update(&context, discard: true) },
        Command("update", .control, 0, 1) { context throws(AckError) in try update(&context, discard: false) },
    ]

    /// The database, or `No database` (code 50) when no music directory is configured.
    static func database(_ context: CommandContext) throws(AckError) -> Database {
        guard let library = context.services.library else { throw AckError(.noExist, "No database") }
        return library.database
    }

    /// The tags a client sees: its own mask within `metadata_to_use`.
    static func visibleTags(_ context: CommandContext) -> TagMask {
        context.services.options.metadataToUse.intersection(context.session.tagMask)
    }

    /// Checks a client URI the way `mpd`'s `LocateUri` does before it reaches the database.
    ///
    /// - Returns: the URI relative to the music directory.
    static func relativeURI(_ uri: String, context: CommandContext) throws(AckError) -> String {
        var path = uri
        if URIScheme.hasPrefixIgnoringCase(path.utf8, "file://") {
            path = String(path.dropFirst(7))
            guard path.hasPrefix("/") else { throw AckError(.arg, "Malformed file:// URI") }
        }
        if path.hasPrefix("/") {
            if let root = context.services.options.musicDirectory {
                let prefix = root.hasSuffix("/") ? root : root + "/"
                if path.hasPrefix(prefix) { return String(path.dropFirst(prefix.count)) }
            }
            // Local files outside the music directory are for local clients only (issue 7 adds them).
            throw AckError(.permission, "Access denied")
        }
        // mpd's uri_has_scheme: anything before a "://", which no storage plugin of the music directory opens.
        if URIScheme.hasScheme(path) { throw AckError(.arg, "Unsupported URI scheme") }
        return path
    }

    static func lsinfo(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        var uri = context.arguments.first ?? ""
        // "lsinfo /" never meant anything, but clients send it, so it lists the root as in mpd.
        if uri == "/" { uri = "" }
        if let scan = Self.remoteTagScan(uri, context: context) {
            return .deferred(
                DeferredReply(work: scan) { outcome, context throws(AckError) in
                    switch outcome {
                    case .failure(let error): throw AckError(error.isSystemError ? .system : .unknown, error.mpdMessage)
                    case .success(.notRecognized): throw AckError(.noExist, "No such file")
                    case .success(.failed(let message)): throw AckError(.unknown, message)
                    case .success(.tags(let tags)):
                        let visible = visibleTags(context)
                        for item in tags where visible.contains(item.type) { context.write(item.type.name, item.value) }
                        return .ok
                    }
                })
        }
        uri = try relativeURI(uri, context: context)
        let database = try database(context)
        let playlists = PlaylistCommands.directory(context)
        guard uri.isEmpty, playlists.isEnabled else {
            try Self.list(uri, of: database, context: &context)
            return .ok
        }
        // The root lists the stored playlists after its directories and songs: their directory is read off the
        // loop, on the playlist worker; the snapshot listed is the one in force when the command came.
        let logger = context.services.logger
        return .deferred(
            DeferredReply(
                worker: context.services.playlistWorker,
                work: { _ in PlaylistCommands.rootListing(playlists, logger: logger) }
            ) { listing, context throws(AckError) in
                try Self.list(uri, of: database, context: &context)
                context.write(raw: listing)
                return .ok
            })
    }

    /// `lsinfo`'s directories and songs of `uri` in `database`.
    private static func list(_ uri: String, of database: Database, context: inout CommandContext) throws(AckError) {
        let tags = visibleTags(context)
        // A directory of thousands of artists is as many entries.
        let songs = database.songs
        let paths = database.directoryPathTable()
        let entries = try walk(database, uri: uri, recursive: false)
        context.reply.writeBatched(entries) { entry, reply in
            append(entry, database: database, songs: songs, paths: paths, full: true, tags: tags, to: &reply)
        }
    }

    /// The work that opens the URL `uri` off the loop and reads its tags, when an input plugin opens its scheme
    /// (`lsinfo`'s `handle_lsinfo_absolute`: `tag_stream_scan`, which prints the tags alone); `nil` otherwise.
    private static func remoteTagScan(_ uri: String, context: CommandContext)
        -> (@Sendable (InputCancellation) -> Result<StreamTagScan, InputError>)?
    {
        guard let opener = QueueCommands.remoteOpener(for: uri, options: context.services.options),
            let scanner = context.services.options.streamTagScanner
        else { return nil }
        return { cancellation in
            do throws(InputError) {
                return .success(scanner(try opener(uri, cancellation)))
            } catch {
                return .failure(error)
            }
        }
    }

    /// `listall` and `listallinfo` look their argument up in the database directly (no URI location as
    /// for `lsinfo`): "" and "/" are the root, anything else must be a database path.
    static func list(_ context: inout CommandContext, full: Bool) throws(AckError) -> CommandResult {
        var uri = context.arguments.first ?? ""
        if uri == "/" { uri = "" }
        let database = try database(context)
        // Runs of songs short enough that a piece is not much more than `ReplyStream.pieces`' size.
        var listing = try walk(database, uri: uri, recursive: true, longestRun: full ? 32 : 256)
        let sink = context.reply
        let tags = visibleTags(context)
        let paths = database.directoryPathTable()
        // Streamed: a whole-library listallinfo is tens of megabytes on a large library. Each piece is appended in
        // place to the connection's output.
        return .stream(
            ReplyStream.pieces(sink: sink) { reply, size in
                // The table read once per piece: each read of `Database.songs` retains every column.
                let songs = database.songs
                while reply.bytes.count < size {
                    // The brief form's plain directories a run at a time, their lines written by bytes.
                    if !full {
                        let plain = listing.takePlainDirectories(limit: 64)
                        if !plain.isEmpty {
                            let capacity = database.briefListingByteCount(
                                plain, directoryKey: Self.directoryKey, fileKey: Self.fileKey)
                            reply.write(atMost: capacity) { writer in
                                database.putBriefListing(
                                    plain, directoryKey: Self.directoryKey, fileKey: Self.fileKey, to: &writer)
                            }
                            continue
                        }
                    }
                    guard let entry = listing.next() else { return false }
                    append(entry, database: database, songs: songs, paths: paths, full: full, tags: tags, to: &reply)
                }
                return true
            })
    }

    /// The keys of a brief listing's lines, as `Database.putBriefListing` takes them.
    private static let directoryKey = Array("directory: ".utf8)
    private static let fileKey = Array("file: ".utf8)

    /// What a listing of `uri` shows, in `mpd`'s order (``Database/Listing``), made as it is asked for.
    ///
    /// - Throws: `No such directory` (50) when `uri` is neither a directory nor a song.
    static func walk(
        _ database: Database, uri: String, recursive: Bool, longestRun: Int = 256
    ) throws(AckError) -> Database.Listing {
        guard let listing = database.listing(of: uri, recursive: recursive, longestRun: longestRun) else {
            throw AckError(.noExist, "No such directory")
        }
        return listing
    }

    /// One entry's lines appended to `reply`, in the full (`lsinfo`, `listallinfo`) or brief (`listall`) form;
    /// `songs` is `database.songs`, `paths` its `directoryPathTable()`.
    static func append(
        _ entry: Database.ListingEntry, database: Database, songs: SongTable, paths: TagValueTable,
        full: Bool, tags: TagMask, to reply: inout ReplyBuffer
    ) {
        switch entry {
        case .directory(let index):
            // The root is never printed. A mount point has no time (-1).
            let time = database.directories[Int(index)].modificationTime
            let shownTime = full && time >= 0 ? time : nil
            // The path's bytes are its bytes on the wire unless some path holds a raw-byte escape.
            guard !paths.mayHoldEscapes else {
                SongPrinter.appendDirectory(database.directories[Int(index)].path, time: shownTime, to: &reply)
                return
            }
            paths.withBytes(index) { SongPrinter.appendDirectory(bytes: $0, time: shownTime, to: &reply) }
        case .directories(let children):
            Self.appendDirectories(children, database: database, paths: paths, full: full, to: &reply)
        case .mountRoot(let index):
            reply.rawLine("directory", database.directories[Int(index)].path)
            // A mount's root read back from its database file has no time (-1), as in mpd.
            if full, let time = database.mountRootTime(index), time >= 0 {
                SongPrinter.appendLastModified(time, to: &reply)
            }
        case .songs(let run, let directory):
            if full {
                for index in run {
                    SongPrinter.appendSong(index, of: songs, visibleTags: tags, paths: paths, to: &reply)
                }
            } else {
                SongPrinter.appendFileLines(
                    run, of: songs, playlistLines: true, paths: paths, directory: directory, to: &reply)
            }
        case .playlist(let index, let position):
            let directory = database.directories[Int(index)]
            let playlist = directory.playlists[Int(position)]
            reply.rawLine("playlist", directory.path.isEmpty ? playlist.name : directory.path + "/" + playlist.name)
            if full { SongPrinter.appendLastModified(playlist.modificationTime, to: &reply) }
        }
    }

    /// The `directory:` lines (with `Last-Modified` in the full form) of a run of sub-directories, written at once.
    private static func appendDirectories(
        _ children: ArraySlice<Int32>, database: Database, paths: TagValueTable, full: Bool,
        to reply: inout ReplyBuffer
    ) {
        guard !paths.mayHoldEscapes else {
            for child in children {
                Self.append(
                    .directory(child), database: database, songs: database.songs, paths: paths, full: full,
                    tags: .none, to: &reply)
            }
            return
        }
        let directories = database.directories
        // A mount point has no time (-1); the root is never a child.
        var capacity = 0
        for child in children { capacity += SongPrinter.directoryBound(paths.byteCount(child), modified: full) }
        var days = reply.days
        // Each child's record lies after its elder sibling's whole subtree: one cache miss per child unless asked for
        // a few children ahead.
        let ahead = 8
        reply.write(atMost: capacity) { writer in
            for (offset, child) in children.enumerated() {
                if full, offset + ahead < children.count {
                    database.prefetchDirectory(children[children.startIndex + offset + ahead])
                }
                let time = directories[Int(child)].modificationTime
                let modified = full && time >= 0 ? (time, days.date(of: time)) : nil
                paths.withBytes(child) { SongPrinter.putDirectory($0, modified: modified, to: &writer) }
            }
        }
        reply.days = days
    }

    /// Lists the music directory's files as they are on disk (not the database): regular files with their
    /// size, directories, each with its modification time, in the order the file system returns them.
    /// Symbolic links and other entries are left out, as in `mpd`.
    ///
    /// Unlike `mpd` 0.23.12, which lists the parent of the music directory for `listfiles ../`, a path
    /// that climbs out of the music directory is refused: nothing outside it is shown.
    static func listfiles(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        // As mpd: the URI of a storage plugin (smb://, nfs://, http(s)://) lists that storage's root, read off the
        // loop (a storage Fermata cannot make is left to the checks below).
        let argument = context.arguments.first ?? ""
        if URIScheme.hasScheme(argument), let plugin = StoragePlugin.plugin(for: argument) {
            try plugin.check(argument)
            let opener = context.services.options.storageOpener
            if plugin.name == "udisks" {
                // Its storage connects to the system bus when made: off the loop, its error the reply's.
                return .deferred(Self.listStorage({ () throws -> (any Storage)? in try opener(argument) }, path: ""))
            }
            if let storage = try? opener(argument) {
                return .deferred(Self.listStorage(storage, path: ""))
            }
        }
        let uri = try relativeURI(argument, context: context)
        guard let root = context.services.options.musicDirectory else { throw AckError(.noExist, "No database") }
        // mpd converts the path to filesystem_charset first; ICU's error name is its message.
        guard FileSystemCharset.converts(uri) else { throw AckError(.unknown, "U_INVALID_CHAR_FOUND") }
        // "Broken/.." is the root as in mpd, but a path that climbs out of the music directory is refused
        // (mpd 0.23.12 would list the directory above it).
        guard let inside = resolvedInsideMusicDirectory(uri) else { throw AckError(.arg, "Malformed path") }
        if let library = context.services.library, let (mount, rest) = library.mount(containing: inside) {
            return .deferred(Self.listStorage(mount.storage, path: rest))
        }
        let path = inside.isEmpty ? root : root + "/" + inside
        // Each entry described by the bytes on disk, as mpd's reader does: a name filesystem_charset cannot
        // convert back is listed all the same.
        let entries: [(name: String, status: FileStatus?)]
        do {
            entries = try DirectoryEntries.statuses(in: path, followLinks: false)
        } catch {
            throw AckError(.system, "Failed to open \(path): \(error.errno)")
        }
        var text = ""
        for (name, status) in entries where !name.contains("\n") {
            guard let status else { continue }
            switch status.kind {
            case .regular: text += "file: \(name)\nsize: \(status.size)\n"
            case .directory: text += "directory: \(name)\n"
            case .symbolicLink, .other: continue
            }
            text += "Last-Modified: \(SongPrinter.iso8601(status.modificationTime))\n"
        }
        if inside.isEmpty, let library = context.services.library {
            // As mpd's composite storage: then the mount points the music directory does not have, by name, as
            // directories without a time.
            let listed = Set(entries.map(\.name))
            let points = library.mounts.map(\.path).filter { !listed.contains($0) }
            for name in points.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                text += "directory: \(name)\n"
            }
        }
        context.write(raw: text)
        return .ok
    }

    /// `listfiles` of `path` in a mounted storage, read off the loop: its entries in the storage's order, as for
    /// the music directory.
    static func listStorage(_ storage: any Storage, path: String) -> DeferredReply {
        Self.listStorage({ storage }, path: path)
    }

    /// `listfiles` of `path` in the storage `open` makes off the loop (`nil`: no such storage, an empty listing).
    static func listStorage(_ open: @escaping @Sendable () throws -> (any Storage)?, path: String) -> DeferredReply {
        DeferredReply(
            work: { _ -> Result<String, AckError> in
                let entries: [(name: String, status: StorageFileStatus?)]
                let storage: any Storage
                do {
                    guard let opened = try open() else { return .success("") }
                    storage = opened
                    entries = try storage.entries(in: path)
                } catch {
                    // As mpd's ToAck: a system error (libsmbclient's errno) is 52, any other (a WebDAV server's
                    // reply, libnfs's text) 5.
                    return .failure(AckError(error is SystemCallError ? .system : .unknown, "\(error)"))
                }
                var text = ""
                for (name, listed) in entries where !name.contains("\n") {
                    guard let status = listed ?? (try? storage.status(path.isEmpty ? name : path + "/" + name)) else {
                        continue
                    }
                    switch status.kind {
                    case .regular: text += "file: \(name)\nsize: \(status.size)\n"
                    case .directory: text += "directory: \(name)\n"
                    case .other: continue
                    }
                    // As mpd: none before the epoch (a WebDAV entry without a readable `getlastmodified`).
                    if status.modificationTime >= 0 {
                        text += "Last-Modified: \(SongPrinter.iso8601(status.modificationTime))\n"
                    }
                }
                return .success(text)
            },
            finish: { result, context throws(AckError) in
                context.write(raw: try result.get())
                return .ok
            })
    }

    /// Resolves the "." and ".." segments of a relative path; `nil` when it would climb above the music
    /// directory. A path without such segments comes back unchanged.
    static func resolvedInsideMusicDirectory(_ uri: some StringProtocol) -> String? {
        let segments = uri.split(separator: "/")
        guard segments.contains(where: { $0 == "." || $0 == ".." }) else { return String(uri) }
        var resolved: [Substring] = []
        for segment in segments where segment != "." {
            if segment == ".." {
                guard resolved.popLast() != nil else { return nil }
            } else {
                resolved.append(Substring(segment))
            }
        }
        return resolved.joined(separator: "/")
    }

    static func update(_ context: inout CommandContext, discard: Bool) throws(AckError) -> CommandResult {
        var path = context.arguments.first ?? ""
        // "" and "/" mean everything (mpd 0.15 compatibility).
        if path == "/" { path = "" }
        if !path.isEmpty && !isSafeLocalURI(path) { throw AckError(.arg, "Malformed path") }
        guard let library = context.services.library else { throw AckError(.noExist, "No database") }
        let id: Int
        do {
            id = try library.enqueue(uri: path, discard: discard)
        } catch {
            throw AckError(.updateAlready, "Update queue is full")
        }
        context.write("updating_db", id)
        return .ok
    }

    /// `mpd`'s `uri_safe_local`: relative, no empty, `.` or `..` segment.
    static func isSafeLocalURI(_ uri: String) -> Bool {
        guard !uri.hasPrefix("/") else { return false }
        for segment in uri.split(separator: "/", omittingEmptySubsequences: false) {
            if segment.isEmpty || segment == "." || segment == ".." { return false }
        }
        return true
    }
}
