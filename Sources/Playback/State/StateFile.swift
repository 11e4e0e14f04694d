// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// The contents of `mpd`'s state file (`state_file`): software volume, output states, player state,
/// modes and the queue, in `mpd` 0.23's text format, so either server reads the other's file.
///
/// Pure: `parse` and `serialized` do no I/O. Where `mpd` 0.23.12 is buggy this reads what it writes but
/// writes what it can read: `single: 2` (its way of writing `oneshot`) is read as oneshot, and `oneshot`
/// is written by name, which `mpd` 0.23 parses.
public struct StateFile: Equatable, Sendable {
    /// One output's `audio_device_state` line.
    public struct OutputState: Equatable, Sendable {
        /// The output's name.
        public var name: String
        /// Whether it was enabled.
        public var enabled: Bool

        /// Creates an output state.
        public init(name: String, enabled: Bool) {
            self.name = name
            self.enabled = enabled
        }
    }

    /// One queue entry.
    public struct Entry: Equatable, Sendable {
        /// The song's URI.
        public var uri: String
        /// Its priority (0 when no `Prio:` line precedes it).
        public var priority: UInt8
        /// `rangeid` start in milliseconds (0: from the start).
        public var rangeStartMilliseconds: UInt64
        /// `rangeid` end in milliseconds (`nil`: to the end).
        public var rangeEndMilliseconds: UInt64?
        /// Tags stored with a full entry (`song_begin` … `song_end`), kept for songs outside the database.
        public var tags: [TagItem]
        /// `Time:` of a full entry, in seconds.
        public var durationSeconds: Double?
        /// `mtime:` of a full entry.
        public var modificationTime: Int64?
        /// Whether the entry was (or must be) written as a full block rather than `pos:uri`.
        public var isFull: Bool

        /// Creates an entry; a range makes it a full entry.
        public init(
            uri: String, priority: UInt8 = 0, rangeStartMilliseconds: UInt64 = 0, rangeEndMilliseconds: UInt64? = nil,
            tags: [TagItem] = [], durationSeconds: Double? = nil, modificationTime: Int64? = nil,
            isFull: Bool? = nil
        ) {
            self.uri = uri
            self.priority = priority
            self.rangeStartMilliseconds = rangeStartMilliseconds
            self.rangeEndMilliseconds = rangeEndMilliseconds
            self.tags = tags
            self.durationSeconds = durationSeconds
            self.modificationTime = modificationTime
            self.isFull = isFull ?? (rangeStartMilliseconds > 0 || rangeEndMilliseconds != nil)
        }
    }

    /// `sw_volume`: the software mixer's volume, when one exists.
    public var softwareVolume: Int?
    /// `audio_device_state` lines, in file order.
    public var outputs: [OutputState] = []
    /// `mount_begin` … `mount_end` blocks, in file order: each mount point (`uri:`) and its storage's URI
    /// (`mounted_url:`), either empty when its line is missing.
    public var mounts: [MountState] = []

    /// One mounted storage.
    public struct MountState: Equatable, Sendable {
        /// The mount point.
        public var path: String
        /// The storage's URI.
        public var uri: String

        /// Creates a mount's state.
        public init(path: String, uri: String) {
            self.path = path
            self.uri = uri
        }
    }
    /// Whether the file had a player section (`state:`); without it nothing below applies.
    public var hasPlayerState = false
    /// `state`.
    public var state = PlayerState.stop
    /// `current`: the current song's position, if any.
    public var current: Int?
    /// `time`: elapsed seconds in the current song (written when playing or paused).
    public var elapsedSeconds: Double = 0
    /// `random`.
    public var random = false
    /// `repeat`.
    public var repeatMode = false
    /// `single`.
    public var single = SingleMode.off
    /// `consume`.
    public var consume = false
    /// `crossfade` in whole seconds.
    public var crossfadeSeconds = 0
    /// `mixrampdb`.
    public var mixRampDB: Double = 0
    /// `mixrampdelay` (negative: off).
    public var mixRampDelay: Double = -1
    /// The queue, in position order.
    public var queue: [Entry] = []

    /// An empty state.
    public init() {}

    // MARK: - Reading

    /// Parses a state file as `mpd` 0.23 reads one, keeping at most `maximumQueueLength` entries.
    ///
    /// Unknown lines before the player section are reported (as `mpd` logs them) and skipped; inside it,
    /// unknown lines are ignored as `mpd` ignores them. A malformed queue line ends the queue there.
    /// - Returns: the state and the warnings to log.
    public static func parse(_ text: String, maximumQueueLength: Int = 16384) -> (StateFile, [String]) {
        var result = StateFile()
        var warnings: [String] = []
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).makeIterator()
        while let raw = lines.next() {
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw
            if line.isEmpty { continue }
            if let value = line.after("sw_volume: ") {
                let (volume, end) = CNumbers.strtol(value.utf8, from: 0)
                if end > 0 && volume >= 0 && volume <= 100 {
                    result.softwareVolume = Int(volume)
                } else {
                    warnings.append("Can't parse software volume: \(line)")
                }
            } else if let value = line.after("audio_device_state:") {
                let bytes = Array(value.utf8)
                let (enabled, end) = CNumbers.strtol(bytes, from: 0)
                guard end > 0, end < bytes.count, bytes[end] == UInt8(ascii: ":") else {
                    warnings.append("Malformed audio_device_state line: \(line)")
                    continue
                }
                let name = String(decoding: bytes[(end + 1)...], as: UTF8.self)
                result.outputs.append(OutputState(name: name, enabled: enabled != 0))
            } else if line.hasPrefix("mount_begin") {
                // As mpd: a block's lines until one starting with `mount_end`, each `mounted_url: ` or `uri: `.
                var mount = MountState(path: "", uri: "")
                while let next = lines.next(), !next.hasPrefix("mount_end") {
                    if let value = next.after("mounted_url: ") {
                        mount.uri = String(value)
                    } else if let value = next.after("uri: ") {
                        mount.path = String(value)
                    } else {
                        warnings.append("Unrecognized line in mountpoint state: \(next)")
                    }
                }
                result.mounts.append(mount)
            } else if let value = line.after("state: ") {
                result.hasPlayerState = true
                result.state = value == "play" ? .play : (value == "pause" ? .pause : .stop)
                result.readPlayerSection(&lines, maximumQueueLength: maximumQueueLength, warnings: &warnings)
            } else {
                warnings.append("Unrecognized line in state file: \(line)")
            }
        }
        return (result, warnings)
    }

    /// Everything after `state:`: `mpd` reads the rest of the file as the player section.
    private mutating func readPlayerSection(
        _ lines: inout some IteratorProtocol<Substring>, maximumQueueLength: Int, warnings: inout [String]
    ) {
        while let raw = lines.next() {
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw
            if let value = line.after("time: ") {
                self.elapsedSeconds = max(0, Self.parseDouble(value) ?? 0)
            } else if let value = line.after("repeat: ") {
                self.repeatMode = value == "1"
            } else if let value = line.after("single: ") {
                switch value {
                case "0": self.single = .off
                case "1": self.single = .on
                case "2", "oneshot": self.single = .oneshot
                default: warnings.append("Unrecognized single mode in state file: \(value)")
                }
            } else if let value = line.after("consume: ") {
                self.consume = value == "1"
            } else if let value = line.after("crossfade: ") {
                self.crossfadeSeconds = Int(clamping: max(0, CNumbers.strtol(value.utf8, from: 0).value))
            } else if let value = line.after("mixrampdb: ") {
                self.mixRampDB = Self.parseDouble(value) ?? 0
            } else if let value = line.after("mixrampdelay: ") {
                // mpd skips "nan", which versions before 0.18 wrote.
                if let first = value.utf8.first, first &- 0x30 < 10 {
                    self.mixRampDelay = Self.parseDouble(value) ?? -1
                }
            } else if let value = line.after("random: ") {
                self.random = value == "1"
            } else if let value = line.after("current: ") {
                self.current = Int(clamping: CNumbers.strtol(value.utf8, from: 0).value)
            } else if line.hasPrefix("playlist_begin") {
                self.readQueue(&lines, maximumQueueLength: maximumQueueLength, warnings: &warnings)
            }
        }
    }

    private mutating func readQueue(
        _ lines: inout some IteratorProtocol<Substring>, maximumQueueLength: Int, warnings: inout [String]
    ) {
        var priority: UInt8 = 0
        while let raw = lines.next() {
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw
            if line.hasPrefix("playlist_end") { return }
            if let value = line.after("Prio: ") {
                priority = UInt8(truncatingIfNeeded: CNumbers.strtoul(value.utf8, from: 0).value)
                continue
            }
            var entry: Entry
            if let uri = line.after("song_begin: ") {
                guard let full = Self.readFullEntry(uri: String(uri), &lines, warnings: &warnings) else { return }
                entry = full
            } else {
                let bytes = Array(line.utf8)
                let (position, end) = CNumbers.strtol(bytes, from: 0)
                guard end > 0, position >= 0, end + 1 < bytes.count, bytes[end] == UInt8(ascii: ":") else {
                    warnings.append("Malformed playlist line in state file: \(line)")
                    return
                }
                entry = Entry(uri: String(decoding: bytes[(end + 1)...], as: UTF8.self))
            }
            entry.priority = priority
            priority = 0
            if self.queue.count < maximumQueueLength { self.queue.append(entry) }
        }
        warnings.append("'playlist_end' not found in state file")
    }

    private static func readFullEntry(
        uri: String, _ lines: inout some IteratorProtocol<Substring>, warnings: inout [String]
    ) -> Entry? {
        var entry = Entry(uri: uri, isFull: true)
        while let raw = lines.next() {
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw
            if line == "song_end" { return entry }
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
                warnings.append("unknown line in db: \(line)")
                return nil
            }
            let name = line[..<colon]
            let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
            if let type = TagType(exactName: name) {
                entry.tags.append(TagItem(type, String(value)))
            } else if name == "Time" {
                entry.durationSeconds = Self.parseDouble(value)
            } else if name == "mtime" {
                entry.modificationTime = CNumbers.strtol(value.utf8, from: 0).value
            } else if name == "Range" {
                let bytes = Array(value.utf8)
                let (start, end) = CNumbers.strtoul(bytes, from: 0)
                entry.rangeStartMilliseconds = start
                if end < bytes.count, bytes[end] == UInt8(ascii: "-") {
                    let stop = CNumbers.strtoul(bytes, from: end + 1).value
                    entry.rangeEndMilliseconds = stop > 0 ? stop : nil
                }
            } else if name == "Format" || name == "Playlist" || name == "Target" {
                continue
            } else {
                warnings.append("unknown line in db: \(line)")
                return nil
            }
        }
        return entry
    }

    /// `strtod` on the longest numeric prefix (digits, one point, an exponent), as `mpd`'s `ParseDouble`.
    static func parseDouble(_ text: Substring) -> Double? {
        let trimmed = text.drop { $0 == " " || $0 == "\t" }
        var end = trimmed.startIndex
        var seenDigit = false
        var seenPoint = false
        var index = trimmed.startIndex
        if index < trimmed.endIndex, trimmed[index] == "-" || trimmed[index] == "+" {
            index = trimmed.index(after: index)
        }
        while index < trimmed.endIndex {
            let character = trimmed[index]
            if character.isASCII, character.isNumber {
                seenDigit = true
            } else if character == "." && !seenPoint {
                seenPoint = true
            } else {
                break
            }
            index = trimmed.index(after: index)
            if seenDigit { end = index }
        }
        if trimmed[trimmed.startIndex..<end].lowercased().hasPrefix("nan") { return nil }
        return seenDigit ? Double(trimmed[trimmed.startIndex..<end]) : nil
    }

    // MARK: - Writing

    /// The file's text, in `mpd` 0.23's order and number formats.
    public func serialized() -> String {
        var text = ""
        if let volume = self.softwareVolume { text += "sw_volume: \(volume)\n" }
        for output in self.outputs { text += "audio_device_state:\(output.enabled ? 1 : 0):\(output.name)\n" }
        for mount in self.mounts where !mount.path.isEmpty && !mount.uri.isEmpty {
            text += "mount_begin\nuri: \(mount.path)\nmounted_url: \(mount.uri)\nmount_end\n"
        }
        text += "state: \(self.state.rawValue)\n"
        if let current = self.current { text += "current: \(current)\n" }
        if self.state != .stop { text += "time: \(Self.fixed6(self.elapsedSeconds))\n" }
        text += "random: \(self.random ? 1 : 0)\n"
        text += "repeat: \(self.repeatMode ? 1 : 0)\n"
        text += "single: \(self.single.wireValue)\n"
        text += "consume: \(self.consume ? 1 : 0)\n"
        text += "crossfade: \(self.crossfadeSeconds)\n"
        text += "mixrampdb: \(Self.fixed6(self.mixRampDB))\n"
        text += "mixrampdelay: \(Self.fixed6(self.mixRampDelay))\n"
        text += "playlist_begin\n"
        for (position, entry) in self.queue.enumerated() {
            if entry.priority != 0 { text += "Prio: \(entry.priority)\n" }
            if !entry.isFull && entry.rangeStartMilliseconds == 0 && entry.rangeEndMilliseconds == nil {
                text += "\(position):\(entry.uri)\n"
                continue
            }
            text += "song_begin: \(entry.uri)\n"
            if let end = entry.rangeEndMilliseconds {
                text += "Range: \(entry.rangeStartMilliseconds)-\(end)\n"
            } else if entry.rangeStartMilliseconds > 0 {
                text += "Range: \(entry.rangeStartMilliseconds)-\n"
            }
            if let duration = entry.durationSeconds { text += "Time: \(Self.fixed6(duration))\n" }
            for tag in entry.tags { text += "\(tag.type.name): \(tag.value)\n" }
            if let modificationTime = entry.modificationTime { text += "mtime: \(modificationTime)\n" }
            text += "song_end\n"
        }
        text += "playlist_end\n"
        return text
    }

    /// C's `%f`: six decimals, rounded half away from zero on the decimal value.
    static func fixed6(_ value: Double) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf") }
        let negative = value < 0
        let micros = (abs(value) * 1_000_000).rounded(.toNearestOrAwayFromZero)
        guard micros < 9e18 else { return String(value) }
        let whole = UInt64(micros)
        let fraction = String(whole % 1_000_000)
        let padded = String(repeating: "0", count: 6 - fraction.count) + fraction
        return "\(negative && whole != 0 ? "-" : "")\(whole / 1_000_000).\(padded)"
    }
}

extension Substring {
    /// The rest after `prefix`, or `nil`.
    fileprivate func after(_ prefix: String) -> Substring? {
        self.hasPrefix(prefix) ? self.dropFirst(prefix.count) : nil
    }
}
