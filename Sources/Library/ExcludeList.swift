// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Glibc

/// The patterns of `.mpdignore` files: one shell wildcard per line, matched against names in that
/// directory and, as in `mpd`, in every directory below it. Missing or unreadable files exclude nothing.
struct ExcludeList {
    private let patterns: [String]

    /// No patterns.
    init() { self.patterns = [] }

    /// The parent's patterns plus those of `path`, if it exists.
    init(inheriting parent: ExcludeList, path: String) {
        guard let data = FileManager.default.contents(atPath: path) else {
            self.patterns = parent.patterns
            return
        }
        self.patterns = parent.patterns + String(decoding: data, as: UTF8.self)
            .split(whereSeparator: { $0 == "\n" || $0 == "\r\n" })
            .map { String($0).trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    /// Whether `name` matches a pattern.
    ///
    /// The corresponding C function is `fnmatch`.
    func matches(_ name: String) -> Bool {
        self.patterns.contains { fnmatch($0, name, 0) == 0 }
    }
}
