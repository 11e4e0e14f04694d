// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Model
import Posix
import RawText

/// The distinct tag values of a snapshot, each once (by bytes), as numbered UTF-8 byte strings in one buffer.
///
/// A library of 100k songs holds about as many distinct titles and MusicBrainz ids: one buffer costs their
/// bytes, where a `String` each costs a heap object of twice that. Immutable once built; `Sendable`.
public struct TagValueTable: Sendable {
    /// Value `n` is `bytes[offsets[n]..<offsets[n + 1]]`; `padding` zeros follow the last value, so that the first
    /// 64 bytes from any value's start can be loaded whatever its length.
    @usableFromInline let bytes: [UInt8]
    @usableFromInline static let padding = 64
    @usableFromInline let offsets: [UInt32]
    /// Whether some value holds the lead byte of a `RawText` escape (0xF4): when none does, every value's bytes
    /// are its bytes on the wire, with no scan of each value for escapes.
    public let mayHoldEscapes: Bool

    fileprivate init(bytes: [UInt8], offsets: [UInt32]) {
        precondition(bytes.count >= Int(offsets.last!) + Self.padding, "TagValueTable: no padding after the values")
        self.bytes = bytes
        self.offsets = offsets
        self.mayHoldEscapes = bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return false }
            return memchr(base, Int32(RawText.escapeLeadByte), buffer.count) != nil
        }
    }

    /// The number of values.
    public var count: Int { self.offsets.count - 1 }

    /// Value `number`.
    public subscript(number: Int32) -> String {
        self.withBytes(number) { String(decoding: $0, as: UTF8.self) }
    }

    /// The length in bytes of value `number`.
    @inlinable
    public func byteCount(_ number: Int32) -> Int { Int(self.offsets[Int(number) + 1] - self.offsets[Int(number)]) }

    /// Calls `body` with the UTF-8 bytes of value `number`.
    @inlinable
    public func withBytes<Result>(_ number: Int32, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        let start = Int(self.offsets[Int(number)])
        let end = Int(self.offsets[Int(number) + 1])
        return self.bytes.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[start..<end])) }
    }

    /// Whether value `number` is `text`, byte for byte.
    public func value(_ number: Int32, is text: String) -> Bool {
        var text = text
        return text.withUTF8 { wanted in self.withBytes(number) { $0.elementsEqual(wanted) } }
    }

    /// The number of the value whose bytes are `text`'s, if the table holds one (values are numbered by bytes: at
    /// most one is): a scan of the values' lengths, comparing the bytes of those as long as `text`.
    func number(of text: String) -> Int32? {
        var text = text
        return text.withUTF8 { wanted in
            self.bytes.withUnsafeBufferPointer { bytes in
                self.offsets.withUnsafeBufferPointer { offsets in
                    guard let base = bytes.baseAddress else { return wanted.isEmpty && self.count > 0 ? 0 : nil }
                    for number in 0..<self.count where Int(offsets[number + 1] - offsets[number]) == wanted.count {
                        if wanted.isEmpty || memcmp(base + Int(offsets[number]), wanted.baseAddress!, wanted.count) == 0
                        {
                            return Int32(number)
                        }
                    }
                    return nil
                }
            }
        }
    }

    /// Whether value `a` sorts before value `b` by bytes.
    func precedes(_ a: Int32, _ b: Int32) -> Bool {
        self.withBytes(a) { x in self.withBytes(b) { y in x.lexicographicallyPrecedes(y) } }
    }

    /// Builds a table value by value.
    struct Builder {
        private(set) var bytes: [UInt8] = []
        private(set) var offsets: [UInt32] = [0]
        /// The values added with `number(for:)`, found by the hash of their bytes: an open-addressing table of value
        /// numbers (-1 for empty slots), at most half full. No `String` per value: a library's worth of them
        /// would be as many small allocations.
        private var slots: [Int32] = []
        private var interned = 0

        /// The number of `value`, added if it is new.
        mutating func number(for value: String) -> Int32 {
            var value = value
            return value.withUTF8 { self.number(forBytes: $0) }
        }

        /// Value `number` added.
        func text(_ number: Int32) -> String {
            String(
                decoding: self.bytes[Int(self.offsets[Int(number)])..<Int(self.offsets[Int(number) + 1])], as: UTF8.self
            )
        }

        /// No values.
        init() {}

        /// Starts with the values of `table`, numbered as there.
        init(_ table: TagValueTable) {
            self.bytes = Array(table.bytes[..<Int(table.offsets[table.count])])
            self.offsets = table.offsets
            self.interned = table.count
            var capacity = 64
            while capacity < 2 * (table.count + 1) { capacity *= 2 }
            self.growSlots(to: capacity, numbers: 0..<Int32(table.count))
        }

        /// Makes room for `count` values added with `number(for:)` or `number(forBytes:)`.
        mutating func reserveCapacity(_ count: Int) {
            self.offsets.reserveCapacity(count + 1)
            var capacity = max(64, self.slots.count)
            while capacity < 2 * count { capacity *= 2 }
            if capacity > self.slots.count { self.growSlots(to: capacity) }
        }

        /// The number of the value with these UTF-8 bytes, added if it is new.
        mutating func number(forBytes value: UnsafeBufferPointer<UInt8>) -> Int32 {
            if (self.interned + 1) * 2 > self.slots.count { self.growSlots(to: max(64, self.slots.count * 2)) }
            let mask = self.slots.count - 1
            var slot = Self.hash(value) & mask
            while self.slots[slot] >= 0 {
                let number = self.slots[slot]
                if self.bytes(of: number, equal: value) { return number }
                slot = (slot + 1) & mask
            }
            let number = self.append(value)
            self.slots[slot] = number
            self.interned += 1
            return number
        }

        private func bytes(of number: Int32, equal value: UnsafeBufferPointer<UInt8>) -> Bool {
            let range = Int(self.offsets[Int(number)])..<Int(self.offsets[Int(number) + 1])
            return self.bytes.withUnsafeBufferPointer { $0[range].elementsEqual(value) }
        }

        private mutating func growSlots(to capacity: Int) {
            self.growSlots(to: capacity, numbers: self.slots.lazy.filter { $0 >= 0 })
        }

        /// Makes the table of `capacity` slots, of values `numbers`.
        private mutating func growSlots(to capacity: Int, numbers: some Sequence<Int32>) {
            var slots = [Int32](repeating: -1, count: capacity)
            let mask = slots.count - 1
            self.bytes.withUnsafeBufferPointer { bytes in
                for number in numbers {
                    let range = Int(self.offsets[Int(number)])..<Int(self.offsets[Int(number) + 1])
                    var slot = Self.hash(UnsafeBufferPointer(rebasing: bytes[range])) & mask
                    while slots[slot] >= 0 { slot = (slot + 1) & mask }
                    slots[slot] = number
                }
            }
            self.slots = slots
        }

        private static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
            var hasher = Hasher()
            hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
            return hasher.finalize()
        }

        /// Adds a value without looking it up (the caller knows it is new) and returns its number. Check `fits`
        /// after adding: past 4 GiB, offsets wrap.
        @discardableResult
        mutating func append(_ bytes: some Collection<UInt8>) -> Int32 {
            self.bytes.append(contentsOf: bytes)
            self.offsets.append(UInt32(truncatingIfNeeded: self.bytes.count))
            return Int32(self.offsets.count - 2)
        }

        /// Whether the bytes still fit 32-bit offsets.
        var fits: Bool { self.bytes.count <= Int(UInt32.max) && self.offsets.count <= Int(Int32.max) }

        func build() -> TagValueTable {
            // The values, then `TagValueTable.padding` zeros.
            let count = self.bytes.count
            let bytes = [UInt8](unsafeUninitializedCapacity: count + TagValueTable.padding) { buffer, initialized in
                _ = self.bytes.withUnsafeBufferPointer { buffer.initialize(fromContentsOf: $0) }
                buffer[count...].initialize(repeating: 0)
                initialized = buffer.count
            }
            return TagValueTable(bytes: bytes, offsets: self.offsets.compacted())
        }
    }
}

extension Array {
    /// The same elements in a buffer of their size, when this one has much more room than they take (an array
    /// grown by appending has up to twice their size); else itself. A snapshot's columns are kept so: the room
    /// would stay allocated as long as the snapshot, and resident wherever the allocator carved it out of pages
    /// something else had touched (the heap an update job leaves), as `mpd`'s own lists are not.
    func compacted() -> [Element] {
        let spare = (self.capacity - self.count) * MemoryLayout<Element>.stride
        guard spare >= 4096, spare * 16 >= self.count * MemoryLayout<Element>.stride else { return self }
        return [Element](unsafeUninitializedCapacity: self.count) { buffer, initialized in
            initialized = self.withUnsafeBufferPointer { buffer.initialize(fromContentsOf: $0) }
        }
    }
}

/// A track of a playlist file's directory (a cue sheet's track, `mpd`'s virtual song): the file it plays and
/// what the playlist gave, which the database file stores (the table holds it completed from the file).
public struct VirtualSong: Sendable, Hashable {
    /// The file it names and its range.
    public var track: PlaylistTrack
    /// That file's URI when it is a song of the database (what the player opens).
    public var targetURI: String?
    /// The tags the playlist gave.
    public var tags: [TagItem]
    /// The length the playlist gave, if any.
    public var durationMilliseconds: UInt64?
    /// The format the playlist gave, if any.
    public var audioFormat: AudioFormat?

    /// Creates a track.
    public init(
        track: PlaylistTrack, targetURI: String?, tags: [TagItem], durationMilliseconds: UInt64? = nil,
        audioFormat: AudioFormat? = nil
    ) {
        self.track = track
        self.targetURI = targetURI
        self.tags = tags
        self.durationMilliseconds = durationMilliseconds
        self.audioFormat = audioFormat
    }

    /// What the playlist gave, as the tree keeps it.
    public var ownInfo: SongInfo {
        SongInfo(tags: self.tags, durationMilliseconds: self.durationMilliseconds, audioFormat: self.audioFormat)
    }
}

/// Every song of a snapshot, in walk order, stored column-wise: a fixed-size record per song (no references),
/// file names as raw bytes in one buffer, and tags as (type, value number) pairs into a `TagValueTable`.
///
/// The URI of a song is its directory's path and its name; a song's `SongInfo` is built when asked for. The
/// element type, `Database.Song`, is such a copy: hot paths (filters, `list`, song blocks) read the columns in
/// place instead. Immutable once built; `Sendable`.
public struct SongTable: Sendable, RandomAccessCollection {
    /// What a song has besides its name and tags; a plain value.
    @usableFromInline
    struct Record: Sendable {
        @usableFromInline var modificationTime: Int64
        @usableFromInline var size: Int64
        /// Milliseconds + 1; 0 when unknown.
        @usableFromInline var duration: UInt64
        /// Where the tags start in `tagTypes`/`tagValues`.
        @usableFromInline var tagStart: UInt32
        @usableFromInline var directory: Int32
        /// An index into `replayGains`, or -1.
        @usableFromInline var replayGain: Int32
        /// Sample rate + 1; 0 when there is no audio format.
        @usableFromInline var sampleRate: UInt32
        @usableFromInline var channels: UInt32
        @usableFromInline var sampleFormat: SampleFormat
        @usableFromInline var hasPicture: Bool
        @usableFromInline var hasPlaylist: Bool
    }

    @usableFromInline let records: [Record]
    /// File names as raw bytes (`RawText.encode` of the name).
    @usableFromInline let names: [UInt8]
    /// Where each song's name starts in `names`, and one more entry, `names.count`: song `i`'s name is
    /// `nameStarts[i]..<nameStarts[i + 1]`. A column of its own, so a listing of names (`listall`, `list file`)
    /// reads 4 bytes per song, not a record's cache line.
    @usableFromInline let nameStarts: [UInt32]
    /// Whether some song holds a playlist (a cue sheet inside the file; few libraries have one).
    public let hasPlaylists: Bool
    @usableFromInline let tagTypes: [UInt8]
    @usableFromInline let tagValues: [Int32]
    private let replayGains: [ReplayGainInfo]
    /// Each directory's path, for URIs.
    @usableFromInline let directoryPaths: [String]
    /// The distinct tag values.
    public let values: TagValueTable
    /// The songs of playlist files' directories (cue sheet tracks), by song number; empty in most libraries.
    public let virtualSongs: [Int32: VirtualSong]
    /// The longest of the table's names, values and directory paths and the most tags of a song.
    public let extremes: Extremes

    /// The largest of a table's parts, in bytes: what the size of any song's block can be bounded by without a look
    /// at the song (every song of a query's answer is somewhere else in memory).
    public struct Extremes: Sendable {
        /// The longest file name (raw bytes), value and directory path (UTF-8 bytes).
        public let name: Int
        public let value: Int
        public let directoryPath: Int
        /// The most tags a song has.
        public let tags: Int
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { self.records.count }

    /// Song `index`, copied out: URI and `SongInfo` built.
    public subscript(index: Int) -> Database.Song {
        let song = Int32(index)
        return Database.Song(
            uri: self.uri(song), directory: self.records[index].directory,
            modificationTime: self.records[index].modificationTime, size: self.records[index].size,
            info: self.info(song), virtual: self.virtualSong(song))
    }

    /// Whether any song is a track of a playlist file's directory (`virtualSong(_:)`); most tables have none.
    @inlinable
    public var hasVirtualSongs: Bool { !self.virtualSongs.isEmpty }

    /// What song `song` refers to when it is a track of a playlist file's directory; `nil` for a file's song.
    @inlinable
    public func virtualSong(_ song: Int32) -> VirtualSong? {
        self.virtualSongs.isEmpty ? nil : self.virtualSongs[song]
    }

    /// The length of song `song` as played: its range for a playlist track, else its duration (`mpd`'s
    /// `LightSong::GetDuration`).
    @inlinable
    public func playedMilliseconds(_ song: Int32) -> UInt64? {
        guard let virtual = self.virtualSong(song) else { return self.durationMilliseconds(song) }
        var end = virtual.track.endMilliseconds
        if end == 0 {
            guard let total = self.durationMilliseconds(song) else { return nil }
            end = total
        }
        return end >= virtual.track.startMilliseconds ? end - virtual.track.startMilliseconds : 0
    }

    /// The sum of `playedMilliseconds` of `songs` (0 for a song of unknown length): one loop over the records
    /// when the table has no playlist tracks.
    public func playedMilliseconds(of songs: [Int32]) -> UInt64 {
        guard self.virtualSongs.isEmpty else {
            return songs.reduce(0) { $0 + (self.playedMilliseconds($1) ?? 0) }
        }
        return self.records.withUnsafeBufferPointer { records in
            songs.withUnsafeBufferPointer { songs in
                var total: UInt64 = 0
                // A stored duration is milliseconds + 1, 0 when unknown.
                for song in songs {
                    let stored = records[Int(song)].duration
                    total &+= stored == 0 ? 0 : stored - 1
                }
                return total
            }
        }
    }

    // MARK: - Columns

    /// Modification time, seconds since the epoch.
    @inlinable
    public func modificationTime(_ song: Int32) -> Int64 { self.records[Int(song)].modificationTime }

    /// Size in bytes.
    public func size(_ song: Int32) -> Int64 { self.records[Int(song)].size }

    /// The directory holding song `song`.
    @inlinable
    public func directory(_ song: Int32) -> Int32 { self.records[Int(song)].directory }

    /// The exact length in milliseconds, if known.
    @inlinable
    public func durationMilliseconds(_ song: Int32) -> UInt64? {
        let stored = self.records[Int(song)].duration
        return stored == 0 ? nil : stored - 1
    }

    /// The decoded audio format, if known.
    @inlinable
    public func audioFormat(_ song: Int32) -> AudioFormat? {
        let record = self.records[Int(song)]
        guard record.sampleRate > 0 else { return nil }
        return AudioFormat(
            sampleRate: Int(record.sampleRate - 1), sampleFormat: record.sampleFormat, channels: Int(record.channels))
    }

    /// ReplayGain values from the tags.
    public func replayGain(_ song: Int32) -> ReplayGainInfo {
        let index = self.records[Int(song)].replayGain
        return index < 0 ? ReplayGainInfo() : self.replayGains[Int(index)]
    }

    /// Whether the file has an embedded picture.
    public func hasPicture(_ song: Int32) -> Bool { self.records[Int(song)].hasPicture }

    /// Whether song `song` carries a cue sheet in its tags (`SongInfo.hasPlaylist`).
    @inlinable
    public func hasPlaylist(_ song: Int32) -> Bool { self.records[Int(song)].hasPlaylist }

    /// The file name in its directory, as raw bytes.
    @inlinable
    public func withNameBytes<Result>(_ song: Int32, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        let range = self.nameRange(song)
        return self.names.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[range])) }
    }

    @inlinable
    func nameRange(_ song: Int32) -> Range<Int> {
        let index = Int(song)
        return Int(self.nameStarts[index])..<Int(self.nameStarts[index + 1])
    }

    /// The bytes of the names of consecutive songs `run` together (they lie one after the other).
    public func nameByteCount(of run: Range<Int32>) -> Int {
        guard let first = run.first, let last = run.last else { return 0 }
        return self.nameRange(last).upperBound - self.nameRange(first).lowerBound
    }

    /// Writes `prefix`, the name and a newline for each of consecutive songs `run` (a listing's `file: DIR/NAME`
    /// lines): the names read in place, one bound check per line.
    @inlinable
    public func putNameLines(_ run: Range<Int32>, prefix: [UInt8], to writer: inout ByteWriter) {
        guard !run.isEmpty else { return }
        prefix.withUnsafeBufferPointer { prefix in
            self.nameStarts.withUnsafeBufferPointer { starts in
                self.names.withUnsafeBufferPointer { names in
                    writer.withRoom { room in
                        Self.writeNameLines(run, starts: starts, names: names, prefix: prefix, into: room, at: 0)
                    }
                }
            }
        }
    }

    /// Writes into `room` from `at`, for each of songs `run` (their names in `names` from `starts`), the bytes of
    /// `prefix`, the name and a newline, one bound check per line; returns where the lines end. `prefix` may lie in
    /// `room` before `at` (a line written there already), or be the first line's own start (copied onto itself).
    @inlinable
    static func writeNameLines(
        _ run: Range<Int32>, starts: UnsafeBufferPointer<UInt32>, names: UnsafeBufferPointer<UInt8>,
        prefix: UnsafeBufferPointer<UInt8>, into room: UnsafeMutableBufferPointer<UInt8>, at start: Int
    ) -> Int {
        precondition(run.lowerBound >= 0 && Int(run.upperBound) < starts.count, "SongTable: no such songs")
        var at = start
        for song in run {
            let nameStart = Int(starts[Int(song)])
            let count = Int(starts[Int(song) &+ 1]) &- nameStart
            precondition(room.count &- at > prefix.count &+ count, "SongTable: no room for a line")
            let target = room.baseAddress! + at
            if let base = prefix.baseAddress, base != UnsafePointer(target) {
                ByteWriter.copy(base, to: target, count: prefix.count)
            }
            ByteWriter.copy(names.baseAddress! + nameStart, to: target + prefix.count, count: count)
            target[prefix.count &+ count] = UInt8(ascii: "\n")
            at &+= prefix.count &+ count &+ 1
        }
        return at
    }

    /// The file name in its directory.
    public func name(_ song: Int32) -> String { self.withNameBytes(song) { RawText.decode($0) } }

    /// The path of song `song`'s directory ("" for the root).
    @inlinable
    public func directoryPath(_ song: Int32) -> String { self.directoryPaths[Int(self.records[Int(song)].directory)] }

    /// The URI relative to the music directory: the directory's path and the name.
    public func uri(_ song: Int32) -> String {
        var path = self.directoryPath(song)
        return self.withNameBytes(song) { name in
            // Most names are ASCII: then the URI is the path's bytes, a slash and the name's, made into one string
            // at once (no decoding of the name, no intermediate strings).
            guard name.allSatisfy({ $0 < 0x80 }) else {
                let decoded = RawText.decode(name)
                return path.isEmpty ? decoded : path + "/" + decoded
            }
            return path.withUTF8 { directory in
                let slash = directory.isEmpty ? 0 : 1
                return String(unsafeUninitializedCapacity: directory.count + slash + name.count) { buffer in
                    var end = buffer.initialize(fromContentsOf: directory)
                    if slash == 1 {
                        buffer[end] = UInt8(ascii: "/")
                        end += 1
                    }
                    return end + UnsafeMutableBufferPointer(rebasing: buffer[end...]).initialize(fromContentsOf: name)
                }
            }
        }
    }

    /// Whether song `song`'s URI is `path` + "/" + `name` (`name` as raw bytes), compared without building it.
    func hasURI(_ song: Int32, directory: Int32, name: UnsafeBufferPointer<UInt8>) -> Bool {
        self.records[Int(song)].directory == directory && self.withNameBytes(song) { $0.elementsEqual(name) }
    }

    /// Asks the processor to load, ahead of a walk that prints song blocks, what the walk will read: called before
    /// printing `songs[position]`, it asks for the record of the song 12 places on, the tag columns and name of the
    /// one 8 on (whose record came in since), the value offsets of the one 4 on, and the value bytes of the one 2
    /// on. A query's songs lie scattered over the table (every song with track 5), and without it the printer
    /// waits on memory for most of its time: the record, the tag columns, each value's offsets and bytes. With
    /// `paths` (the snapshot's table of directory paths, `Database.directoryPathTable()`), the directory's path too:
    /// its offsets 8 on, its bytes 4 on, unless its paths may hold raw-byte escapes. (Not the characters of the
    /// path's `String`: reaching them retains it, a wait of its own.) `songs` holds song numbers of this table.
    @inlinable
    public func prefetch(_ songs: [Int32], before position: Int, paths: TagValueTable? = nil) {
        songs.withUnsafeBufferPointer { self.prefetch($0, before: position, paths: paths) }
    }

    /// ``prefetch(_:before:paths:)``, the song numbers read in place.
    @inlinable
    func prefetch(_ songs: UnsafeBufferPointer<Int32>, before position: Int, paths: TagValueTable?) {
        // A table whose paths may hold raw-byte escapes is not read by the printer (it takes the strings).
        let paths = paths.flatMap { $0.mayHoldEscapes ? nil : $0 }
        // A negative number (a song of no table: a queue's URL) is passed over.
        func song(_ offset: Int) -> Int32? {
            position + offset < songs.count && songs[position + offset] >= 0 ? songs[position + offset] : nil
        }
        self.records.withUnsafeBufferPointer { records in
            if let song = song(12) {
                let record = UnsafeRawPointer(records.baseAddress! + Int(song))
                // The next song's record too: it says where the song's name and tags end.
                Posix.prefetch(record)
                Posix.prefetch(record + (2 * MemoryLayout<Record>.stride - 1))
            }
            if let song = song(8) {
                let record = records[Int(song)]
                self.tagValues.withUnsafeBufferPointer { values in
                    let start = Int(record.tagStart)
                    guard start < values.count else { return }
                    Posix.prefetch(values.baseAddress! + start)
                    Posix.prefetch(UnsafeRawPointer(values.baseAddress! + start) + 60)
                }
                self.tagTypes.withUnsafeBufferPointer { types in
                    let start = Int(record.tagStart)
                    if start < types.count { Posix.prefetch(types.baseAddress! + start) }
                }
                self.names.withUnsafeBufferPointer { names in
                    let start = Int(self.nameStarts[Int(song)])
                    if start < names.count { Posix.prefetch(names.baseAddress! + start) }
                }
                if let paths {
                    paths.offsets.withUnsafeBufferPointer { offsets in
                        let directory = Int(record.directory)
                        if directory < offsets.count { Posix.prefetch(offsets.baseAddress! + directory) }
                    }
                } else {
                    self.directoryPaths.withUnsafeBufferPointer { paths in
                        let directory = Int(record.directory)
                        if directory < paths.count { Posix.prefetch(paths.baseAddress! + directory) }
                    }
                }
            }
            if let song = song(4) {
                self.prefetchValueOffsets(song)
                if let paths {
                    paths.offsets.withUnsafeBufferPointer { offsets in
                        paths.bytes.withUnsafeBufferPointer { bytes in
                            let directory = Int(records[Int(song)].directory)
                            guard directory < offsets.count, let base = bytes.baseAddress,
                                Int(offsets[directory]) < bytes.count
                            else { return }
                            Posix.prefetch(base + Int(offsets[directory]))
                        }
                    }
                }
            }
            if let song = song(2) { self.prefetchValueBytes(song) }
        }
    }

    /// Asks for the offsets of `song`'s values in the value table.
    @inlinable
    func prefetchValueOffsets(_ song: Int32) {
        self.tagValues.withUnsafeBufferPointer { values in
            self.values.offsets.withUnsafeBufferPointer { offsets in
                for position in self.tagPositions(song) {
                    Posix.prefetch(offsets.baseAddress! + Int(values[position]))
                }
            }
        }
    }

    /// Asks for the bytes of `song`'s values (their offsets are read: ask for them first).
    @inlinable
    func prefetchValueBytes(_ song: Int32) {
        self.tagValues.withUnsafeBufferPointer { values in
            self.values.offsets.withUnsafeBufferPointer { offsets in
                self.values.bytes.withUnsafeBufferPointer { bytes in
                    guard let base = bytes.baseAddress else { return }
                    for position in self.tagPositions(song) {
                        Posix.prefetch(base + Int(offsets[Int(values[position])]))
                    }
                }
            }
        }
    }

    /// Positions of song `song`'s tags in `tagType(at:)` and `valueNumber(at:)`, in stored order.
    @inlinable
    public func tagPositions(_ song: Int32) -> Range<Int> {
        let index = Int(song)
        let end = index + 1 < self.records.count ? Int(self.records[index + 1].tagStart) : self.tagTypes.count
        return Int(self.records[index].tagStart)..<end
    }

    /// Calls `body` with the tag columns in place (see `TagView`).
    func withTagView<Result>(_ body: (TagView) -> Result) -> Result {
        self.records.withUnsafeBufferPointer { records in
            self.tagTypes.withUnsafeBufferPointer { types in
                self.tagValues.withUnsafeBufferPointer { values in
                    body(TagView(records: records, types: types, values: values))
                }
            }
        }
    }

    /// The number of song `song`'s values and their bytes together: what a bound on the size of its song block
    /// needs, read from the offsets in place.
    @inlinable
    public func tagByteCount(_ song: Int32) -> (values: Int, bytes: Int) {
        let positions = self.tagPositions(song)
        return self.tagValues.withUnsafeBufferPointer { numbers in
            self.values.offsets.withUnsafeBufferPointer { offsets in
                var bytes = 0
                for position in positions {
                    let number = Int(numbers[position])
                    bytes &+= Int(offsets[number &+ 1] &- offsets[number])
                }
                return (positions.count, bytes)
            }
        }
    }

    /// Writes `KEY: VALUE` lines of song `song`'s values whose type `mask` holds, in stored order, `keys` numbered
    /// by `TagType.rawValue`, each value as its bytes (a table whose values `mayHoldEscapes` is written another way).
    /// The song printer's inner loop: the columns read in place, one bound check per line, a key of up to 32 bytes
    /// copied by two 16-byte loads and stores (`LineKeys`) and a value of up to 32 or 64 bytes by two or four
    /// (`TagValueTable.padding`: a MusicBrainz id has 36).
    @inlinable
    public func putTagLines(of song: Int32, in mask: TagMask, keys: LineKeys, to writer: inout ByteWriter) {
        let positions = self.tagPositions(song)
        guard !positions.isEmpty else { return }
        self.tagTypes.withUnsafeBufferPointer { types in
            self.tagValues.withUnsafeBufferPointer { numbers in
                self.values.offsets.withUnsafeBufferPointer { offsets in
                    self.values.bytes.withUnsafeBufferPointer { bytes in
                        keys.withSlots { slots, lengths in
                            writer.withRoom { room in
                                // None is empty: the table holds `padding` bytes after its values, every tag type
                                // has a key, and a song block's room is hundreds of bytes.
                                guard let slotBase = slots.baseAddress, let byteBase = bytes.baseAddress,
                                    let roomBase = room.baseAddress
                                else { preconditionFailure("SongTable: tag lines with no keys, values or room") }
                                let roomCount = room.count
                                let keyCount = lengths.count
                                var at = 0
                                for position in positions {
                                    let type = Int(types[position])
                                    // A raw value of 64 or more is in no mask (the shift gives 0).
                                    guard mask.bits & (1 << UInt64(type)) != 0 else { continue }
                                    precondition(type < keyCount, "SongTable: a tag type with no key")
                                    let number = Int(numbers[position])
                                    let start = Int(offsets[number])
                                    let count = Int(offsets[number &+ 1]) &- start
                                    let length = Int(lengths[type])
                                    let key = UnsafeRawPointer(slotBase + type &* 32)
                                    let value = UnsafeRawPointer(byteBase + start)
                                    let target = UnsafeMutableRawPointer(roomBase + at)
                                    let left = roomCount &- at
                                    if count <= 32 && left >= length &+ 33 {
                                        // Room for 32 bytes after the key: both copied whole.
                                        Self.copy32(key, to: target)
                                        Self.copy32(value, to: target + length)
                                    } else if count <= 64 && left >= length &+ 65 {
                                        Self.copy32(key, to: target)
                                        Self.copy32(value, to: target + length)
                                        Self.copy32(value + 32, to: target + (length &+ 32))
                                    } else {
                                        precondition(left > length &+ count, "SongTable: no room for a tag")
                                        let text = target.assumingMemoryBound(to: UInt8.self)
                                        ByteWriter.copy(
                                            key.assumingMemoryBound(to: UInt8.self), to: text, count: length)
                                        ByteWriter.copy(
                                            value.assumingMemoryBound(to: UInt8.self), to: text + length, count: count)
                                    }
                                    target.storeBytes(
                                        of: UInt8(ascii: "\n"), toByteOffset: length &+ count, as: UInt8.self)
                                    at &+= length &+ count &+ 1
                                }
                                return at
                            }
                        }
                    }
                }
            }
        }
    }

    /// Copies 32 bytes by two 16-byte loads and stores.
    @inlinable @inline(__always)
    static func copy32(_ source: UnsafeRawPointer, to target: UnsafeMutableRawPointer) {
        target.storeBytes(of: source.loadUnaligned(as: SIMD16<UInt8>.self), as: SIMD16<UInt8>.self)
        target.storeBytes(
            of: source.loadUnaligned(fromByteOffset: 16, as: SIMD16<UInt8>.self), toByteOffset: 16,
            as: SIMD16<UInt8>.self)
    }

    /// The tag type at `position`.
    @inlinable
    public func tagType(at position: Int) -> TagType { TagType(rawValue: Int(self.tagTypes[position]))! }

    /// The value number at `position` (see `values`).
    @inlinable
    public func valueNumber(at position: Int) -> Int32 { self.tagValues[position] }

    /// Calls `body` with the value number of each of song `song`'s values of `type`, in stored order; returns
    /// whether there was any.
    @inlinable
    @discardableResult
    public func forEachValue(_ song: Int32, _ type: TagType, _ body: (Int32) -> Void) -> Bool {
        let raw = UInt8(type.rawValue)
        var found = false
        for position in self.tagPositions(song) where self.tagTypes[position] == raw {
            found = true
            body(self.tagValues[position])
        }
        return found
    }

    /// Song `song`'s first value of `type` (`mpd`'s `Tag::GetValue`).
    public func firstValue(_ song: Int32, _ type: TagType) -> String? {
        let raw = UInt8(type.rawValue)
        for position in self.tagPositions(song) where self.tagTypes[position] == raw {
            return self.values[self.tagValues[position]]
        }
        return nil
    }

    /// Song `song`'s values of `type`, in stored order.
    public func tagValues(_ song: Int32, _ type: TagType) -> [String] {
        var values: [String] = []
        self.forEachValue(song, type) { values.append(self.values[$0]) }
        return values
    }

    /// The tag types song `song` has.
    public func presentTags(_ song: Int32) -> TagMask {
        var bits: UInt64 = 0
        for position in self.tagPositions(song) { bits |= 1 << UInt64(self.tagTypes[position]) }
        return TagMask(bits: bits)
    }

    /// Tags and audio properties of song `song`, built.
    public func info(_ song: Int32) -> SongInfo {
        let record = self.records[Int(song)]
        let positions = self.tagPositions(song)
        var tags: [TagItem] = []
        tags.reserveCapacity(positions.count)
        for position in positions {
            tags.append(TagItem(self.tagType(at: position), self.values[self.tagValues[position]]))
        }
        return SongInfo(
            tags: tags, durationMilliseconds: self.durationMilliseconds(song), audioFormat: self.audioFormat(song),
            replayGain: self.replayGain(song), hasPicture: record.hasPicture, hasPlaylist: record.hasPlaylist)
    }

    /// Whether song `song` has the same modification time, size, tags, length, format, ReplayGain and flags as
    /// song `otherSong` of `other`, and neither is a playlist's track (its name and directory are not compared:
    /// callers find the two by URI).
    func isSame(_ song: Int32, as other: SongTable, _ otherSong: Int32) -> Bool {
        let (a, b) = (self.records[Int(song)], other.records[Int(otherSong)])
        guard a.modificationTime == b.modificationTime, a.size == b.size, a.duration == b.duration,
            a.sampleRate == b.sampleRate, a.channels == b.channels, a.sampleFormat == b.sampleFormat,
            a.hasPicture == b.hasPicture, a.hasPlaylist == b.hasPlaylist,
            self.replayGain(song) == other.replayGain(otherSong),
            self.virtualSong(song) == nil, other.virtualSong(otherSong) == nil
        else { return false }
        let (mine, theirs) = (self.tagPositions(song), other.tagPositions(otherSong))
        guard mine.count == theirs.count else { return false }
        for (x, y) in zip(mine, theirs) {
            guard self.tagTypes[x] == other.tagTypes[y] else { return false }
            let equal = self.values.withBytes(self.tagValues[x]) { p in
                other.values.withBytes(other.tagValues[y]) { q in p.elementsEqual(q) }
            }
            guard equal else { return false }
        }
        return true
    }

    /// How many distinct values (by bytes) the songs `isIncluded` accepts have for `type`.
    func distinctValueCount(_ type: TagType, of isIncluded: (Int32) -> Bool) -> Int {
        var seen = [Bool](repeating: false, count: self.values.count)
        var count = 0
        for song in 0..<Int32(self.records.count) where isIncluded(song) {
            self.forEachValue(song, type) { value in
                guard !seen[Int(value)] else { return }
                seen[Int(value)] = true
                count += 1
            }
        }
        return count
    }

    /// How many distinct values (by bytes) songs have for `type`.
    func distinctValueCount(_ type: TagType) -> Int {
        var seen = [Bool](repeating: false, count: self.values.count)
        var count = 0
        let raw = UInt8(type.rawValue)
        for position in self.tagTypes.indices
        where self.tagTypes[position] == raw && !seen[Int(self.tagValues[position])] {
            seen[Int(self.tagValues[position])] = true
            count += 1
        }
        return count
    }

    /// The sum of every song's known duration, in milliseconds.
    func totalMilliseconds() -> UInt64 {
        self.records.reduce(UInt64(0)) { $0 &+ ($1.duration == 0 ? 0 : $1.duration - 1) }
    }

    // MARK: - Building

    /// Builds a table song by song, in walk order.
    struct Builder {
        private var records: [Record] = []
        private var names: [UInt8] = []
        /// Where each song's name starts (`SongTable.nameStarts` but the last entry).
        private var nameStarts: [UInt32] = []
        private var tagTypes: [UInt8] = []
        private var tagValues: [Int32] = []
        private var replayGains: [ReplayGainInfo] = []
        var virtualSongs: [Int32: VirtualSong] = [:]
        var values = TagValueTable.Builder()

        init() {}

        /// Starts with the values of `database` (numbered as there), to copy its songs from (see `copy`): the
        /// values no song uses in the end are dropped by `build`.
        init(valuesOf database: Database) {
            self.values = TagValueTable.Builder(database.songs.values)
            self.seed = ObjectIdentifier(database)
            // Room for as many songs as it has, and a few more (most of them are copied).
            let songs = database.songs
            self.records.reserveCapacity(songs.records.count + 64)
            self.names.reserveCapacity(songs.names.count + 4096)
            self.nameStarts.reserveCapacity(songs.records.count + 65)
            self.tagTypes.reserveCapacity(songs.tagTypes.count + 1024)
            self.tagValues.reserveCapacity(songs.tagValues.count + 1024)
        }

        /// The snapshot whose values this table started with, if any.
        private var seed: ObjectIdentifier?

        /// Makes room for `songs` songs.
        mutating func reserveCapacity(_ songs: Int) {
            self.records.reserveCapacity(songs)
            self.nameStarts.reserveCapacity(songs + 1)
        }

        /// The number of songs added.
        var count: Int { self.records.count }

        /// Whether the columns still fit their 32-bit offsets.
        var fits: Bool {
            self.values.fits && self.names.count <= Int(UInt32.max) && self.tagTypes.count <= Int(UInt32.max)
                && self.records.count < Int(Int32.max)
        }

        /// Adds a song whose tags are added next with `addTag`.
        mutating func addSong(
            name: some Collection<UInt8>, directory: Int32, modificationTime: Int64, size: Int64,
            durationMilliseconds: UInt64?, audioFormat: AudioFormat?, replayGain: ReplayGainInfo, hasPicture: Bool,
            hasPlaylist: Bool = false
        ) {
            var gain: Int32 = -1
            if !replayGain.isEmpty {
                gain = Int32(self.replayGains.count)
                self.replayGains.append(replayGain)
            }
            self.records.append(
                Record(
                    modificationTime: modificationTime, size: size,
                    duration: durationMilliseconds.map { $0 &+ 1 } ?? 0,
                    tagStart: UInt32(truncatingIfNeeded: self.tagTypes.count), directory: directory,
                    replayGain: gain,
                    sampleRate: audioFormat.map { UInt32(truncatingIfNeeded: $0.sampleRate + 1) } ?? 0,
                    channels: audioFormat.map { UInt32(truncatingIfNeeded: $0.channels) } ?? 0,
                    sampleFormat: audioFormat?.sampleFormat ?? .s16, hasPicture: hasPicture, hasPlaylist: hasPlaylist))
            self.nameStarts.append(UInt32(truncatingIfNeeded: self.names.count))
            self.names.append(contentsOf: name)
        }

        /// Marks the last song added as a track of a playlist file's directory.
        mutating func setLastVirtual(_ virtual: VirtualSong) {
            self.virtualSongs[Int32(self.records.count - 1)] = virtual
        }

        /// The directory of song `song` added.
        func directory(of song: Int32) -> Int32 { self.records[Int(song)].directory }

        /// Adds a tag to the last song.
        mutating func addTag(_ type: TagType, value number: Int32) {
            self.tagTypes.append(UInt8(type.rawValue))
            self.tagValues.append(number)
        }

        /// Adds a track of a playlist file's directory: what the playlist gave (`song.info`) completed from the
        /// file it names (`target`, when it is in the tree), as `mpd`'s `Song::Export` does: the target's tags of
        /// types the playlist did not give, its duration, format and modification time.
        mutating func addTrack(
            _ song: TreeSong, track: PlaylistTrack, directory: Int32, target: (uri: String, song: TreeSong)?
        ) {
            let own = song.info
            var merged = own
            merged.hasPlaylist = false
            var modificationTime: Int64 = 0
            var size: Int64 = 0
            if let target {
                let file = target.song.info
                let given = Set(own.tags.map(\.type))
                merged.tags += file.tags.filter { !given.contains($0.type) }
                if merged.durationMilliseconds == nil { merged.durationMilliseconds = file.durationMilliseconds }
                if merged.audioFormat == nil { merged.audioFormat = file.audioFormat }
                merged.replayGain = file.replayGain
                merged.hasPicture = file.hasPicture
                modificationTime = target.song.modificationTime
                size = target.song.size
            }
            self.virtualSongs[Int32(self.records.count)] = VirtualSong(
                track: track, targetURI: target?.uri, tags: own.tags, durationMilliseconds: own.durationMilliseconds,
                audioFormat: own.audioFormat)
            self.add(
                TreeSong(name: song.name, modificationTime: modificationTime, size: size, info: merged),
                directory: directory)
        }

        /// Adds a song from the updater's tree.
        mutating func add(_ song: TreeSong, directory: Int32) {
            switch song.content {
            case .read(let info):
                self.addSong(
                    name: RawText.encode(song.name), directory: directory, modificationTime: song.modificationTime,
                    size: song.size, durationMilliseconds: info.durationMilliseconds, audioFormat: info.audioFormat,
                    replayGain: info.replayGain, hasPicture: info.hasPicture, hasPlaylist: info.hasPlaylist)
                for item in info.tags { self.addTag(item.type, value: self.values.number(for: item.value)) }
            case .snapshot(let database, let index):
                self.copy(index, of: database)
                // The tree's fields, in case the job changed them.
                self.records[self.records.count - 1].directory = directory
                self.records[self.records.count - 1].modificationTime = song.modificationTime
                self.records[self.records.count - 1].size = song.size
            }
        }

        /// The previous snapshot songs were copied from, and the number in this table of each of its values
        /// (-1 until first seen).
        private var source: (database: ObjectIdentifier, numbers: [Int32])?

        /// Adds song `index` of `database` as it is there (its directory number too: the caller sets it).
        private mutating func copy(_ index: Int32, of database: Database) {
            let songs = database.songs
            let seeded = self.seed == ObjectIdentifier(database)
            if !seeded && self.source?.database != ObjectIdentifier(database) {
                self.source = (ObjectIdentifier(database), [Int32](repeating: -1, count: songs.values.count))
            }
            var record = songs.records[Int(index)]
            record.tagStart = UInt32(truncatingIfNeeded: self.tagTypes.count)
            if record.replayGain >= 0 {
                record.replayGain = Int32(self.replayGains.count)
                self.replayGains.append(songs.replayGain(index))
            }
            self.records.append(record)
            self.nameStarts.append(UInt32(truncatingIfNeeded: self.names.count))
            songs.withNameBytes(index) { self.names.append(contentsOf: $0) }
            if seeded {
                let positions = songs.tagPositions(index)
                self.tagTypes.append(contentsOf: songs.tagTypes[positions])
                self.tagValues.append(contentsOf: songs.tagValues[positions])
                return
            }
            for position in songs.tagPositions(index) {
                let value = songs.valueNumber(at: position)
                var number = self.source!.numbers[Int(value)]
                if number < 0 {
                    number = songs.values.withBytes(value) { self.values.number(forBytes: $0) }
                    self.source!.numbers[Int(value)] = number
                }
                self.tagTypes.append(songs.tagTypes[position])
                self.tagValues.append(number)
            }
        }

        /// Adds songs `range` of `database`, whose values this table started with (`init(valuesOf:)`), as they are
        /// there but for their directories' numbers, `directoryShift` higher here.
        mutating func copy(_ range: Range<Int32>, of database: Database, directoryShift: Int32) {
            guard !range.isEmpty else { return }
            precondition(self.seed == ObjectIdentifier(database), "songs copied from a snapshot of other values")
            let songs = database.songs
            let names = songs.nameRange(range.lowerBound).lowerBound..<songs.nameRange(range.upperBound - 1).upperBound
            let tags =
                songs.tagPositions(range.lowerBound).lowerBound..<songs.tagPositions(range.upperBound - 1).upperBound
            let nameShift = Int64(self.names.count) - Int64(names.lowerBound)
            let tagShift = Int64(self.tagTypes.count) - Int64(tags.lowerBound)
            for index in range {
                var record = songs.records[Int(index)]
                self.nameStarts.append(UInt32(truncatingIfNeeded: Int64(songs.nameStarts[Int(index)]) + nameShift))
                record.tagStart = UInt32(truncatingIfNeeded: Int64(record.tagStart) + tagShift)
                record.directory += directoryShift
                if record.replayGain >= 0 {
                    record.replayGain = Int32(self.replayGains.count)
                    self.replayGains.append(songs.replayGain(index))
                }
                self.records.append(record)
            }
            self.names.append(contentsOf: songs.names[names])
            self.tagTypes.append(contentsOf: songs.tagTypes[tags])
            self.tagValues.append(contentsOf: songs.tagValues[tags])
        }

        /// The table, with `directoryPaths` for URIs.
        func build(directoryPaths: [String]) -> SongTable {
            var values = self.values
            var tagValues = self.tagValues
            if self.seed != nil {
                // Started with a snapshot's values: keep those some song uses, each once, as a table built anew has.
                var used = [Bool](repeating: false, count: values.offsets.count - 1)
                for number in tagValues { used[Int(number)] = true }
                if used.contains(false) {
                    var kept = TagValueTable.Builder()
                    var renumbered = [Int32](repeating: -1, count: used.count)
                    for number in used.indices where used[number] {
                        let range = Int(values.offsets[number])..<Int(values.offsets[number + 1])
                        renumbered[number] = kept.append(values.bytes[range])
                    }
                    for position in tagValues.indices { tagValues[position] = renumbered[Int(tagValues[position])] }
                    values = kept
                }
            }
            var nameStarts = self.nameStarts
            nameStarts.append(UInt32(truncatingIfNeeded: self.names.count))
            return SongTable(
                records: self.records.compacted(), names: self.names.compacted(),
                nameStarts: nameStarts.compacted(), tagTypes: self.tagTypes.compacted(),
                tagValues: tagValues.compacted(), replayGains: self.replayGains.compacted(),
                directoryPaths: directoryPaths, values: values.build(),
                virtualSongs: self.virtualSongs)
        }
    }

    private init(
        records: [Record], names: [UInt8], nameStarts: [UInt32], tagTypes: [UInt8], tagValues: [Int32],
        replayGains: [ReplayGainInfo],
        directoryPaths: [String], values: TagValueTable, virtualSongs: [Int32: VirtualSong]
    ) {
        self.virtualSongs = virtualSongs
        self.records = records
        self.names = names
        self.nameStarts = nameStarts
        self.tagTypes = tagTypes
        self.tagValues = tagValues
        self.replayGains = replayGains
        self.directoryPaths = directoryPaths
        self.values = values
        // Runs through the columns in order (a few milliseconds for 100k songs).
        var (name, tags) = (0, 0)
        var hasPlaylists = false
        for (index, record) in records.enumerated() {
            let next = index + 1 < records.count ? records[index + 1] : nil
            name = Swift.max(name, Int(nameStarts[index + 1]) - Int(nameStarts[index]))
            tags = Swift.max(tags, Int(next?.tagStart ?? UInt32(tagTypes.count)) - Int(record.tagStart))
            hasPlaylists = hasPlaylists || record.hasPlaylist
        }
        self.hasPlaylists = hasPlaylists
        var value = 0
        for index in values.offsets.indices.dropLast() {
            value = Swift.max(value, Int(values.offsets[index + 1] - values.offsets[index]))
        }
        self.extremes = Extremes(
            name: name, value: value, directoryPath: directoryPaths.lazy.map(\.utf8.count).max() ?? 0, tags: tags)
    }

    /// No songs.
    init() { self = Builder().build(directoryPaths: [""]) }
}

/// A snapshot's tag columns in place, for loops over many songs that read no other column: no reference count
/// is touched per song. Valid only inside `SongTable.withTagView(_:)`.
struct TagView {
    let records: UnsafeBufferPointer<SongTable.Record>
    /// Raw `TagType` values, by position.
    let types: UnsafeBufferPointer<UInt8>
    /// Value numbers of the table's `TagValueTable`, by position.
    let values: UnsafeBufferPointer<Int32>

    /// Positions of song `song`'s tags, in stored order.
    @inline(__always)
    func positions(_ song: Int32) -> Range<Int> {
        let index = Int(song)
        let end = index + 1 < self.records.count ? Int(self.records[index + 1].tagStart) : self.types.count
        return Int(self.records[index].tagStart)..<end
    }
}
