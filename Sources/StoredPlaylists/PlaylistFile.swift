// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Posix

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
        var bytes: [UInt8] = []
        for uri in uris {
            guard let line = Self.line(for: uri, absolutePaths: absolutePaths, musicDirectory: musicDirectory)
            else { continue }
            bytes += charset.encode(line)
            bytes.append(UInt8(ascii: "\n"))
        }
        return bytes
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
