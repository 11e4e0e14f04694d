// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Library
import Model
import Playback
import RawText

/// Writes songs and directories in `mpd`'s response grammar.
enum SongPrinter {
    /// `2024-01-01T00:00:00Z`: UTC, whole seconds.
    static func iso8601(_ seconds: Int64) -> String {
        var reply = ReplyBuffer(capacity: 20)
        Self.appendISO8601(seconds, to: &reply)
        return String(decoding: reply.bytes, as: UTF8.self)
    }

    /// `Artist: `, `Title: `…: each tag type's key as bytes, by raw value.
    static let tagKeys: [[UInt8]] = TagType.allCases.map { Array("\($0.name): ".utf8) }

    /// `1.044`: milliseconds as seconds with three decimals.
    static func seconds3(_ milliseconds: UInt64) -> String {
        var reply = ReplyBuffer(capacity: 16)
        Self.appendSeconds3(milliseconds, to: &reply)
        return String(decoding: reply.bytes, as: UTF8.self)
    }

    /// Appends `seconds3(milliseconds)`.
    static func appendSeconds3(_ milliseconds: UInt64, to reply: inout ReplyBuffer) {
        reply.write(atMost: Self.seconds3Bound) { Self.putSeconds3(milliseconds, to: &$0) }
    }

    /// Writes `seconds3(milliseconds)`.
    @inline(__always)
    static func putSeconds3(_ milliseconds: UInt64, to writer: inout ByteWriter) {
        writer.put(decimal: milliseconds / 1000)
        writer.put(thousandths: milliseconds)
    }

    /// The longest `seconds3`: 17 digits of seconds, a point and 3 decimals.
    private static let seconds3Bound = 21

    /// Appends the full song block to `reply`: `file` (a URL without its credentials), `Range` (queue songs with a
    /// range), `Last-Modified`, `Format`, visible tags, `Time`, `duration`.
    static func appendSong(
        uri: String, range: String? = nil, modificationTime: Int64?, info: SongInfo, visibleTags: TagMask,
        to reply: inout ReplyBuffer
    ) {
        reply.rawLine("file", PlaylistCommands.withoutCredentials(uri))
        if let range { reply.rawLine("Range", range) }
        Self.appendSongDetails(
            modificationTime: modificationTime, info: info, durationMilliseconds: info.durationMilliseconds,
            visibleTags: visibleTags, to: &reply)
    }

    /// What follows `file` and `Range` in a song block: `Last-Modified`, `Format`, visible tags, `Time`, `duration`.
    private static func appendSongDetails(
        modificationTime: Int64?, info: SongInfo, durationMilliseconds: UInt64?, visibleTags: TagMask,
        to reply: inout ReplyBuffer
    ) {
        // As mpd: none before the epoch.
        if let modificationTime, modificationTime >= 0 {
            Self.appendLastModified(modificationTime, to: &reply)
        }
        if let format = info.audioFormat { reply.appendFormatLine(format) }
        for item in info.tags where visibleTags.contains(item.type) { reply.rawLine(item.type.name, item.value) }
        if let duration = durationMilliseconds { Self.appendTime(duration, to: &reply) }
    }

    /// `Last-Modified: ISO8601`.
    static func appendLastModified(_ seconds: Int64, to reply: inout ReplyBuffer) {
        let date = reply.lastModifiedDate(seconds)
        reply.write(atMost: Self.lastModifiedBound) { Self.putLastModified(seconds, date: date, to: &$0) }
    }

    /// Writes `Last-Modified: ISO8601`; `date` is the date `seconds` falls on (`ReplyBuffer.lastModifiedDate`).
    @inline(__always)
    static func putLastModified(_ seconds: Int64, date: ISO8601Text.Day, to writer: inout ByteWriter) {
        writer.put("Last-Modified: ")
        if !writer.putISO8601(seconds, date: date) { writer.put(bytes: Self.iso8601(seconds).utf8) }
        writer.put(byte: UInt8(ascii: "\n"))
    }

    /// The longest `Last-Modified` line: its key, a year of up to 20 digits and a sign, the rest of the date and
    /// a newline.
    static let lastModifiedBound = 15 + 21 + 16 + 1

    /// `Time:` (whole seconds, rounded) and `duration:` (milliseconds) of a song lasting `milliseconds`.
    static func appendTime(_ milliseconds: UInt64, to reply: inout ReplyBuffer) {
        reply.write(atMost: Self.timeBound) { Self.putTime(milliseconds, to: &$0) }
    }

    /// Writes `Time:` and `duration:` lines.
    @inline(__always)
    static func putTime(_ milliseconds: UInt64, to writer: inout ByteWriter) {
        writer.put("Time: ")
        writer.put(decimal: (milliseconds + 500) / 1000)
        writer.put("\nduration: ")
        Self.putSeconds3(milliseconds, to: &writer)
        writer.put(byte: UInt8(ascii: "\n"))
    }

    /// The longest `Time` and `duration` lines.
    private static let timeBound = 6 + 20 + 11 + Self.seconds3Bound + 1

    /// Appends `iso8601(seconds)`: years 1970 to 9999 (every file's time in practice) by arithmetic
    /// (`ISO8601Text`), others through gmtime_r.
    static func appendISO8601(_ seconds: Int64, to reply: inout ReplyBuffer) {
        if !reply.appendISO8601(seconds) { Self.appendISO8601ByGmtime(seconds, to: &reply) }
    }

    /// `appendISO8601(_:to:)` through the C library's `gmtime_r`: any year it represents, negative ones too.
    static func appendISO8601ByGmtime(_ seconds: Int64, to reply: inout ReplyBuffer) {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        let year = Int64(parts.tm_year) + 1900
        if year < 0 { reply.append(byte: UInt8(ascii: "-")) }
        reply.appendDecimal(year.magnitude)
        func two(_ separator: Unicode.Scalar, _ value: Int32) {
            reply.append(byte: UInt8(ascii: separator))
            reply.appendDecimal(UInt64(value), minimumDigits: 2)
        }
        two("-", parts.tm_mon + 1)
        two("-", parts.tm_mday)
        two("T", parts.tm_hour)
        two(":", parts.tm_min)
        two(":", parts.tm_sec)
        reply.append(byte: UInt8(ascii: "Z"))
    }

    /// A database song's full block, written from the table's columns (what `appendSong(uri:…)` writes for
    /// `songs[song]`); without `Format` when `format` is false. A song holding a cue sheet is followed by its
    /// `playlist:` line, as `mpd`'s database printer adds it (sorted results too).
    /// A queue song (`playlistinfo`) or a stored playlist's (`listplaylistinfo`) has no `playlist:` line
    /// (`playlistLine` false).
    ///
    /// The lines up to `duration` are copied straight into the reply (one `ByteWriter` over room for the block's
    /// size bound); the `file: DIR/` start and the `Format` line are made once for a run of songs that share them.
    static func appendSong(
        _ song: Int32, of songs: SongTable, visibleTags: TagMask, format: Bool = true, playlistLine: Bool = true,
        paths: TagValueTable? = nil, to reply: inout ReplyBuffer
    ) {
        let prefix = Self.filePrefix(song, of: songs, paths: paths, in: &reply)
        let formatLine = format ? songs.audioFormat(song).map { reply.formatLine($0) } : nil
        // A cue track's range in its file. Asked only of a table that has such tracks: otherwise the optional
        // `VirtualSong` is still handled (outlined copies and destroys) for every song.
        let range = songs.hasVirtualSongs ? songs.virtualSong(song).map(\.track) : nil
        let time = songs.modificationTime(song)
        // A cue track whose file is no song of the database (an absolute path) has no time, as in mpd; nor has a
        // song whose time is before the epoch (unknown: a WebDAV file without `getlastmodified`).
        let timed = range == nil ? time >= 0 : time > 0
        let date = timed ? reply.lastModifiedDate(time) : .epoch
        // The keys' one static, read once a song (the escape path's below).
        let lineKeys = Self.tagLineKeys
        let lineBound = lineKeys.longest + 1
        let escapes = songs.values.mayHoldEscapes
        // The table's bound for every song, unless it is large (a table with a long value): then the song's own.
        let largest = Self.largestSizeBound(of: songs, extra: 0, lineBound: lineBound)
        let capacity =
            largest <= Self.sharedBoundLimit
            ? largest : Self.sizeBound(song, of: songs, prefix: prefix.count, lineBound: lineBound)
        reply.write(atMost: capacity) { writer in
            writer.put(bytes: prefix)
            songs.withNameBytes(song) { writer.put(bytes: $0) }
            writer.put(byte: UInt8(ascii: "\n"))
            if let range { Self.putRange(start: range.startMilliseconds, end: range.endMilliseconds, to: &writer) }
            if timed { Self.putLastModified(time, date: date, to: &writer) }
            if let formatLine { writer.put(bytes: formatLine) }
            if escapes {
                let keys = Self.tagKeyBytes
                let keyStarts = Self.tagKeyStarts
                for position in songs.tagPositions(song) {
                    let type = songs.tagType(at: position)
                    guard visibleTags.contains(type) else { continue }
                    writer.put(bytes: keys[keyStarts[type.rawValue]..<keyStarts[type.rawValue + 1]])
                    songs.values.withBytes(songs.valueNumber(at: position)) { value in
                        // `RawText` escapes as their raw byte (only shrinks).
                        if value.contains(RawText.escapeLeadByte) {
                            writer.put(bytes: RawText.encode(String(decoding: value, as: UTF8.self)))
                        } else {
                            writer.put(bytes: value)
                        }
                    }
                    writer.put(byte: UInt8(ascii: "\n"))
                }
            } else {
                songs.putTagLines(of: song, in: visibleTags, keys: lineKeys, to: &writer)
            }
            let played = songs.hasVirtualSongs ? songs.playedMilliseconds(song) : songs.durationMilliseconds(song)
            if let played { Self.putTime(played, to: &writer) }
        }
        if playlistLine { Self.appendPlaylistLine(song, of: songs, to: &reply) }
    }

    /// The blocks of songs `selected[range]`, each what `appendSong(_:of:visibleTags:format:paths:to:)` writes;
    /// with `prefetch`, each song's memory asked for ahead (`SongTable.prefetch`: a sparse or sorted selection).
    ///
    /// A table whose values and paths are the wire's bytes (no escapes), with no cue track or cue sheet and a shared
    /// bound, is written `batchSize` songs to one room: the `Format` lines of a batch are made before it, the rest
    /// copied from the columns, with no per-song setup of the reply. Any other table goes song by song.
    static func appendSongs(
        _ selected: [Int32], _ range: Range<Int>, of songs: SongTable, visibleTags: TagMask, format: Bool,
        paths: TagValueTable?, prefetch: Bool, to reply: inout ReplyBuffer
    ) {
        let lineKeys = Self.tagLineKeys
        let lineBound = lineKeys.longest + 1
        let largest = Self.largestSizeBound(of: songs, extra: 0, lineBound: lineBound)
        guard let paths, !paths.mayHoldEscapes, !songs.values.mayHoldEscapes, !songs.hasVirtualSongs,
            !songs.hasPlaylists, largest <= Self.sharedBoundLimit
        else {
            for position in range {
                if prefetch { songs.prefetch(selected, before: position, paths: paths) }
                Self.appendSong(
                    selected[position], of: songs, visibleTags: visibleTags, format: format, paths: paths, to: &reply)
            }
            return
        }
        var days = reply.days
        // The `Format` lines of the formats seen, end to end, and where each starts; the line of each song of a
        // batch (-1: none).
        var formats: [AudioFormat] = []
        var formatText: [UInt8] = []
        var formatStarts: [Int] = [0]
        var batchFormats = [Int](repeating: -1, count: Self.batchSize)
        var start = range.lowerBound
        while start < range.upperBound {
            // As many songs as the reply's buffer has room for already (at least one): room taken beyond its
            // capacity makes it grow, a copy of all it holds, for room the songs mostly do not fill.
            let room = reply.bytes.capacity - reply.bytes.count
            let batch = start..<min(range.upperBound, start + max(1, min(Self.batchSize, room / largest)))
            if format {
                for position in batch {
                    var index = -1
                    if let songFormat = songs.audioFormat(selected[position]) {
                        if let known = formats.firstIndex(of: songFormat) {
                            index = known
                        } else {
                            index = formats.count
                            formats.append(songFormat)
                            formatText += reply.formatLine(songFormat)
                            formatStarts.append(formatText.count)
                        }
                    }
                    batchFormats[position - batch.lowerBound] = index
                }
            }
            reply.write(atMost: batch.count * largest) { writer in
                for position in batch {
                    if prefetch { songs.prefetch(selected, before: position, paths: paths) }
                    let song = selected[position]
                    writer.put("file: ")
                    paths.withBytes(songs.directory(song)) { path in
                        if !path.isEmpty {
                            writer.put(bytes: path)
                            writer.put(byte: UInt8(ascii: "/"))
                        }
                    }
                    songs.withNameBytes(song) { writer.put(bytes: $0) }
                    writer.put(byte: UInt8(ascii: "\n"))
                    let time = songs.modificationTime(song)
                    if time >= 0 { Self.putLastModified(time, date: days.date(of: time), to: &writer) }
                    if format {
                        let index = batchFormats[position - batch.lowerBound]
                        if index >= 0 { writer.put(bytes: formatText[formatStarts[index]..<formatStarts[index + 1]]) }
                    }
                    songs.putTagLines(of: song, in: visibleTags, keys: lineKeys, to: &writer)
                    if let duration = songs.durationMilliseconds(song) { Self.putTime(duration, to: &writer) }
                }
            }
            start = batch.upperBound
        }
        reply.days = days
    }

    /// The most songs `appendSongs` writes to one room.
    private static let batchSize = 32

    /// Every tag type's key (`tagKeys`) end to end, and where each starts, by raw value (one more at the end).
    static let tagKeyBytes: [UInt8] = Self.tagKeys.flatMap { $0 }
    static let tagKeyStarts: [Int] = Self.tagKeys.reduce(into: [0]) { $0.append($0.last! + $1.count) }
    /// The same keys in slots of 32 bytes, by raw value.
    static let tagLineKeys = LineKeys(Self.tagKeys)

    /// At least as many bytes as `appendSong(song, of: songs, visibleTags:, playlistLine: false, to:)` writes with
    /// any tag mask, for a small part of the work: the `file` line's and every tag value's bytes (`RawText` escapes
    /// only shrink as they are written), each tag line's longest key, and room for every line of bounded width
    /// (`Range`, `Last-Modified`, `Format`, `Time`, `duration`) and `extra` bytes more.
    static func sizeBound(_ song: Int32, of songs: SongTable, extra: Int) -> Int {
        Self.sizeBound(
            song, of: songs, prefix: extra + songs.directoryPath(song).utf8.count, lineBound: Self.tagLineBound)
    }

    /// `sizeBound(song, of: songs, extra: prefix)` without the directory's path (`prefix` counts it: the `file:`
    /// line's start).
    @inline(__always)
    private static func sizeBound(_ song: Int32, of songs: SongTable, prefix: Int, lineBound: Int) -> Int {
        let tags = songs.tagByteCount(song)
        return prefix + Self.fixedLinesBound + songs.withNameBytes(song) { $0.count } + tags.values * lineBound
            + tags.bytes
    }

    /// At least as many bytes as `sizeBound(song, of: songs, extra: extra)` for every song of `songs`, from the
    /// table's `extremes`: the longest directory path and name, and the most tags each as long as the longest value.
    static func largestSizeBound(of songs: SongTable, extra: Int) -> Int {
        Self.largestSizeBound(of: songs, extra: extra, lineBound: Self.tagLineBound)
    }

    /// `largestSizeBound(of:extra:)` with `tagLineBound` read by the caller.
    @inline(__always)
    private static func largestSizeBound(of songs: SongTable, extra: Int, lineBound: Int) -> Int {
        let extremes = songs.extremes
        return extra + 7 + extremes.directoryPath + extremes.name + Self.fixedLinesBound + extremes.tags
            * (lineBound + extremes.value)
    }

    /// The largest `largestSizeBound` a song block's room is taken from (a reply buffer makes that much room for
    /// each block it writes).
    private static let sharedBoundLimit = 1 << 14

    /// The longest tag key with its `: ` and the line's newline.
    private static var tagLineBound: Int { Self.tagLineKeys.longest + 1 }
    /// `file: `, `/` and a newline; `Range` (two 20-digit numbers of seconds with three decimals), `Last-Modified`
    /// (a 64-bit year), `Format` (rates, bits and channels of 32 bits), `Time` and `duration` (20 digits), and
    /// slack.
    private static let fixedLinesBound = 512

    /// `Range: START-END` (`START-` without an end); nothing for a whole file.
    static func appendRange(start: UInt64, end: UInt64, to reply: inout ReplyBuffer) {
        reply.write(atMost: Self.rangeBound) { Self.putRange(start: start, end: end, to: &$0) }
    }

    /// Writes `appendRange`'s line.
    @inline(__always)
    static func putRange(start: UInt64, end: UInt64, to writer: inout ByteWriter) {
        guard start > 0 || end > 0 else { return }
        writer.put("Range: ")
        Self.putSeconds3(start, to: &writer)
        writer.put(byte: UInt8(ascii: "-"))
        if end > 0 { Self.putSeconds3(end, to: &writer) }
        writer.put(byte: UInt8(ascii: "\n"))
    }

    /// The longest `Range` line.
    private static let rangeBound = 7 + 2 * Self.seconds3Bound + 2

    /// `file: URI` of a database song, from its directory's path and its name's bytes (no string is made). A
    /// database URI is a relative path: it has no credentials to hide.
    /// `file: DIR/` is made once for a run of songs of one directory (`ReplyBuffer.prefix`).
    static func appendFileLine(_ song: Int32, of songs: SongTable, to reply: inout ReplyBuffer) {
        let prefix = Self.filePrefix(song, of: songs, in: &reply)
        songs.withNameBytes(song) { name in
            reply.write(atMost: prefix.count + name.count + 1) { writer in
                writer.put(bytes: prefix)
                writer.put(bytes: name)
                writer.put(byte: UInt8(ascii: "\n"))
            }
        }
    }

    /// `file:` lines of consecutive songs `run` of one directory, in one write: the `file: DIR/` prefix once, then
    /// each name from the table's bytes. With `playlistLines` (`listall`), a song whose tags hold a cue sheet is
    /// followed by its `playlist:` line. `directory` is the songs' directory when the caller knows it (a listing
    /// does): then no song's record is read for it (a cache miss per run of a whole-library `listall`).
    static func appendFileLines(
        _ run: Range<Int32>, of songs: SongTable, playlistLines: Bool, paths: TagValueTable?,
        directory: Int32? = nil, to reply: inout ReplyBuffer
    ) {
        guard let first = run.first, let last = run.last else { return }
        assert(songs.directory(first) == songs.directory(last), "a run of file: lines spans directories")
        guard !playlistLines || !songs.hasPlaylists || !run.contains(where: { songs.hasPlaylist($0) }) else {
            for song in run {
                Self.appendFileLine(song, of: songs, to: &reply)
                Self.appendPlaylistLine(song, of: songs, to: &reply)
            }
            return
        }
        assert(directory == nil || directory == songs.directory(first), "a run of file: lines in another directory")
        let prefix = Self.filePrefix(first, of: songs, paths: paths, directory: directory, in: &reply)
        let capacity = run.count * (prefix.count + 1) + songs.nameByteCount(of: run)
        reply.write(atMost: capacity) { songs.putNameLines(run, prefix: prefix, to: &$0) }
    }

    /// `file:` lines of songs `selected` (`appendFileLines(_:of:playlistLines:paths:to:)` for each run of consecutive
    /// songs of one directory in it), without `playlist:` lines (`list file`); `paths` the snapshot's
    /// `directoryPathTable()`, when the caller has it.
    static func appendFileLines(
        _ selected: ArraySlice<Int32>, of songs: SongTable, paths: TagValueTable?, to reply: inout ReplyBuffer
    ) {
        var start = selected.startIndex
        while start < selected.endIndex {
            let first = selected[start]
            let directory = songs.directory(first)
            var end = start + 1
            while end < selected.endIndex && selected[end] == first + Int32(end - start)
                && songs.directory(selected[end]) == directory
            {
                end += 1
            }
            Self.appendFileLines(
                first..<(first + Int32(end - start)), of: songs, playlistLines: false, paths: paths, to: &reply)
            start = end
        }
    }

    /// `file:` lines of the table's songs `range`, in order, without `playlist:` lines (a whole library's `list
    /// file`): the run of each directory is the range its record holds (`Database.forEachDirectoryRun`), not found
    /// song by song.
    static func appendFileLines(
        _ range: Range<Int32>, of database: Database, songs: SongTable, paths: TagValueTable?,
        to reply: inout ReplyBuffer
    ) {
        database.forEachDirectoryRun(in: range) { run, directory in
            Self.appendFileLines(run, of: songs, playlistLines: false, paths: paths, directory: directory, to: &reply)
        }
    }

    /// `file: DIR/` for song `song`, made once for a run of songs of one directory (`ReplyBuffer.prefix`); from the
    /// bytes of `paths` (the snapshot's `directoryPathTable()`) when it is given and they are the wire's.
    @inline(__always)
    private static func filePrefix(
        _ song: Int32, of songs: SongTable, paths: TagValueTable? = nil, directory known: Int32? = nil,
        in reply: inout ReplyBuffer
    ) -> [UInt8] {
        let directory = known ?? songs.directory(song)
        return reply.prefix(key: directory) { prefix in
            if let paths, !paths.mayHoldEscapes {
                paths.withBytes(directory) { path in
                    prefix.append(writingAtMost: 7 + path.count) { writer in
                        writer.put("file: ")
                        if !path.isEmpty {
                            writer.put(bytes: path)
                            writer.put(byte: UInt8(ascii: "/"))
                        }
                    }
                }
                return
            }
            let path = songs.directoryPath(song)
            prefix.append(writingAtMost: 7 + path.utf8.count) { writer in
                writer.put("file: ")
                if !path.isEmpty {
                    writer.put(raw: path)
                    writer.put(byte: UInt8(ascii: "/"))
                }
            }
        }
    }

    /// `directory: PATH` and, with a `time`, its `Last-Modified` line; nothing for the root ("").
    static func appendDirectory(_ path: String, time: Int64?, to reply: inout ReplyBuffer) {
        Self.appendDirectory(bytes: RawText.encode(path), time: time, to: &reply)
    }

    /// `appendDirectory(_:time:to:)` for a path given as the bytes it has on the wire.
    static func appendDirectory(bytes path: some Collection<UInt8>, time: Int64?, to reply: inout ReplyBuffer) {
        guard !path.isEmpty else { return }
        let modified = time.map { ($0, reply.lastModifiedDate($0)) }
        reply.write(atMost: Self.directoryBound(path.count, modified: time != nil)) { writer in
            Self.putDirectory(path, modified: modified, to: &writer)
        }
    }

    /// The most bytes `putDirectory` writes for a path of `count` bytes.
    static func directoryBound(_ count: Int, modified: Bool) -> Int {
        11 + count + 1 + (modified ? Self.lastModifiedBound : 0)
    }

    /// `directory: PATH` and, when given, its `Last-Modified:` (the time and its civil date).
    static func putDirectory(
        _ path: some Collection<UInt8>, modified: (seconds: Int64, date: ISO8601Text.Day)?,
        to writer: inout ByteWriter
    ) {
        writer.put("directory: ")
        writer.put(bytes: path)
        writer.put(byte: UInt8(ascii: "\n"))
        if let modified { Self.putLastModified(modified.seconds, date: modified.date, to: &writer) }
    }

    /// `playlist: URI` for a song whose tags hold a cue sheet (`mpd`'s `has_playlist`); nothing otherwise.
    static func appendPlaylistLine(_ song: Int32, of songs: SongTable, to reply: inout ReplyBuffer) {
        guard songs.hasPlaylist(song) else { return }
        reply.rawLine("playlist", songs.uri(song))
    }

    /// Appends a queue song's block (or a playlist entry's, as `listplaylistinfo` prints it) to `reply`: `Range`
    /// when it has one, and `Time`/`duration` of the range.
    static func appendSong(_ song: QueueSong, visibleTags: TagMask, to reply: inout ReplyBuffer) {
        reply.rawLine("file", PlaylistCommands.withoutCredentials(song.uri))
        Self.appendRange(start: song.startMilliseconds, end: song.endMilliseconds, to: &reply)
        Self.appendSongDetails(
            modificationTime: song.modificationTime, info: song.info, durationMilliseconds: song.durationMilliseconds,
            visibleTags: visibleTags, to: &reply)
    }

    /// The snapshot queue songs are printed from: the database, to recognise its songs, and its table, read once
    /// (each read of `Database.songs` copies the table's references).
    final class Snapshot {
        let database: Database
        let songs: SongTable

        init?(_ database: Database?) {
            guard let database else { return nil }
            self.database = database
            self.songs = database.songs
        }
    }

    /// Appends a queue entry's song block, from the snapshot's columns when it is a song of it.
    static func appendSong(
        _ entry: QueueEntry, from snapshot: Snapshot?, visibleTags: TagMask, to reply: inout ReplyBuffer
    ) {
        if case .stored(let store, let song) = entry, let snapshot, store === snapshot.database {
            Self.appendSong(song, of: snapshot.songs, visibleTags: visibleTags, playlistLine: false, to: &reply)
        } else {
            Self.appendSong(entry.song, visibleTags: visibleTags, to: &reply)
        }
    }
}
