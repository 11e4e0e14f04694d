// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Library
import MPDProtocol
import Model
import Playback
import Posix

/// Cover art: `albumart` (a cover file next to the song) and `readpicture` (a picture embedded in it).
enum ArtCommands {
    static let all: [Command] = [
        Command("albumart", .read, 2, 2, albumart),
        Command("readcomments", .read, 1, 1, readcomments),
        Command("readpicture", .read, 2, 2, readpicture),
    ]

    /// The file names `albumart` tries, in `mpd` 0.23.12's order.
    static let coverNames = ["cover.png", "cover.jpg", "cover.webp"]

    /// Writes one chunk of a binary object of `size` bytes: `size`, optional `type`, `binary: n`, the
    /// bytes, a newline.
    static func writeChunk(size: Int, chunk: some Collection<UInt8>, type: String?, context: CommandContext) {
        var header = "size: \(size)\n"
        if let type { header += "type: \(type)\n" }
        header += "binary: \(chunk.count)\n"
        context.reply.write(header)
        context.reply.write(bytes: chunk)
        context.reply.write("\n")
    }

    static func albumart(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let argument = context.arguments[0]
        let offset = Int(try ArgumentParser.unsigned(context.arguments[1]))
        if let opener = QueueCommands.remoteOpener(for: argument, options: context.services.options) {
            // mpd's `read_stream_art`: the cover files beside the URL, opened through the input plugins.
            let directory = argument.lastIndex(of: "/").map { String(argument[..<$0]) } ?? "."
            // The client's next chunk of the cover it read last comes from memory, as long as it keeps asking.
            let now = context.services.clock.now()
            if var cover = context.session.lastRemoteCover, cover.serves(directory, now: now) {
                cover.touch(now: now)
                context.session.lastRemoteCover = cover
                return try Self.writeCover(cover, offset: offset, context: context)
            }
            context.session.lastRemoteCover = nil
            let limit = context.session.binaryLimit
            return .deferred(
                DeferredReply(work: { cancellation in
                    Self.readRemoteCover(in: directory, offset: offset, count: limit, opener, cancellation)
                }) { read, context throws(AckError) in
                    switch try read.get() {
                    case .whole(let bytes):
                        let cover = RemoteCover(directory: directory, bytes: bytes, now: context.services.clock.now())
                        context.session.lastRemoteCover = cover
                        return try Self.writeCover(cover, offset: offset, context: context)
                    case .chunk(let size, let chunk):
                        writeChunk(size: size, chunk: chunk, type: nil, context: context)
                        return .ok
                    }
                })
        }
        let uri = try DatabaseCommands.relativeURI(argument, context: context)
        guard let root = context.services.options.musicDirectory, context.services.library != nil else {
            throw AckError(.noExist, "No database")
        }
        // The song's directory: everything before the last slash ("Artist/Album/" names the directory).
        // mpd 0.23.12 would follow "../" out of the music directory; Fermata never leaves it.
        let parent = uri.lastIndex(of: "/").map { uri[..<$0] } ?? ""
        guard let directory = DatabaseCommands.resolvedInsideMusicDirectory(parent) else {
            throw AckError(.noExist, "No file exists")
        }
        let base = directory.isEmpty ? root : root + "/" + directory
        let limit = context.session.binaryLimit
        // The files are read off the loop (a disk or a network share may be slow); the reply waits for them.
        return .deferred(
            DeferredReply(work: { _ in Self.readCover(in: base, offset: offset, count: limit) }) {
                cover, context throws(AckError) in
                guard let (size, chunk) = cover else { throw AckError(.noExist, "No file exists") }
                if offset > size { throw AckError(.arg, "Offset too large") }
                writeChunk(size: size, chunk: chunk, type: nil, context: context)
                return .ok
            })
    }

    /// The first cover file of `directory` that can be read, in `mpd`'s order: its size and the `count` bytes at
    /// `offset` (clients fetch a cover in binarylimit-sized chunks: only the chunk asked for is read). Blocks.
    private static func readCover(in directory: String, offset: Int, count: Int) -> (size: Int, chunk: [UInt8])? {
        for name in Self.coverNames {
            if let cover = try? readFileRange(atPath: directory + "/" + name, offset: offset, count: count) {
                return (cover.size, cover.bytes)
            }
        }
        return nil
    }

    /// The chunk of a kept cover at `offset` (`binarylimit` bytes at most).
    ///
    /// - Throws: `Offset too large` (2) past its end.
    private static func writeCover(_ cover: RemoteCover, offset: Int, context: CommandContext) throws(AckError)
        -> CommandResult
    {
        guard let chunk = cover.chunk(at: offset, count: context.session.binaryLimit) else {
            throw AckError(.arg, "Offset too large")
        }
        writeChunk(size: cover.bytes.count, chunk: chunk, type: nil, context: context)
        return .ok
    }

    /// What `readRemoteCover` read: the whole cover (small enough to keep), or its size and one chunk.
    private enum RemoteCoverRead: Sendable {
        case whole([UInt8])
        case chunk(size: Int, bytes: [UInt8])
    }

    /// The first cover file beside a URL that an input plugin opens, in `mpd`'s order: all of it when it is at most
    /// `RemoteCover.maximumSize` bytes, else its size and the `count` bytes at `offset`; or `mpd`'s error. Blocks
    /// (off the loop); a failed open tries the next name, as in `mpd`.
    private static func readRemoteCover(
        in directory: String, offset: Int, count: Int, _ opener: RemoteOpener, _ cancellation: InputCancellation
    ) -> Result<RemoteCoverRead, AckError> {
        Result { () throws(AckError) in
            var opened: (any InputStream)?
            for name in Self.coverNames where opened == nil && !cancellation.isCancelled {
                opened = try? opener(directory + "/" + name, cancellation)
            }
            guard let stream = opened else { throw AckError(.noExist, "No file exists") }
            guard let known = stream.size else { throw AckError(.noExist, "Cannot get size for stream") }
            let size = Int(clamping: known)
            if offset > size { throw AckError(.arg, "Offset too large") }
            guard size <= RemoteCover.maximumSize else {
                return .chunk(size: size, bytes: try Self.read(stream, at: offset, count: min(size - offset, count)))
            }
            // Small enough to keep: everything up to the chunk asked for, then (unless that fails) the rest.
            let end = min(size, offset + count)
            let head = try Self.read(stream, at: 0, count: end)
            guard head.count == end, let tail = try? Self.read(stream, at: end, count: size - end),
                tail.count == size - end
            else { return .chunk(size: size, bytes: Array(head.dropFirst(offset))) }
            return .whole(head + tail)
        }
    }

    /// Up to `count` bytes of `stream` at `offset` (fewer at its end).
    ///
    /// - Throws: the input's error, in `mpd`'s words (5).
    private static func read(_ stream: any InputStream, at offset: Int, count: Int) throws(AckError) -> [UInt8] {
        do throws(InputError) {
            if count > 0 && stream.offset != UInt64(offset) { try stream.seek(to: UInt64(offset)) }
            return try stream.readUpTo(count)
        } catch {
            throw AckError(.unknown, error.mpdMessage)
        }
    }

    /// `readcomments`: the file's raw name/value pairs, keeping only names of ASCII letters, `_` and `-`
    /// (starting with a letter) and values without control characters, as `mpd` does.
    static func readcomments(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let options = context.services.options
        return try Self.scanAny(context, stream: options.streamCommentReader, file: options.commentReader) {
            pairs, context throws(AckError) in
            context.write(raw: Self.commentLines(pairs))
            return .ok
        }
    }

    /// What `readcomments` and `readpicture` read (`mpd`'s `TagScanAny`), handed to `finish` on the loop: a URL
    /// through the input plugins, else a song of the database: one of a mounted storage where the storage maps
    /// it (`TagScanDatabase`: a local file of a udisks volume, else a stream through the input plugins: SMB,
    /// NFS, WebDAV), any other from the music directory. The reading is done off the loop.
    ///
    /// - Throws: `No such song` (50) for a URI that names no song.
    private static func scanAny<Value: Sendable>(
        _ context: CommandContext, stream: (@Sendable (any InputStream) throws(StreamReadError) -> Value)?,
        file: (@Sendable (String) throws -> Value)?,
        finish: @escaping (Value, inout CommandContext) throws(AckError) -> CommandResult
    ) throws(AckError) -> CommandResult {
        func reply(_ work: @escaping @Sendable (InputCancellation) -> Result<Value, AckError>) -> CommandResult {
            .deferred(
                DeferredReply(work: work) { result, context throws(AckError) in try finish(try result.get(), &context) }
            )
        }
        if let scan = Self.remoteScan(context.arguments[0], context, stream) { return reply(scan) }
        let uri = try DatabaseCommands.relativeURI(context.arguments[0], context: context)
        let database = try DatabaseCommands.database(context)
        guard database.song(at: uri) != nil, let root = context.services.options.musicDirectory, let file else {
            throw AckError(.noExist, "No such song")
        }
        let mounted = context.services.library?.mountedURI(for: uri)
        if let mounted, URIScheme.hasScheme(mounted) {
            guard let scan = Self.remoteScan(mounted, context, stream) else { throw AckError(.noExist, "No such song") }
            return reply(scan)
        }
        let path = mounted ?? root + "/" + uri
        return reply { _ in Self.readSongFile(path, with: file) }
    }

    /// The lines `readcomments` prints for `pairs`: `name: value` for names of ASCII letters, `_` and `-`
    /// starting with a letter and values without control characters, as `mpd` filters them.
    static func commentLines(_ pairs: [(name: String, value: String)]) -> String {
        func isLetter(_ byte: UInt8) -> Bool {
            (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
        }
        var text = ""
        for (name, value) in pairs {
            let nameBytes = Array(name.utf8)
            guard let first = nameBytes.first, isLetter(first),
                nameBytes.allSatisfy({ isLetter($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }),
                value.utf8.allSatisfy({ $0 >= 0x20 })
            else { continue }
            text += "\(name): \(value)\n"
        }
        return text
    }

    /// The work that opens the URL `uri` off the loop and runs `read` over it (`mpd`'s `TagScanStream`), when an
    /// input plugin opens its scheme and the daemon can read streams; `nil` otherwise.
    private static func remoteScan<Value: Sendable>(
        _ uri: String, _ context: CommandContext,
        _ read: (@Sendable (any InputStream) throws(StreamReadError) -> Value)?
    ) -> (@Sendable (InputCancellation) -> Result<Value, AckError>)? {
        guard let read, let opener = QueueCommands.remoteOpener(for: uri, options: context.services.options) else {
            return nil
        }
        return { cancellation in
            Result { () throws(AckError) in
                let input: any InputStream
                do throws(InputError) {
                    input = try opener(uri, cancellation)
                } catch {
                    throw AckError(error.isSystemError ? .system : .unknown, error.mpdMessage)
                }
                do throws(StreamReadError) {
                    return try read(input)
                } catch {
                    switch error {
                    case .notRecognized: throw AckError(.noExist, "Failed to load file")
                    case .failed(let message): throw AckError(.unknown, message)
                    }
                }
            }
        }
    }

    static func readpicture(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        let offset = Int(try ArgumentParser.unsigned(context.arguments[1]))
        let options = context.services.options
        return try Self.scanAny(context, stream: options.streamPictureReader, file: options.pictureReader) {
            picture, context throws(AckError) in
            try Self.writePicture(picture, offset: offset, context: context)
        }
    }

    /// `readpicture`'s reply: the chunk of `picture` at `offset`, or nothing (which clients read as "no
    /// picture") when there is none.
    private static func writePicture(_ picture: Picture?, offset: Int, context: CommandContext) throws(AckError)
        -> CommandResult
    {
        guard let picture else { return .ok }
        if offset > picture.data.count { throw AckError(.arg, "Bad file offset") }
        let end = offset + min(picture.data.count - offset, context.session.binaryLimit)
        writeChunk(
            size: picture.data.count, chunk: picture.data[offset..<end], type: picture.mimeType, context: context)
        return .ok
    }

    /// What `read` finds in the song file at `path`, or `mpd`'s error: the file cannot be opened, or `read` fails.
    /// Blocks.
    private static func readSongFile<Value: Sendable>(
        _ path: String, with read: (String) throws -> Value
    ) -> Result<Value, AckError> {
        Result { () throws(AckError) in
            try Self.requireReadable(path)
            do {
                return try read(path)
            } catch {
                throw AckError(.noExist, "Failed to load file")
            }
        }
    }

    /// `mpd` opens the song's file before reading its comments or picture: a file that cannot be opened (gone
    /// since the last update, or a song inside a container file, whose path is no file) is a system error.
    static func requireReadable(_ path: String) throws(AckError) {
        do {
            try FileDescriptor.openForReading(path).close()
        } catch {
            throw AckError(.system, "Failed to open '\(path)': \(error.errno)")
        }
    }
}
