// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Posix
import RawText

/// The patterns of `.mpdignore` files: one shell wildcard per line, matched against names in that
/// directory and, as in `mpd`, in every directory below it. Missing or unreadable files exclude nothing.
struct ExcludeList {
    /// The patterns as the NUL-terminated bytes `fnmatch` takes, each made once where its file is read (every name
    /// a walk meets is matched; a directory inherits its parent's as they are).
    private let filePatterns: [[CChar]]

    /// No patterns.
    init() { self.filePatterns = [] }

    /// The parent's patterns plus those of `path`, if it exists.
    init(inheriting parent: ExcludeList, path: String) {
        self.init(inheriting: parent, data: (try? readFile(atPath: path)) ?? [])
    }

    /// The parent's patterns plus those of a file's bytes.
    init(inheriting parent: ExcludeList, data: [UInt8]) {
        let own = RawText.decode(data)
            .split(whereSeparator: { $0 == "\n" || $0 == "\r\n" })
            .map(Self.trimmingBlanks)
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        self.filePatterns =
            parent.filePatterns
            + own.map { pattern in
                RawText.withFilePath(pattern) { Array(UnsafeBufferPointer(start: $0, count: strlen($0) + 1)) }
            }
    }

    /// `line` without the blanks around it: tabs and Unicode space separators (what Foundation's
    /// `CharacterSet.whitespaces` holds).
    static func trimmingBlanks(_ line: Substring) -> String {
        let isBlank = { (scalar: Unicode.Scalar) in
            scalar == "\t" || scalar.properties.generalCategory == .spaceSeparator
        }
        let scalars = line.unicodeScalars
        guard let first = scalars.firstIndex(where: { !isBlank($0) }) else { return "" }
        let last = scalars.lastIndex(where: { !isBlank($0) })!
        return String(scalars[first...last])
    }

    /// Whether `name` matches a pattern.
    ///
    /// The corresponding C function is `fnmatch`.
    func matches(_ name: String) -> Bool {
        guard !self.filePatterns.isEmpty else { return false }
        return FileSystemCharset.withFilePath(name) { name in
            self.filePatterns.contains { fnmatch($0, name, 0) == 0 }
        }
    }
}
