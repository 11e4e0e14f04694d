// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Posix
import RawText

/// The `.m3u` text of a stored playlist, read and written as `mpd` does: one URI per line, `#` lines
/// are comments, song paths relative to the music directory (or absolute with
/// `save_absolute_paths_in_playlists`), URLs as written. Pure: no I/O.
public enum PlaylistFile {
    /// The lines of a file: split at `\n`, one trailing `\r` removed, a last line without a newline
    /// kept.
    static func lines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }
        return lines.map { line in line.last == UInt8(ascii: "\r") ? line.dropLast() : line }
    }

    /// The entries as `mpd` loads them to edit a playlist (`playlistadd` at a position,
    /// `playlistdelete`, `playlistmove`): comment and empty lines skipped, an absolute path inside the
    /// music directory made relative, at most `limit` entries.
    ///
    /// - Parameters:
    ///   - musicDirectory: the absolute music directory, if any.
    ///   - charset: the lines' character set (`filesystem_charset`: `mpd` writes and reads them as file names).
    public static func editableEntries(
        _ bytes: [UInt8], musicDirectory: String?, limit: Int, charset: FileSystemCharset = .current
    ) -> [String] {
        var entries: [String] = []
        for line in Self.lines(bytes) {
            guard let first = line.first, first != UInt8(ascii: "#") else { continue }
            var uri = charset.decode(line)
            if !URIScheme.hasScheme(uri), uri.hasPrefix("/"), let relative = Self.relative(uri, to: musicDirectory) {
                uri = relative
            }
            entries.append(uri)
            if entries.count >= limit { break }
        }
        return entries
    }

    /// The line written for `uri`: as given, or under the music directory when absolute paths are
    /// asked for and `uri` is a song path. `nil` when `mpd` would skip it (an absolute path is asked
    /// for but there is no music directory).
    public static func line(for uri: String, absolutePaths: Bool, musicDirectory: String?) -> String? {
        guard absolutePaths, !URIScheme.hasScheme(uri), !uri.hasPrefix("/") else { return uri }
        guard let musicDirectory else { return nil }
        return musicDirectory.hasSuffix("/") ? musicDirectory + uri : musicDirectory + "/" + uri
    }

    /// The file content for `uris`, one line each, in `charset` (`filesystem_charset`).
    public static func content(
        _ uris: [String], absolutePaths: Bool, musicDirectory: String?, charset: FileSystemCharset = .current
    ) -> [UInt8] {
        var builder = Builder(absolutePaths: absolutePaths, musicDirectory: musicDirectory, charset: charset)
        for uri in uris { builder.append(uri) }
        return builder.bytes
    }

    /// A file's content made URI by URI, each line as ``line(for:absolutePaths:musicDirectory:)`` makes it, in
    /// `charset`; a song path in the music directory also from its directory and its name's bytes, copied as they
    /// are when neither a character set nor absolute paths change them (no string made per song).
    public struct Builder {
        /// The content so far.
        public private(set) var bytes: [UInt8] = []
        private let absolutePaths: Bool
        private let musicDirectory: String?
        private let charset: FileSystemCharset
        /// The number of the last directory `append(directory:path:name:)` was given (-1: none yet), and the bytes
        /// of its path with a slash (none for the root).
        private var directory: Int32 = -1
        private var directoryBytes: [UInt8] = []

        /// An empty content.
        public init(absolutePaths: Bool, musicDirectory: String?, charset: FileSystemCharset = .current) {
            self.absolutePaths = absolutePaths
            self.musicDirectory = musicDirectory
            self.charset = charset
        }

        /// Appends the line for `uri` (none when `line(for:…)` skips it).
        public mutating func append(_ uri: String) {
            guard
                let line = PlaylistFile.line(
                    for: uri, absolutePaths: self.absolutePaths, musicDirectory: self.musicDirectory)
            else { return }
            if self.charset.conversion == nil, !RawText.containsEscape(line) {
                self.bytes.append(contentsOf: line.utf8)
            } else {
                self.bytes.append(contentsOf: self.charset.encode(line))
            }
            self.bytes.append(UInt8(ascii: "\n"))
        }

        /// Whether lines are the songs' relative paths as they are (no charset conversion, no absolute paths): then
        /// ``append(path:name:)`` takes them as bytes.
        public var takesRelativePaths: Bool { self.charset.conversion == nil && !self.absolutePaths }

        /// Appends the line `PATH/name` (`name` alone when `path` is empty, the root) of a song's directory path and
        /// file name, as their raw bytes. Only when ``takesRelativePaths``.
        public mutating func append(path: UnsafeBufferPointer<UInt8>, name: UnsafeBufferPointer<UInt8>) {
            assert(self.takesRelativePaths, "a line of bytes where the path needs converting")
            if !path.isEmpty {
                self.bytes.append(contentsOf: path)
                self.bytes.append(UInt8(ascii: "/"))
            }
            self.bytes.append(contentsOf: name)
            self.bytes.append(UInt8(ascii: "\n"))
        }

        /// Appends the line for the song path `PATH/name` (`name` alone in the root, whose path is ""): `directory`
        /// is a number (≥ 0) that stands for one directory, whose relative path `path` gives (asked once for a run of
        /// songs of one directory); `name` is the file name's bytes (a `RawText` string's raw bytes).
        public mutating func append(
            directory: Int32, path: () -> String, name: UnsafeBufferPointer<UInt8>
        ) {
            guard self.charset.conversion == nil, !self.absolutePaths else {
                let (path, decoded) = (path(), RawText.decode(name))
                self.append(path.isEmpty ? decoded : path + "/" + decoded)
                return
            }
            if directory != self.directory {
                self.directory = directory
                let path = path()
                // In the storage of the one before: in a shuffled queue the directory changes at almost every song.
                self.directoryBytes.removeAll(keepingCapacity: true)
                let plain =
                    path.utf8.withContiguousStorageIfAvailable { utf8 in
                        guard !utf8.contains(RawText.escapeLeadByte) else { return false }
                        self.directoryBytes.append(contentsOf: utf8)
                        return true
                    } ?? false
                if !plain { self.directoryBytes.append(contentsOf: RawText.encode(path)) }
                if !path.isEmpty { self.directoryBytes.append(UInt8(ascii: "/")) }
            }
            self.bytes.append(contentsOf: self.directoryBytes)
            self.bytes.append(contentsOf: name)
            self.bytes.append(UInt8(ascii: "\n"))
        }
    }

    /// `path` relative to `directory` when it lies strictly inside it.
    public static func relative(_ path: String, to directory: String?) -> String? {
        guard let directory else { return nil }
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        guard path.hasPrefix(prefix), path.count > prefix.count else { return nil }
        return String(path.dropFirst(prefix.count))
    }

    /// `mpd`'s `uri_squash_dot_segments`: `.` segments dropped, each `..` removes the segment before it
    /// (and is dropped when there is none).
    public static func squashDotSegments(_ uri: String) -> String {
        // Most URIs have no such segment: then the split and the join give the URI back.
        guard Self.hasDotSegment(uri) else { return uri }
        var kept: [Substring] = []
        var skips = 0
        for segment in uri.split(separator: "/", omittingEmptySubsequences: false).reversed() where segment != "." {
            if segment == ".." {
                skips += 1
            } else if skips > 0 {
                skips -= 1
            } else {
                kept.append(segment)
            }
        }
        return kept.reversed().joined(separator: "/")
    }

    /// Whether a `/`-separated segment of `uri` is `.` or `..`.
    static func hasDotSegment(_ uri: String) -> Bool {
        var length = 0
        var dots = 0
        for byte in uri.utf8 {
            if byte == UInt8(ascii: "/") {
                if length > 0 && length <= 2 && dots == length { return true }
                (length, dots) = (0, 0)
            } else {
                length += 1
                if byte == UInt8(ascii: ".") { dots += 1 }
            }
        }
        return length > 0 && length <= 2 && dots == length
    }
}
