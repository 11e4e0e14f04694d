// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Model
import RawText
import Zlib

/// `mpd`'s own database file: the "simple" database plugin's text format (format 2, as `mpd` 0.23.12 writes
/// and reads it), plain or gzip-compressed.
///
/// ```
/// info_begin
/// format: 2
/// mpd_version: 0.23.12
/// fs_charset: UTF-8
/// tag: Artist                      one line per enabled tag type (metadata_to_use)
/// info_end
/// directory: NAME                  per sub-directory, children first, then songs, then playlists
/// type: container                  (only for container, archive and playlist directories)
/// mtime: SECONDS
/// begin: PATH
/// …                                its contents, the same way
/// end: PATH
/// song_begin: NAME
/// Target: ../album.flac            (a cue sheet's track: the file it names, relative to the sheet's directory)
/// Range: 2000-4493                 (its milliseconds of that file; "4493-" to the end)
/// Time: 215.046000                 printf's %f of the seconds
/// Playlist: yes                    (a cue sheet in the tags)
/// Artist: VALUE                    the tags, in the song's order
/// Format: 44100:16:2
/// mtime: SECONDS
/// song_end
/// playlist_begin: NAME
/// mtime: SECONDS
/// playlist_end
/// ```
///
/// Reading follows `mpd`'s reader (`db_load_internal`, `directory_load`, `song_load`): a line may end in
/// "\r\n"; a value starts after the colon and its leading blanks; a tag type this configuration does not use
/// or an empty value is dropped; values get `mpd`'s clean-up; the lengths are `mpd`'s (seconds × 1000,
/// truncated); a file from another `fs_charset`, with another format number or lacking an enabled tag type
/// is refused as `mpd` refuses it. Where `mpd` would load what a truncated file holds, this reader refuses
/// it (the caller then rescans), and it refuses names no scan produces ("", ".", "..", or with "/"). A cue
/// sheet's directory (`type: playlist`) holds tracks with a `Target:` and a `Range:` and the sheet's own tags,
/// completed from the song they name once everything is read. What Fermata's library has no place for is left
/// out: the virtual directories `mpd` makes of archives (`type: archive`). What Fermata's own database keeps
/// and this format has no line for (`mpd` 0.23.12's `song_save` and `tag_save` write none) is not written and
/// comes back unknown: the song size (-1; an update then compares the mtime alone, as `mpd` does), the
/// ReplayGain (the player reads it from the file when the song plays, as `mpd`'s decoders do) and the embedded
/// picture flag (no command shows it: `readpicture` and `albumart` open the file, as with `mpd`).
///
/// Pure; any thread.
public enum MPDDatabaseFile {
    /// The format number written (`mpd` 0.23's `DB_FORMAT`); 1 and 2 are read.
    public static let format = 2
    /// What `mpd_version:` says.
    public static let writerVersion = "0.23.12 (written by Fermata)"
    /// The largest inflated file accepted.
    public static let inflatedLimit = 1 << 31
    /// The deepest directory accepted: a path of more levels would not fit Linux's `PATH_MAX` (4096 bytes).
    public static let maximumDepth = 2048

    /// Why a file was refused; the message is `mpd`'s where it has one.
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// What was wrong.
        public let message: String

        init(_ message: String) { self.message = message }

        public var description: String { self.message }
    }

    /// The snapshot in `data` (a whole file, gzip-compressed or not).
    ///
    /// - Throws: `Failure` when it is refused.
    public static func decode(
        _ data: [UInt8], tags: TagMask, fsCharset: String = "UTF-8", updateTime: Int64
    ) throws(Failure) -> Database {
        var text = data
        if Gzip.isCompressed(data) {
            do {
                text = try Gzip.inflate(data, limit: Self.inflatedLimit)
            } catch {
                throw Failure("\(error)")
            }
        }
        var parser = Parser(text: text, tags: tags)
        return try parser.database(fsCharset: fsCharset, updateTime: updateTime)
    }

    // MARK: - Writing

    /// The file for `database`: its text, gzip-compressed when `compress` is set (as `mpd` writes it unless
    /// its `database` block says `compress "no"`).
    ///
    /// - Throws: `GzipError` when zlib fails.
    public static func encoded(
        _ database: Database, tags: TagMask, fsCharset: String = "UTF-8", compress: Bool = true
    ) throws(GzipError) -> [UInt8] {
        var writer = TextWriter(compress: compress)
        Self.write(database, tags: tags, fsCharset: fsCharset, to: &writer)
        return try writer.finish()
    }

    /// Writes the whole file to `writer`.
    private static func write(_ database: Database, tags: TagMask, fsCharset: String, to out: inout TextWriter) {
        out.line("info_begin")
        out.line("format: \(Self.format)")
        out.line("mpd_version: \(Self.writerVersion)")
        out.line("fs_charset: \(fsCharset)")
        for type in TagType.allCases where tags.contains(type) { out.line("tag: \(type.name)") }
        out.line("info_end")
        guard !database.directories.isEmpty else { return }
        Self.writeContents(of: 0, database, to: &out)
    }

    /// A directory's children (each with its header and contents), songs and playlists; iterative, so that no
    /// depth of directories can exhaust the stack.
    private static func writeContents(of root: Int32, _ database: Database, to out: inout TextWriter) {
        // Each frame: a directory and how many of its children are written.
        var stack: [(directory: Int32, next: Int)] = [(root, 0)]
        while let top = stack.last {
            let directory = database.directories[Int(top.directory)]
            if top.next < directory.children.count {
                stack[stack.count - 1].next += 1
                let childIndex = directory.children[top.next]
                let child = database.directories[Int(childIndex)]
                let name = RawText.encode(Database.lastComponent(of: child.path))
                out.bytes("directory: ", name)
                if child.device == TreeDirectory.containerDevice { out.line("type: container") }
                if child.device == TreeDirectory.playlistDevice { out.line("type: playlist") }
                if child.modificationTime > 0 { out.line("mtime: \(child.modificationTime)") }
                out.bytes("begin: ", RawText.encode(child.path))
                stack.append((childIndex, 0))
                continue
            }
            Self.writeSongs(of: directory, database.songs, to: &out)
            for playlist in directory.playlists {
                out.bytes("playlist_begin: ", RawText.encode(playlist.name))
                out.line("mtime: \(playlist.modificationTime)")
                out.line("playlist_end")
            }
            if top.directory != root { out.bytes("end: ", RawText.encode(directory.path)) }
            stack.removeLast()
        }
    }

    private static func writeSongs(of directory: Database.Directory, _ songs: SongTable, to out: inout TextWriter) {
        for song in directory.songs {
            songs.withNameBytes(song) { out.bytes("song_begin: ", $0) }
            if let virtual = songs.virtualSong(song) {
                Self.writeTrack(virtual, to: &out)
                continue
            }
            if let milliseconds = songs.durationMilliseconds(song) {
                // printf's "%f" of milliseconds / 1000: exactly the three digits, then zeros.
                let fraction = milliseconds % 1000
                let digits = fraction < 10 ? "00\(fraction)" : fraction < 100 ? "0\(fraction)" : "\(fraction)"
                out.line("Time: \(milliseconds / 1000).\(digits)000")
            }
            if songs.hasPlaylist(song) { out.line("Playlist: yes") }
            for position in songs.tagPositions(song) {
                let type = songs.tagType(at: position)
                songs.values.withBytes(songs.valueNumber(at: position)) { value in
                    // mpd's reader would split a value at a newline and drop an empty one.
                    guard !value.isEmpty, !value.contains(UInt8(ascii: "\n")) else { return }
                    out.tag(type, value)
                }
            }
            if let format = songs.audioFormat(song) { out.line("Format: \(format.description)") }
            // As mpd: a time before the epoch (unknown, as a WebDAV file without `getlastmodified`) is not written.
            if songs.modificationTime(song) >= 0 { out.line("mtime: \(songs.modificationTime(song))") }
            out.line("song_end")
        }
    }

    /// The rest of a cue sheet track's block as `mpd` saves it: `Target`, `Range` in milliseconds, and what the
    /// sheet gave (the table's song is completed from the file it names, which `mpd` does when it reads).
    private static func writeTrack(_ virtual: VirtualSong, to out: inout TextWriter) {
        out.bytes("Target: ", Array(virtual.track.target.utf8))
        let (start, end) = (virtual.track.startMilliseconds, virtual.track.endMilliseconds)
        if end > 0 {
            out.line("Range: \(start)-\(end)")
        } else if start > 0 {
            out.line("Range: \(start)-")
        }
        if let milliseconds = virtual.durationMilliseconds {
            let fraction = milliseconds % 1000
            let digits = fraction < 10 ? "00\(fraction)" : fraction < 100 ? "0\(fraction)" : "\(fraction)"
            out.line("Time: \(milliseconds / 1000).\(digits)000")
        }
        for item in virtual.tags where !item.value.isEmpty && !item.value.contains("\n") {
            var value = item.value
            value.withUTF8 { out.tag(item.type, $0) }
        }
        if let format = virtual.audioFormat { out.line("Format: \(format.description)") }
        out.line("song_end")
    }

    /// Text, buffered and handed to the compressor in pieces, so that a large library's text is never held
    /// whole when it is compressed.
    private struct TextWriter: ~Copyable {
        private var buffer: [UInt8] = []
        private var deflater: Gzip.Deflater?
        private static let flushSize = 256 * 1024

        init(compress: Bool) {
            // zlib's fastest level, not mpd's default: the whole database is written again after every update
            // that changes anything, and compressing it at the default level took a third of such an update.
            self.deflater = compress ? Gzip.Deflater(level: .fastest) : nil
            self.buffer.reserveCapacity(compress ? Self.flushSize + 4096 : 1 << 20)
        }

        mutating func line(_ text: String) {
            self.buffer.append(contentsOf: text.utf8)
            self.buffer.append(UInt8(ascii: "\n"))
            self.flushIfFull()
        }

        mutating func bytes(_ prefix: StaticString, _ bytes: some Collection<UInt8>) {
            prefix.withUTF8Buffer { self.buffer.append(contentsOf: $0) }
            self.buffer.append(contentsOf: bytes)
            self.buffer.append(UInt8(ascii: "\n"))
            self.flushIfFull()
        }

        mutating func tag(_ type: TagType, _ value: UnsafeBufferPointer<UInt8>) {
            self.buffer.append(contentsOf: type.name.utf8)
            self.buffer.append(UInt8(ascii: ":"))
            self.buffer.append(UInt8(ascii: " "))
            self.buffer.append(contentsOf: value)
            self.buffer.append(UInt8(ascii: "\n"))
            self.flushIfFull()
        }

        private mutating func flushIfFull() {
            guard self.buffer.count >= Self.flushSize, self.deflater != nil else { return }
            self.buffer.withUnsafeBufferPointer { self.deflater!.append($0) }
            self.buffer.removeAll(keepingCapacity: true)
        }

        consuming func finish() throws(GzipError) -> [UInt8] {
            guard var deflater = self.deflater.take() else { return self.buffer }
            self.buffer.withUnsafeBufferPointer { deflater.append($0) }
            return try deflater.finish()
        }
    }

    // MARK: - Reading

    /// `mpd`'s reader over the file's text.
    private struct Parser {
        let text: [UInt8]
        let tags: TagMask
        var position = 0

        init(text: [UInt8], tags: TagMask) {
            self.text = text
            self.tags = tags
        }

        /// The next line without its "\n" (and a "\r" before it), cut at a NUL byte as `mpd`'s C strings are;
        /// `nil` at the end. A last line without "\n" counts.
        mutating func nextLine() -> Range<Int>? {
            let count = self.text.count
            guard self.position < count else { return nil }
            let start = self.position
            var end = self.text.withUnsafeBufferPointer { bytes -> Int in
                guard let newline = memchr(bytes.baseAddress! + start, 0x0A, count - start) else { return count }
                return bytes.baseAddress!.distance(to: newline.assumingMemoryBound(to: UInt8.self))
            }
            self.position = end < count ? end + 1 : end
            if end > start && self.text[end - 1] == 0x0D { end -= 1 }
            if let nul = self.text[start..<end].firstIndex(of: 0) { end = nul }
            return start..<end
        }

        func line(_ range: Range<Int>, is word: StaticString) -> Bool {
            word.withUTF8Buffer { self.text[range].elementsEqual($0) }
        }

        /// The rest of the line after `prefix`, if it starts with it.
        func line(_ range: Range<Int>, after prefix: StaticString) -> Range<Int>? {
            prefix.withUTF8Buffer { prefix -> Range<Int>? in
                guard range.count >= prefix.count,
                    self.text[range.lowerBound..<(range.lowerBound + prefix.count)].elementsEqual(prefix)
                else { return nil }
                return (range.lowerBound + prefix.count)..<range.upperBound
            }
        }

        func string(_ range: Range<Int>) -> String { String(decoding: self.text[range], as: UTF8.self) }

        /// The line split at its first colon: the name and the value after its leading blanks (`mpd`'s
        /// `StripLeft`: every byte up to 0x20); `nil` without a colon or with one first.
        func field(_ range: Range<Int>) -> (name: Range<Int>, value: Range<Int>)? {
            guard let colon = self.text[range].firstIndex(of: UInt8(ascii: ":")), colon != range.lowerBound else {
                return nil
            }
            var start = colon + 1
            while start < range.upperBound && self.text[start] <= 0x20 { start += 1 }
            return (range.lowerBound..<colon, start..<range.upperBound)
        }

        func failure(_ message: String, _ range: Range<Int>) -> Failure {
            Failure("\(message): \(RawText.decode(self.text[range]))")
        }

        // MARK: Header

        mutating func database(fsCharset: String, updateTime: Int64) throws(Failure) -> Database {
            guard let first = self.nextLine(), self.line(first, is: "info_begin") else {
                throw Failure("Database corrupted")
            }
            var format = 0
            var foundVersion = false
            var foundCharset = false
            var listed = TagMask.none
            while let line = self.nextLine(), !self.line(line, is: "info_end") {
                if let value = self.line(line, after: "format: ") {
                    // atoi
                    format = Int(Int32(truncatingIfNeeded: CNumbers.strtol(self.text[value], from: 0).value))
                } else if self.line(line, after: "mpd_version: ") != nil {
                    guard !foundVersion else { throw Failure("Duplicate version line") }
                    foundVersion = true
                } else if let value = self.line(line, after: "fs_charset: ") {
                    guard !foundCharset else { throw Failure("Duplicate charset line") }
                    foundCharset = true
                    let charset = self.string(value)
                    guard charset == fsCharset else {
                        throw Failure(
                            "Existing database has charset \"\(charset)\" instead of \"\(fsCharset)\"; discarding database file"
                        )
                    }
                } else if let value = self.line(line, after: "tag: ") {
                    guard let type = TagType(exactName: self.string(value)) else {
                        throw Failure("Unrecognized tag '\(self.string(value))', discarding database file")
                    }
                    listed.insert(type)
                } else {
                    throw self.failure("Malformed line", line)
                }
            }
            guard (1...MPDDatabaseFile.format).contains(format) else {
                throw Failure("Database format mismatch, discarding database file")
            }
            guard self.tags.intersection(listed) == self.tags else {
                throw Failure("Tag list mismatch, discarding database file")
            }
            return try self.directories(updateTime: updateTime)
        }

        // MARK: Directories

        /// A directory being read: its number in the snapshot (`nil` for one that is left out), and the names
        /// of its children and songs so far (a duplicate refuses the file, as in `mpd`).
        struct Frame {
            var index: Int32?
            var children: Set<ArraySlice<UInt8>> = []
            var songs: Set<ArraySlice<UInt8>> = []
        }

        mutating func directories(updateTime: Int64) throws(Failure) -> Database {
            var directories: [Database.Directory] = [
                // mpd saves no time for the root: it has none after a load (a mount's root lists without one).
                Database.Directory(
                    path: "", modificationTime: -1, parent: -1, children: [], songs: 0..<0, playlists: [], inode: 0,
                    device: 0)
            ]
            var children: [[Int32]] = [[]]
            var songs = Songs()
            var stack = [Frame(index: 0)]
            while true {
                guard let line = self.nextLine() else {
                    guard stack.count == 1 else { throw Failure("Unexpected end of file") }
                    break
                }
                if self.line(line, after: "end: ") != nil {
                    // The root's contents end here too: mpd reads no further.
                    if stack.count == 1 { break }
                    stack.removeLast()
                } else if let name = self.line(line, after: "directory: ") {
                    let nameBytes = self.text[name]
                    guard stack[stack.count - 1].children.insert(nameBytes).inserted else {
                        throw self.failure("Duplicate subdirectory", name)
                    }
                    try Self.checkName(nameBytes)
                    // No time (as mpd keeps one only when the file has a positive `mtime`): not listed.
                    var modificationTime: Int64 = -1
                    var device: UInt64 = 0
                    var type = 0..<0
                    while true {
                        guard let header = self.nextLine() else { throw Failure("Unexpected end of file") }
                        if self.line(header, after: "begin: ") != nil { break }
                        if let value = self.line(header, after: "mtime: ") {
                            let seconds = CNumbers.strtoul(self.text[value], from: 0).value
                            modificationTime = seconds > 0 ? Int64(truncatingIfNeeded: seconds) : -1
                        } else if let value = self.line(header, after: "type: ") {
                            type = value
                            device =
                                self.line(value, is: "container")
                                ? TreeDirectory.containerDevice
                                : self.line(value, is: "playlist") ? TreeDirectory.playlistDevice : 0
                        } else {
                            throw self.failure("Malformed line", header)
                        }
                    }
                    guard stack.count <= MPDDatabaseFile.maximumDepth else {
                        throw Failure("Directories nested too deep")
                    }
                    var frame = Frame(index: nil)
                    // Archives as directories have no place in Fermata's library.
                    let leftOut = self.line(type, is: "archive")
                    if let parent = stack[stack.count - 1].index, !leftOut {
                        let index = Int32(directories.count)
                        let parentPath = directories[Int(parent)].path
                        let last = RawText.decode(nameBytes)
                        directories.append(
                            Database.Directory(
                                path: parentPath.isEmpty ? last : parentPath + "/" + last,
                                modificationTime: modificationTime, parent: parent, children: [], songs: 0..<0,
                                playlists: [], inode: 0, device: device))
                        children.append([])
                        children[Int(parent)].append(index)
                        frame.index = index
                    }
                    stack.append(frame)
                } else if let name = self.line(line, after: "song_begin: ") {
                    let nameBytes = self.text[name]
                    guard stack[stack.count - 1].songs.insert(nameBytes).inserted else {
                        throw self.failure("Duplicate song", name)
                    }
                    try Self.checkName(nameBytes)
                    try self.song(name: name, directory: stack[stack.count - 1].index, into: &songs)
                } else if let name = self.line(line, after: "playlist_begin: ") {
                    let playlist = try self.playlist(name: name)
                    if let index = stack[stack.count - 1].index {
                        let directory = directories[Int(index)]
                        var playlists = directory.playlists
                        // mpd's UpdateOrInsert: a second entry of one name updates the first.
                        if let existing = playlists.firstIndex(where: { ByteString.sameBytes($0.name, playlist.name) })
                        {
                            playlists[existing].modificationTime = playlist.modificationTime
                        } else {
                            playlists.append(playlist)
                        }
                        directories[Int(index)] = Database.Directory(
                            path: directory.path, modificationTime: directory.modificationTime,
                            parent: directory.parent, children: [], songs: 0..<0, playlists: playlists, inode: 0,
                            device: directory.device)
                    }
                } else {
                    throw self.failure("Malformed line", line)
                }
            }
            return try songs.database(
                text: self.text, directories: directories, children: children, updateTime: updateTime)
        }

        /// Refuses a name no scan produces: the snapshot could not tell its path from others.
        static func checkName(_ name: ArraySlice<UInt8>) throws(Failure) {
            guard !name.isEmpty, !name.contains(UInt8(ascii: "/")), !name.elementsEqual(".".utf8),
                !name.elementsEqual("..".utf8)
            else { throw Failure("Invalid name: \(RawText.decode(name))") }
        }

        // MARK: Songs and playlists

        mutating func song(name: Range<Int>, directory: Int32?, into songs: inout Songs) throws(Failure) {
            var song = Songs.Song(
                directory: directory ?? -1, name: name, tags: songs.tagTypes.count..<songs.tagTypes.count,
                // Without an `mtime` line the time is unknown: before the epoch, as mpd's default, so not shown.
                modificationTime: -1, duration: nil, audioFormat: nil, hasPlaylist: false)
            while true {
                guard let line = self.nextLine() else { throw Failure("Unexpected end of file") }
                if self.line(line, is: "song_end") { break }
                guard let (key, value) = self.field(line) else { throw self.failure("unknown line in db", line) }
                if let type = TagNames.type(self.text[key]) {
                    // mpd's tag builder: only enabled types, no empty values, its clean-up.
                    guard self.tags.contains(type), !value.isEmpty, directory != nil else { continue }
                    let number = self.text.withUnsafeBufferPointer { bytes -> Int32 in
                        let raw = UnsafeBufferPointer(rebasing: bytes[value])
                        if Self.isClean(raw) { return songs.builder.values.number(forBytes: raw) }
                        return songs.builder.values.number(for: TagString.fixed(raw))
                    }
                    songs.tagTypes.append(UInt8(type.rawValue))
                    songs.tagValues.append(number)
                } else if self.line(key, is: "Time") {
                    // SignedSongTime::FromS: seconds × 1000 converted to its 32-bit count of milliseconds.
                    let seconds = Self.parseDouble(self.text[value])
                    let milliseconds = (seconds * 1000).rounded(.towardZero)
                    song.duration =
                        milliseconds >= 0 && milliseconds <= Double(Int32.max) ? UInt64(milliseconds) : nil
                } else if self.line(key, is: "Target") {
                    song.target = self.string(value)
                } else if self.line(key, is: "Range") {
                    // strtoul, then after a "-" the end (0 for none).
                    let (start, rest) = CNumbers.strtoul(self.text[value], from: 0)
                    var end: UInt64 = 0
                    if rest < value.count, self.text[value.lowerBound + rest] == UInt8(ascii: "-") {
                        end = UInt64(CNumbers.strtoul(self.text[value], from: rest + 1).value)
                    }
                    song.range = (UInt64(UInt32(truncatingIfNeeded: start)), UInt64(UInt32(truncatingIfNeeded: end)))
                } else if self.line(key, is: "Format") {
                    // A format mpd cannot parse is ignored.
                    song.audioFormat = songs.audioFormat(self.text[value])
                } else if self.line(key, is: "Playlist") {
                    song.hasPlaylist = self.line(value, is: "yes")
                } else if self.line(key, is: "mtime") {
                    // atoi
                    song.modificationTime = Int64(
                        Int32(truncatingIfNeeded: CNumbers.strtol(self.text[value], from: 0).value))
                } else {
                    throw self.failure("unknown line in db", line)
                }
            }
            guard directory != nil else { return }
            song.tags = song.tags.lowerBound..<songs.tagTypes.count
            songs.list.append(song)
        }

        mutating func playlist(name: Range<Int>) throws(Failure) -> TreePlaylist {
            var playlist = TreePlaylist(name: RawText.decode(self.text[name]), modificationTime: 0)
            while true {
                guard let line = self.nextLine() else { throw Failure("Unexpected end of file") }
                if self.line(line, is: "playlist_end") { return playlist }
                guard let (key, value) = self.field(line), self.line(key, is: "mtime") else {
                    throw self.failure("unknown line in db", line)
                }
                playlist.modificationTime = CNumbers.strtol(self.text[value], from: 0).value
            }
        }

        /// Whether `value` is what `mpd`'s clean-up leaves as it is: ASCII without control characters (nearly
        /// every value), or valid UTF-8 without them.
        static func isClean(_ value: UnsafeBufferPointer<UInt8>) -> Bool {
            var ascii = true
            for byte in value {
                if byte < 0x20 { return false }
                if byte >= 0x80 { ascii = false }
            }
            return ascii
                || RawText.validUTF8(value) != nil && TagString.fixed(value).utf8.elementsEqual(value)
        }

        /// `strtod` on the longest numeric prefix (sign, digits, one point, an exponent); 0 when there is none.
        static func parseDouble(_ text: ArraySlice<UInt8>) -> Double {
            var index = text.startIndex
            while index < text.endIndex && CNumbers.isSpace(text[index]) { index += 1 }
            let start = index
            if index < text.endIndex && (text[index] == UInt8(ascii: "-") || text[index] == UInt8(ascii: "+")) {
                index += 1
            }
            var digits = 0
            while index < text.endIndex && text[index] &- 0x30 < 10 {
                index += 1
                digits += 1
            }
            if index < text.endIndex && text[index] == UInt8(ascii: ".") {
                index += 1
                while index < text.endIndex && text[index] &- 0x30 < 10 {
                    index += 1
                    digits += 1
                }
            }
            guard digits > 0 else { return 0 }
            var end = index
            if index < text.endIndex && (text[index] | 0x20) == UInt8(ascii: "e") {
                var exponent = index + 1
                if exponent < text.endIndex
                    && (text[exponent] == UInt8(ascii: "-") || text[exponent] == UInt8(ascii: "+"))
                {
                    exponent += 1
                }
                if exponent < text.endIndex && text[exponent] &- 0x30 < 10 {
                    while exponent < text.endIndex && text[exponent] &- 0x30 < 10 { exponent += 1 }
                    end = exponent
                }
            }
            return Double(String(decoding: text[start..<end], as: UTF8.self)) ?? 0
        }
    }

    /// Tag types by their names in the file (`mpd`'s `tag_name_parse`: exact, case-sensitive).
    private enum TagNames {
        /// Each type's name, by the name's length.
        static let byLength: [[(name: [UInt8], type: TagType)]] = {
            var table = [[(name: [UInt8], type: TagType)]](repeating: [], count: 64)
            for type in TagType.allCases where type.name.utf8.count < 64 {
                table[type.name.utf8.count].append((Array(type.name.utf8), type))
            }
            return table
        }()

        static func type(_ name: ArraySlice<UInt8>) -> TagType? {
            guard name.count < 64 else { return nil }
            for entry in Self.byLength[name.count] where entry.name.elementsEqual(name) { return entry.type }
            return nil
        }
    }

    /// The songs read so far, in file order, and how they become the snapshot's table.
    private struct Songs {
        struct Song {
            var directory: Int32
            var name: Range<Int>
            /// Positions in `tagTypes` and `tagValues`.
            var tags: Range<Int>
            var modificationTime: Int64
            var duration: UInt64?
            var audioFormat: AudioFormat?
            var hasPlaylist: Bool
            /// For a cue sheet track: the file it names (`Target`) and its range (`Range`, milliseconds).
            var target: String? = nil
            var range: (start: UInt64, end: UInt64) = (0, 0)
        }

        var list: [Song] = []
        var tagTypes: [UInt8] = []
        var tagValues: [Int32] = []
        var builder = SongTable.Builder()
        /// The last format text and what it parsed to: songs of a library share a few formats.
        private var lastFormat: (text: [UInt8], format: AudioFormat?)?

        mutating func audioFormat(_ text: ArraySlice<UInt8>) -> AudioFormat? {
            if let last = self.lastFormat, last.text.elementsEqual(text) { return last.format }
            var format: AudioFormat?
            if let mask = try? AudioFormatMask.parse(Array(text), mask: false), let rate = mask.sampleRate,
                let sample = mask.sampleFormat, let channels = mask.channels
            {
                format = AudioFormat(sampleRate: rate, sampleFormat: sample, channels: channels)
            }
            self.lastFormat = (Array(text), format)
            return format
        }

        /// The snapshot: each directory's songs made contiguous, in walk order, in the order the file lists them
        /// (names are ranges of `text`).
        mutating func database(
            text: [UInt8], directories: [Database.Directory], children: [[Int32]], updateTime: Int64
        ) throws(Failure) -> Database {
            let (offsets, order) = countingSort(
                keys: self.list.map(\.directory), items: Array(0..<Int32(self.list.count)),
                keyCount: directories.count)
            self.builder.reserveCapacity(self.list.count)
            for song in order.map({ self.list[Int($0)] }) {
                self.builder.addSong(
                    name: text[song.name], directory: song.directory, modificationTime: song.modificationTime,
                    size: -1, durationMilliseconds: song.duration, audioFormat: song.audioFormat,
                    replayGain: ReplayGainInfo(), hasPicture: false, hasPlaylist: song.hasPlaylist)
                for position in song.tags {
                    self.builder.addTag(
                        TagType(rawValue: Int(self.tagTypes[position]))!, value: self.tagValues[position])
                }
                // Only the songs of a playlist directory are its tracks (elsewhere mpd ignores the lines too).
                if let target = song.target, directories[Int(song.directory)].device == TreeDirectory.playlistDevice {
                    self.builder.setLastVirtual(
                        VirtualSong(
                            track: PlaylistTrack(
                                target: target, startMilliseconds: song.range.start, endMilliseconds: song.range.end),
                            targetURI: nil,
                            tags: song.tags.map {
                                TagItem(
                                    TagType(rawValue: Int(self.tagTypes[$0]))!,
                                    self.builder.values.text(self.tagValues[$0]))
                            }, durationMilliseconds: song.duration, audioFormat: song.audioFormat))
                }
            }
            guard self.builder.fits else { throw Failure("Database too large") }
            var result: [Database.Directory] = []
            result.reserveCapacity(directories.count)
            for (index, directory) in directories.enumerated() {
                result.append(
                    Database.Directory(
                        path: directory.path, modificationTime: directory.modificationTime, parent: directory.parent,
                        children: children[index], songs: offsets[index]..<offsets[index + 1],
                        playlists: directory.playlists, inode: 0, device: directory.device))
            }
            let database = Database(
                directories: result, songs: self.builder.build(directoryPaths: result.map(\.path)),
                updateTime: updateTime)
            // Cue sheet tracks are completed from the files they name, as a snapshot of the tree does it (the
            // file lists a track's directory before that file's song, so only once everything is read).
            guard !database.songs.virtualSongs.isEmpty else { return database }
            return Database(tree: database.makeTree(), updateTime: updateTime, sorted: false)
        }
    }
}
