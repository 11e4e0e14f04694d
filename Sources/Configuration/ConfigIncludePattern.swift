// SPDX-License-Identifier: GPL-3.0-or-later

import Posix

/// Turns the argument of an `include` line into the paths to read, as `mpd` 0.23 does.
///
/// A relative pattern is taken relative to the including file's directory (`.` when the including path has no
/// slash). `*` and `?` are wildcards in the last path component only; elsewhere, and `[`, are literal. Wildcard
/// matches are read in name order. Unlike `mpd`, which also matches `.` and `..` and then fails on them, the
/// directory entries `.` and `..` are never matched; other hidden files are.
struct ConfigIncludePattern {
    /// The pattern joined to the including file's directory.
    let path: String

    /// Resolves `pattern` against the file that includes it.
    ///
    /// - Parameters:
    ///   - pattern: The unquoted value of the `include` line.
    ///   - includingFile: The path of the file holding the `include` line.
    init(_ pattern: String, includingFile: String) {
        self.path = pattern.hasPrefix("/") ? pattern : Self.join(Self.directory(of: includingFile), pattern)
    }

    /// Whether the last path component holds a wildcard.
    var hasWildcard: Bool {
        let (_, name) = Self.split(self.path)
        return name.contains("*") || name.contains("?")
    }

    /// The files to read: the path itself, or the sorted wildcard matches in its directory.
    ///
    /// - Parameter isOptional: Whether a missing directory yields no files instead of an error.
    /// - Returns: The paths, or the `mpd`-style message when the wildcard's directory cannot be listed.
    func expand(isOptional: Bool) -> Result<[String], ConfigLineScanner.Failure> {
        guard self.hasWildcard else { return .success([self.path]) }
        let (directory, name) = Self.split(self.path)
        let entries: [String]
        do {
            entries = try DirectoryEntries.names(in: directory)
        } catch {
            if isOptional { return .success([]) }
            let kind = (try? FileStatus(path: directory))?.kind
            let reason =
                kind == nil ? "No such file or directory" : kind != .directory ? "Not a directory" : "Permission denied"
            return .failure(ConfigLineScanner.Failure(message: "Failed to open \(directory): \(reason)"))
        }
        let pattern = Array(name)
        let matches = entries.filter { Self.matches(Array($0), pattern) }
        return .success(matches.sorted().map { Self.join(directory, $0) })
    }

    // MARK: - Paths

    /// The directory part of `path`: `.` without a slash, `/` for a file in the root.
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// `directory/name`, without doubling a trailing slash.
    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    private static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        return (Self.directory(of: path), String(path[path.index(after: slash)...]))
    }

    /// Matches `name` against a pattern where `*` is any run of characters and `?` is one character.
    static func matches(_ name: [Character], _ pattern: [Character]) -> Bool {
        var nameIndex = 0
        var patternIndex = 0
        var starPattern: Int? = nil
        var starName = 0
        while nameIndex < name.count {
            if patternIndex < pattern.count, pattern[patternIndex] == "*" {
                starPattern = patternIndex
                starName = nameIndex
                patternIndex += 1
            } else if patternIndex < pattern.count,
                pattern[patternIndex] == "?" || pattern[patternIndex] == name[nameIndex]
            {
                patternIndex += 1
                nameIndex += 1
            } else if let star = starPattern {
                patternIndex = star + 1
                starName += 1
                nameIndex = starName
            } else {
                return false
            }
        }
        while patternIndex < pattern.count, pattern[patternIndex] == "*" { patternIndex += 1 }
        return patternIndex == pattern.count
    }
}
