// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Posix
import RawText

/// The database file (`db_file`): a `Database` snapshot in a versioned binary format, written atomically.
///
/// The first line is text, `fermata-db <version>`, so any other version is recognised and rejected. Then,
/// little-endian: a 64-bit checksum of everything after it, and the body, whose integers are LEB128
/// varints (signed ones zigzag-encoded) and whose strings are a varint length and the bytes:
///
/// ```
/// updated <time>
/// tags: count, names           the metadata_to_use set it was scanned with
/// values: count, strings       every distinct tag value, once (by bytes)
/// directories: count   songs: count
/// per directory, in walk order (the snapshot's numbering):
///   parent + 1 (0 for the root), name (raw bytes), mtime, inode, device
///   playlists: count, then name, mtime each
///   songs: count, then each in the snapshot's order:
///     name (raw bytes), mtime, size, duration ms + 1 (0: unknown), sample rate + 1 (0: no format)
///     [sample format byte, channels], flags (bit 0: picture; bits 1–4: which ReplayGain values follow; bit 5: a
///     cue sheet in the tags; bit 6: a track of a playlist file's directory)
///     [ReplayGain doubles], tags: count, then (position in the tags list, value number) each
///     [for a track: target, range start and end ms, its own duration ms + 1 (0: none), how many of the tags
///     are its own (the first ones; the rest came from the file it names)]
/// ```
///
/// The snapshot's order (`mpd`'s collated walk) is stored, so loading builds the snapshot directly and
/// sorts nothing. A file that is missing, from another version, scanned with another tag set, or damaged
/// (the checksum, a bound, or a count does not hold) loads as `nil`: the caller then scans everything, and
/// nothing crashes.
public enum DatabaseFile {
    /// The format version written in the first line.
    public static let version = 3

    private static var header: [UInt8] { Array("fermata-db \(Self.version)\n".utf8) }

    /// Writes `database` to `path` atomically: a temporary file, `fsync`, `rename`.
    ///
    /// - Throws: an I/O error; the previous file is then left as it was.
    public static func save(_ database: Database, tags: TagMask, to path: String) throws {
        try Self.write(Self.encoded(database, tags: tags), to: path)
    }

    /// The bytes `save` writes for `database`: header, checksum and body; `updateTime` replaces the snapshot's.
    /// Any thread.
    public static func encoded(_ database: Database, tags: TagMask, updateTime: Int64? = nil) -> [UInt8] {
        let body = Self.encode(database, tags: tags, updateTime: updateTime ?? database.updateTime)
        var out = Self.header
        out.reserveCapacity(out.count + 8 + body.count)
        Writer.appendFixed(Self.checksum(body), to: &out)
        out.append(contentsOf: body)
        return out
    }

    /// Writes bytes from `encoded` to `path` atomically (temporary file, `fsync`, `rename`). Any thread.
    ///
    /// - Throws: an I/O error; the previous file is then left as it was.
    public static func write(_ encoded: [UInt8], to path: String) throws {
        try AtomicFile.write(encoded, toPath: path)
    }

    /// Loads a snapshot saved by `save`, or `nil` when the file is missing, old, scanned with other tags,
    /// or damaged.
    public static func load(from path: String, tags: TagMask) -> Database? {
        guard let data = try? readFileRange(atPath: path, offset: 0, count: .max).bytes else { return nil }
        return Self.decode(data, tags: tags)
    }

    /// The snapshot in `data` (a whole file, or the bytes of `encoded`), or `nil` when it is damaged; with
    /// `markTargets` (the snapshot of an update), the files cue sheet tracks name are hidden (see
    /// `Database.isHidden`). Any thread.
    ///
    /// `alsoHidden` are the URIs of songs hidden before, which stay hidden while they exist: `mpd` 0.23 never
    /// clears the mark of a song it keeps, even once no cue sheet names it.
    public static func decode(
        _ data: [UInt8], tags: TagMask, markTargets: Bool = false, alsoHidden: [String] = []
    ) -> Database? {
        let header = Self.header
        guard data.count >= header.count + 8, data[0..<header.count].elementsEqual(header) else { return nil }
        var reader = Reader(bytes: data, position: header.count)
        guard let stored = try? reader.fixed64() else { return nil }
        guard stored == Self.checksum(data[(header.count + 8)...]) else { return nil }
        return try? reader.database(tags: tags, markTargets: markTargets, alsoHidden: alsoHidden)
    }

    // MARK: - Beside mpd's database

    /// What identifies one version of `db_file` (in `mpd`'s format): a copy of the snapshot in this format,
    /// kept beside it, is used only while `db_file` still has the stamp it was written with. `mpd` writes a
    /// new file (a new inode) each time it saves.
    public struct Stamp: Sendable, Hashable {
        /// Size in bytes.
        public var size: Int64
        /// Modification time, seconds since the epoch.
        public var modificationTime: Int64
        /// Inode number.
        public var inode: UInt64

        /// The stamp of the file `status` describes.
        public init(_ status: FileStatus) {
            self.size = status.size
            self.modificationTime = status.modificationTime
            self.inode = status.inode
        }

        /// The stamp of the file at `path`, or `nil` when there is none.
        public init?(path: String) {
            guard let status = try? FileStatus(path: path) else { return nil }
            self.init(status)
        }

        /// The first line of a stamped file.
        var line: [UInt8] { Array("fermata-stamp \(self.size) \(self.modificationTime) \(self.inode)\n".utf8) }
    }

    /// The companion file's name for `db_file` `path`.
    public static func companionPath(for path: String) -> String { path + ".fermata" }

    /// `encoded` (bytes from `encoded`) with `stamp` before it.
    public static func stamped(_ encoded: [UInt8], _ stamp: Stamp) -> [UInt8] { stamp.line + encoded }

    /// The snapshot in the stamped file at `path`, or `nil` when it is missing, damaged, old, scanned with
    /// other tags, or stamped with anything but `stamp`.
    public static func load(from path: String, tags: TagMask, stamp: Stamp) -> Database? {
        guard let data = try? readFileRange(atPath: path, offset: 0, count: .max).bytes else { return nil }
        let line = stamp.line
        guard data.starts(with: line) else { return nil }
        return Self.decode(Array(data[line.count...]), tags: tags)
    }

    /// Whether `data` (a whole file) starts like this format (of any version).
    public static func recognizes(_ data: [UInt8]) -> Bool { data.starts(with: "fermata-db ".utf8) }

    // MARK: - Writing

    private static func encode(_ database: Database, tags: TagMask, updateTime: Int64) -> [UInt8] {
        let tagList = Array(tags)
        var tagPosition = [UInt8](repeating: .max, count: TagType.allCases.count)
        for (position, type) in tagList.enumerated() { tagPosition[type.rawValue] = UInt8(position) }

        // The songs' value table is written as it is: each distinct value once, by bytes.
        let songs = database.songs
        var out = Writer()
        out.signed(updateTime)
        out.unsigned(tagList.count)
        for type in tagList { out.string(Array(type.name.utf8)) }
        out.unsigned(songs.values.count)
        for number in 0..<Int32(songs.values.count) { songs.values.withBytes(number) { out.string($0) } }

        out.unsigned(database.directories.count)
        out.unsigned(database.songs.count)
        for directory in database.directories {
            out.unsigned(Int(directory.parent) + 1)
            out.string(RawText.encode(Database.lastComponent(of: directory.path)))
            out.signed(directory.modificationTime)
            out.unsigned(directory.inode)
            out.unsigned(directory.device)
            out.unsigned(directory.playlists.count)
            for playlist in directory.playlists {
                out.string(RawText.encode(playlist.name))
                out.signed(playlist.modificationTime)
            }
            out.unsigned(directory.songs.count)
            for song in directory.songs {
                songs.withNameBytes(song) { out.string($0) }
                out.signed(songs.modificationTime(song))
                out.signed(songs.size(song))
                out.unsigned(songs.durationMilliseconds(song).map { $0 &+ 1 } ?? 0)
                if let format = songs.audioFormat(song) {
                    out.unsigned(format.sampleRate + 1)
                    out.bytes.append(Self.sampleFormats.firstIndex(of: format.sampleFormat).map(UInt8.init) ?? 0)
                    out.unsigned(format.channels)
                } else {
                    out.unsigned(0)
                }
                let gain = songs.replayGain(song)
                let gains = [gain.trackGain, gain.trackPeak, gain.albumGain, gain.albumPeak]
                var flags: UInt8 = songs.hasPicture(song) ? 1 : 0
                for (bit, value) in gains.enumerated() where value != nil { flags |= 2 << bit }
                if songs.hasPlaylist(song) { flags |= 0x20 }
                let virtual = songs.virtualSong(song)
                if virtual != nil { flags |= 0x40 }
                out.bytes.append(flags)
                for value in gains { if let value { Writer.appendFixed(value.bitPattern, to: &out.bytes) } }
                let kept = songs.tagPositions(song).filter { tagPosition[songs.tagType(at: $0).rawValue] != .max }
                out.unsigned(kept.count)
                for position in kept {
                    out.bytes.append(tagPosition[songs.tagType(at: position).rawValue])
                    out.unsigned(songs.valueNumber(at: position))
                }
                if let virtual {
                    out.string(Array(virtual.track.target.utf8))
                    out.unsigned(virtual.track.startMilliseconds)
                    out.unsigned(virtual.track.endMilliseconds)
                    out.unsigned(virtual.durationMilliseconds.map { $0 &+ 1 } ?? 0)
                    // Its own tags are the first of the song's (the table holds them completed from the file).
                    out.unsigned(virtual.tags.filter { tagPosition[$0.type.rawValue] != .max }.count)
                }
            }
        }
        return out.bytes
    }

    /// Sample formats by their number in the file.
    private static let sampleFormats: [SampleFormat] = [.s8, .s16, .s24, .s32, .float, .dsd]

    /// A 64-bit checksum of `bytes` (word-wise multiply-rotate; catches truncation and bit flips).
    static func checksum(_ bytes: some Collection<UInt8>) -> UInt64 {
        let compute = { (buffer: UnsafeRawBufferPointer) -> UInt64 in
            var hash: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(buffer.count)
            var offset = 0
            while offset + 8 <= buffer.count {
                let word = UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                hash = (hash ^ word) &* 0x0000_0100_0000_01B3
                hash = (hash << 29) | (hash >> 35)
                offset += 8
            }
            while offset < buffer.count {
                hash = (hash ^ UInt64(buffer[offset])) &* 0x0000_0100_0000_01B3
                offset += 1
            }
            return hash ^ (hash >> 31)
        }
        if let hash = bytes.withContiguousStorageIfAvailable({ compute(UnsafeRawBufferPointer($0)) }) { return hash }
        return Array(bytes).withUnsafeBytes(compute)
    }

    private struct Writer {
        var bytes: [UInt8] = []

        init() { self.bytes.reserveCapacity(1 << 20) }

        mutating func unsigned(_ value: some BinaryInteger) {
            var rest = UInt64(truncatingIfNeeded: value)
            while rest >= 0x80 {
                self.bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
                rest >>= 7
            }
            self.bytes.append(UInt8(rest))
        }

        mutating func signed(_ value: Int64) {
            self.unsigned(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
        }

        mutating func string(_ bytes: some Collection<UInt8>) {
            self.unsigned(bytes.count)
            self.bytes.append(contentsOf: bytes)
        }

        static func appendFixed(_ value: UInt64, to bytes: inout [UInt8]) {
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
        }
    }

    // MARK: - Reading

    /// The file does not hold what it should.
    private struct Damaged: Error {}

    private struct Reader {
        let bytes: [UInt8]
        var position: Int

        mutating func byte() throws(Damaged) -> UInt8 {
            guard self.position < self.bytes.count else { throw Damaged() }
            defer { self.position += 1 }
            return self.bytes[self.position]
        }

        mutating func unsigned() throws(Damaged) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let byte = try self.byte()
                guard shift < 64 else { throw Damaged() }
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
        }

        /// An unsigned varint that must be below `limit`.
        mutating func count(below limit: Int) throws(Damaged) -> Int {
            let value = try self.unsigned()
            guard value < UInt64(limit) else { throw Damaged() }
            return Int(value)
        }

        mutating func signed() throws(Damaged) -> Int64 {
            let raw = try self.unsigned()
            return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
        }

        mutating func fixed64() throws(Damaged) -> UInt64 {
            guard self.position + 8 <= self.bytes.count else { throw Damaged() }
            var value: UInt64 = 0
            for index in 0..<8 { value |= UInt64(self.bytes[self.position + index]) << (8 * index) }
            self.position += 8
            return value
        }

        mutating func slice() throws(Damaged) -> ArraySlice<UInt8> {
            let length = try self.unsigned()
            guard length <= UInt64(self.bytes.count - self.position) else { throw Damaged() }
            let start = self.position
            self.position += Int(length)
            return self.bytes[start..<self.position]
        }

        /// A string stored as its UTF-8.
        mutating func string() throws(Damaged) -> String { String(decoding: try self.slice(), as: UTF8.self) }

        /// A file name stored as its raw bytes: not empty, no "/" or newline (the scan never stores one), not "."
        /// or "..".
        mutating func nameBytes() throws(Damaged) -> ArraySlice<UInt8> {
            let name = try self.slice()
            guard !name.isEmpty, !name.contains(UInt8(ascii: "/")), !name.contains(UInt8(ascii: "\n")),
                !name.elementsEqual(".".utf8), !name.elementsEqual("..".utf8)
            else { throw Damaged() }
            return name
        }

        /// A file name, decoded (see `nameBytes()`).
        mutating func rawName() throws(Damaged) -> String { RawText.decode(try self.nameBytes()) }

        /// A bound for a count of items that each take at least one of the bytes left (and are numbered by
        /// `Int32`).
        private var itemLimit: Int { min(self.bytes.count - self.position + 1, Int(Int32.max)) }

        mutating func database(tags: TagMask, markTargets: Bool, alsoHidden: [String]) throws(Damaged) -> Database {
            let updateTime = try self.signed()
            let tagCount = try self.count(below: TagType.allCases.count + 1)
            var tagList: [TagType] = []
            for _ in 0..<tagCount {
                guard let type = TagType(exactName: Substring(try self.string())) else { throw Damaged() }
                tagList.append(type)
            }
            guard TagMask(tagList) == tags, Set(tagList).count == tagList.count else { throw Damaged() }
            // No count can exceed the bytes left: every item takes at least one.
            let valueCount = try self.count(below: self.itemLimit)
            var songs = SongTable.Builder()
            songs.values.reserveCapacity(valueCount)
            for index in 0..<valueCount {
                // Each value once, valid UTF-8, as they were written: queries rely on one number per value.
                let value = try self.slice()
                let number = value.withUnsafeBufferPointer { bytes -> Int32? in
                    // ASCII (nearly every value) is valid as it is; anything else is checked.
                    guard bytes.allSatisfy({ $0 < 0x80 }) || RawText.validUTF8(bytes) != nil else {
                        return nil
                    }
                    return songs.values.number(forBytes: bytes)
                }
                guard number == Int32(index) else { throw Damaged() }
            }

            let directoryCount = try self.count(below: self.itemLimit)
            let songCount = try self.count(below: self.itemLimit)
            guard directoryCount >= 1 else { throw Damaged() }
            var directories: [Database.Directory] = []
            var children: [[Int32]] = []
            directories.reserveCapacity(directoryCount)
            children.reserveCapacity(directoryCount)
            // A song takes at least 8 bytes: reserve no more than the bytes left can hold.
            songs.reserveCapacity(min(songCount, (self.bytes.count - self.position) / 8))
            // The directories from the root to the last one read: a directory's parent must be among them, as
            // directories are numbered depth first (listings and reused subtrees rely on it).
            var open: [Int] = []
            for index in 0..<directoryCount {
                let parent = try self.count(below: index + 1) - 1
                guard (index == 0) == (parent < 0) else { throw Damaged() }
                while let last = open.last, last != parent { open.removeLast() }
                guard parent < 0 || !open.isEmpty else { throw Damaged() }
                open.append(index)
                // The root's name is empty; every other directory has a file name.
                let name = parent < 0 ? try self.string() : try self.rawName()
                guard parent >= 0 || name.isEmpty else { throw Damaged() }
                let path = parent < 0 ? name : (parent == 0 ? name : directories[parent].path + "/" + name)
                let modificationTime = try self.signed()
                let inode = try self.unsigned()
                let device = try self.unsigned()
                let playlistCount = try self.count(below: self.bytes.count - self.position + 1)
                var playlists: [TreePlaylist] = []
                for _ in 0..<playlistCount {
                    let name = try self.rawName()
                    playlists.append(TreePlaylist(name: name, modificationTime: try self.signed()))
                }
                let ownSongs = try self.count(below: songCount - songs.count + 1)
                let first = Int32(songs.count)
                for _ in 0..<ownSongs {
                    try self.song(in: Int32(index), tags: tagList, valueCount: valueCount, to: &songs)
                }
                directories.append(
                    Database.Directory(
                        path: path, modificationTime: modificationTime, parent: Int32(parent), children: [],
                        songs: first..<Int32(songs.count), playlists: playlists, inode: inode, device: device))
                children.append([])
                if parent >= 0 { children[parent].append(Int32(index)) }
            }
            guard songs.count == songCount, self.position == self.bytes.count, songs.fits else { throw Damaged() }
            for index in directories.indices where !children[index].isEmpty {
                directories[index] = directories[index].with(children: children[index])
            }
            // The files tracks name, from their directory's path.
            for (song, virtual) in songs.virtualSongs {
                let path = directories[Int(songs.directory(of: song))].path
                songs.virtualSongs[song]?.targetURI = PlaylistTrack.resolve(virtual.track.target, from: path)
            }
            let table = songs.build(directoryPaths: directories.map(\.path))
            let hidden = markTargets ? table.virtualSongs.values.compactMap(\.targetURI) + alsoHidden : []
            return Database(directories: directories, songs: table, updateTime: updateTime, hiddenURIs: hidden)
        }

        private mutating func song(
            in directory: Int32, tags: [TagType], valueCount: Int,
            to songs: inout SongTable.Builder
        ) throws(Damaged) {
            let name = try self.nameBytes()
            let modificationTime = try self.signed()
            let size = try self.signed()
            let duration = try self.unsigned()
            var audioFormat: AudioFormat?
            let rate = try self.count(below: Int(Int32.max))
            if rate > 0 {
                let sample = Int(try self.byte())
                guard sample < DatabaseFile.sampleFormats.count else { throw Damaged() }
                let channels = try self.count(below: Int(Int32.max))
                audioFormat = AudioFormat(
                    sampleRate: rate - 1, sampleFormat: DatabaseFile.sampleFormats[sample], channels: channels)
            }
            let flags = try self.byte()
            guard flags < 128 else { throw Damaged() }
            var replayGain = ReplayGainInfo()
            if flags & 0x1E != 0 {
                var gains: [Double?] = []
                for bit in 0..<4 {
                    gains.append(flags & (2 << bit) != 0 ? Double(bitPattern: try self.fixed64()) : nil)
                }
                replayGain = ReplayGainInfo(
                    trackGain: gains[0], trackPeak: gains[1], albumGain: gains[2], albumPeak: gains[3])
            }
            songs.addSong(
                name: name, directory: directory, modificationTime: modificationTime, size: size,
                durationMilliseconds: duration > 0 ? duration - 1 : nil, audioFormat: audioFormat,
                replayGain: replayGain, hasPicture: flags & 1 != 0, hasPlaylist: flags & 0x20 != 0)
            let tagCount = try self.count(below: self.bytes.count - self.position + 1)
            var items: [TagItem] = []
            for _ in 0..<tagCount {
                let position = Int(try self.byte())
                guard position < tags.count else { throw Damaged() }
                let number = try self.count(below: valueCount)
                let type = tags[position]
                songs.addTag(type, value: Int32(number))
                if flags & 0x40 != 0 { items.append(TagItem(type, songs.values.text(Int32(number)))) }
            }
            guard flags & 0x40 != 0 else { return }
            let target = try self.string()
            guard !target.isEmpty else { throw Damaged() }
            let start = try self.unsigned()
            let end = try self.unsigned()
            let ownDuration = try self.unsigned()
            let ownCount = try self.count(below: tagCount + 1)
            let own = Array(items.prefix(ownCount))
            songs.setLastVirtual(
                VirtualSong(
                    track: PlaylistTrack(target: target, startMilliseconds: start, endMilliseconds: end),
                    targetURI: nil, tags: own, durationMilliseconds: ownDuration > 0 ? ownDuration - 1 : nil))
        }
    }
}
