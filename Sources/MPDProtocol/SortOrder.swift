// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// What `sort TYPE` orders results by.
public enum SortKey: Sendable, Hashable {
    /// A tag's first value, falling back for `*Sort` tags to the plain tag and then AlbumArtist→Artist, and
    /// finally `""`; Track and Disc compare as integers (`strtol`), others byte-wise.
    case tag(TagType)
    /// The file's modification time (`Last-Modified`).
    case lastModified
}

/// A parsed `sort TYPE` argument.
public struct SortOrder: Sendable, Hashable {
    /// The sort key.
    public var key: SortKey
    /// Whether TYPE had a leading `-`.
    public var descending: Bool

    /// Creates an order.
    public init(key: SortKey, descending: Bool = false) {
        self.key = key
        self.descending = descending
    }

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
