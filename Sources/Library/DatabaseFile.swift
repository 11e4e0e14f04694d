// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Glibc
import Model
import Posix

/// The database file (`db_file`): the update tree in a versioned line format, written atomically.
///
/// ```
/// fermata-db 1
/// updated <unix time>
/// tags <TagName>,<TagName>,…        the metadata_to_use set it was scanned with
/// D <mtime> <inode> <device> <depth> <name>
/// S <mtime> <size> <ms|-> <format|-> <picture 0|1> <name>
/// T <tag index in the tags line> <value>
/// G <track gain|-> <track peak|-> <album gain|-> <album peak|->
/// P <mtime> <name>                  a playlist file in the directory
/// ```
/// Directories come in pre-order with their depth; songs and their `T`/`G` lines follow their
/// directory. Values never hold newlines (the scanner drops such names and values). A file that is
/// missing, from another version, scanned with another tag set, or damaged loads as `nil`: the caller
/// then scans everything, and nothing crashes.
public enum DatabaseFile {
    /// The format version written in the first line.
    public static let version = 1

    /// Writes `tree` to `path` atomically: a temporary file, `fsync`, `rename`.
    ///
    /// - Throws: an I/O error; the previous file is then left as it was.
    public static func save(_ tree: TreeDirectory, updateTime: Int64, tags: TagMask, to path: String) throws {
        var out = [UInt8]()
        out.reserveCapacity(1 << 20)
        func line(_ text: String) {
            out.append(contentsOf: RawText.encode(text))
            out.append(10)
        }
        let tagList = Array(tags)
        let tagPosition = Dictionary(uniqueKeysWithValues: tagList.enumerated().map { ($1, $0) })
        line("fermata-db \(Self.version)")
        line("updated \(updateTime)")
        line("tags " + tagList.map(\.name).joined(separator: ","))
        func write(_ directory: TreeDirectory, depth: Int) {
            line("D \(directory.modificationTime) \(directory.inode) \(directory.device) \(depth) \(directory.name)")
            for song in directory.songs.values.sorted(by: { $0.name < $1.name }) {
                let info = song.info
                let duration = info.durationMilliseconds.map(String.init) ?? "-"
                let format = info.audioFormat.map(Self.encode) ?? "-"
                line("S \(song.modificationTime) \(song.size) \(duration) \(format) \(info.hasPicture ? 1 : 0) \(song.name)")
                for item in info.tags {
                    guard let position = tagPosition[item.type] else { continue }
                    line("T \(position) \(item.value)")
                }
                let gain = info.replayGain
                if !gain.isEmpty {
                    let fields = [gain.trackGain, gain.trackPeak, gain.albumGain, gain.albumPeak]
                    line("G " + fields.map { $0.map { "\($0)" } ?? "-" }.joined(separator: " "))
                }
            }
            for playlist in directory.playlists { line("P \(playlist.modificationTime) \(playlist.name)") }
            for name in directory.children.keys.sorted() { write(directory.children[name]!, depth: depth + 1) }
        }
        write(tree, depth: 0)

        let temporary = path + ".tmp"
        let fd = RawText.withFilePath(temporary) { open($0, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
        guard fd >= 0 else { throw DatabaseFileError.io("open \(temporary)", errno) }
        var offset = 0
        while offset < out.count {
            let written = out.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                let error = errno
                close(fd)
                unlinkPath(temporary)
                throw DatabaseFileError.io("write \(temporary)", error)
            }
            offset += written
        }
        if fsync(fd) != 0 {
            let error = errno
            close(fd)
            unlinkPath(temporary)
            throw DatabaseFileError.io("fsync \(temporary)", error)
        }
        close(fd)
        let renamed = RawText.withFilePath(temporary) { from in RawText.withFilePath(path) { rename(from, $0) } }
        guard renamed == 0 else {
            let error = errno
            unlinkPath(temporary)
            throw DatabaseFileError.io("rename \(temporary)", error)
        }
    }

    /// Loads a tree saved by `save`, or `nil` when the file is missing, old, scanned with other tags, or
    /// damaged. `reason` says which.
    public static func load(from path: String, tags: TagMask) -> (tree: TreeDirectory, updateTime: Int64)? {
        guard let data = try? readFile(atPath: path) else { return nil }
        var parser = Parser(bytes: data)
        return parser.parse(tags: tags)
    }

    static func encode(_ format: AudioFormat) -> String {
        "\(format.sampleRate):\(format.sampleFormat.wireName):\(format.channels)"
    }

    static func decodeFormat(_ text: Substring) -> AudioFormat? {
        let parts = text.split(separator: ":")
        guard parts.count == 3, let rate = Int(parts[0]), let channels = Int(parts[2]) else { return nil }
        let sample: SampleFormat
        switch parts[1] {
        case "8": sample = .s8
        case "16": sample = .s16
        case "24": sample = .s24
        case "32": sample = .s32
        case "f": sample = .float
        case "dsd": sample = .dsd
        default: return nil
        }
        return AudioFormat(sampleRate: rate, sampleFormat: sample, channels: channels)
    }

    private struct Parser {
        let bytes: [UInt8]
        var position = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func nextLine() -> Substring? {
            guard self.position < self.bytes.count else { return nil }
            let start = self.position
            while self.position < self.bytes.count && self.bytes[self.position] != 10 { self.position += 1 }
            let line = RawText.decode(self.bytes[start..<self.position])
            self.position += 1
            return Substring(line)
        }

        /// Reads a `T <index> <value>` line at the current position.
        mutating func tagLine() -> (Int, String)? {
            let count = self.bytes.count
            var cursor = self.position + 1
            guard cursor < count, self.bytes[cursor] == UInt8(ascii: " ") else { return nil }
            cursor += 1
            var index = 0
            var digits = 0
            while cursor < count, self.bytes[cursor] >= 0x30, self.bytes[cursor] <= 0x39, digits < 4 {
                index = index * 10 + Int(self.bytes[cursor] - 0x30)
                cursor += 1
                digits += 1
            }
            guard digits > 0, cursor < count, self.bytes[cursor] == UInt8(ascii: " ") else { return nil }
            let start = cursor + 1
            var end = start
            while end < count && self.bytes[end] != 10 { end += 1 }
            self.position = end + 1
            return (index, RawText.decode(self.bytes[start..<end]))
        }

        /// Splits off `count` space-separated fields; the rest of the line is the last element.
        static func fields(_ line: Substring, _ count: Int) -> [Substring]? {
            var result: [Substring] = []
            var rest = line
            for _ in 0..<count {
                guard let space = rest.firstIndex(of: " ") else { return nil }
                result.append(rest[..<space])
                rest = rest[rest.index(after: space)...]
            }
            result.append(rest)
            return result
        }

        mutating func parse(tags: TagMask) -> (tree: TreeDirectory, updateTime: Int64)? {
            guard self.nextLine() == "fermata-db \(DatabaseFile.version)" else { return nil }
            guard let updated = self.nextLine(), updated.hasPrefix("updated "),
                let updateTime = Int64(updated.dropFirst(8))
            else { return nil }
            guard let tagLine = self.nextLine(), tagLine.hasPrefix("tags ") else { return nil }
            let names = tagLine.dropFirst(5).split(separator: ",")
            let tagList = names.compactMap { TagType(exactName: $0) }
            guard tagList.count == names.count, TagMask(tagList) == tags else { return nil }

            // A stack of open directories by depth; each is folded into its parent when it closes.
            var stack: [TreeDirectory] = []
            var song: TreeSong?
            func closeSong() {
                if let finished = song { stack[stack.count - 1].songs[finished.name] = finished }
                song = nil
            }
            func close(to depth: Int) {
                while stack.count > depth {
                    let child = stack.removeLast()
                    stack[stack.count - 1].children[child.name] = child
                }
            }
            while self.position < self.bytes.count {
                // Tag lines are nearly all of the file: they are parsed from the bytes, and only the
                // value becomes a string.
                if self.bytes[self.position] == UInt8(ascii: "T") {
                    guard song != nil, let (index, value) = self.tagLine(), index < tagList.count else { return nil }
                    song!.info.tags.append(TagItem(tagList[index], value))
                    continue
                }
                guard let line = self.nextLine(), let kind = line.first else { return nil }
                switch kind {
                case "D":
                    guard let f = Self.fields(line, 5), let mtime = Int64(f[1]), let inode = UInt64(f[2]),
                        let device = UInt64(f[3]), let depth = Int(f[4])
                    else { return nil }
                    closeSong()
                    guard depth == 0 ? stack.isEmpty : (depth <= stack.count && depth >= 1) else { return nil }
                    if depth > 0 { close(to: depth) }
                    var directory = TreeDirectory(name: String(f[5]))
                    directory.modificationTime = mtime
                    directory.inode = inode
                    directory.device = device
                    stack.append(directory)
                case "S":
                    guard !stack.isEmpty, let f = Self.fields(line, 6), let mtime = Int64(f[1]), let size = Int64(f[2])
                    else { return nil }
                    closeSong()
                    var info = SongInfo()
                    if f[3] != "-" {
                        guard let duration = UInt64(f[3]) else { return nil }
                        info.durationMilliseconds = duration
                    }
                    if f[4] != "-" {
                        guard let format = DatabaseFile.decodeFormat(f[4]) else { return nil }
                        info.audioFormat = format
                    }
                    info.hasPicture = f[5] == "1"
                    song = TreeSong(name: String(f[6]), modificationTime: mtime, size: size, info: info)
                case "T":
                    guard song != nil, let f = Self.fields(line, 2), let index = Int(f[1]), index < tagList.count
                    else { return nil }
                    song!.info.tags.append(TagItem(tagList[index], String(f[2])))
                case "G":
                    guard song != nil, let f = Self.fields(line, 4) else { return nil }
                    let values = f[1...4].map { $0 == "-" ? nil : Double($0) }
                    song!.info.replayGain = ReplayGainInfo(
                        trackGain: values[0], trackPeak: values[1], albumGain: values[2], albumPeak: values[3])
                case "P":
                    guard !stack.isEmpty, let f = Self.fields(line, 2), let mtime = Int64(f[1]) else { return nil }
                    closeSong()
                    stack[stack.count - 1].playlists.append(TreePlaylist(name: String(f[2]), modificationTime: mtime))
                default:
                    return nil
                }
            }
            closeSong()
            guard !stack.isEmpty else { return nil }
            close(to: 1)
            return (stack[0], updateTime)
        }
    }
}

/// Why the database file could not be written.
public enum DatabaseFileError: Error, CustomStringConvertible {
    /// A system call failed.
    case io(String, Int32)

    /// One line.
    public var description: String {
        switch self {
        case .io(let what, let code): "\(what): \(String(cString: strerror(code)))"
        }
    }
}
