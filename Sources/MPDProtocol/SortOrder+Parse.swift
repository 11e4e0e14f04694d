// SPDX-License-Identifier: GPL-3.0-or-later

import Model

extension SortOrder {
    /// Parses TYPE: `[-]NAME`, where NAME is a tag name or `Last-Modified`, ASCII-case-insensitively.
    ///
    /// - Throws: `ACK` code 2 `Unknown sort tag` (also for `file`, `any`, `AudioFormat` or an empty name).
    public static func parse(_ text: String) throws(AckError) -> SortOrder {
        var name = FilterCNumbers.cString(text)[...]
        var descending = false
        if name.first == UInt8(ascii: "-") {
            descending = true
            name = name.dropFirst()
        }
        if FilterCNumbers.equalsIgnoringASCIICase(name, "Last-Modified") {
            return SortOrder(key: .lastModified, descending: descending)
        }
        guard let tag = FilterCNumbers.tagType(name) else { throw AckError(.arg, "Unknown sort tag") }
        return SortOrder(key: .tag(tag), descending: descending)
    }
}
