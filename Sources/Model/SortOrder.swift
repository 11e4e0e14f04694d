// SPDX-License-Identifier: GPL-3.0-or-later

/// What `sort TYPE` orders results by.
public enum SortKey: Sendable, Hashable {
    /// A tag's first value, falling back for `*Sort` tags to the plain tag and then AlbumArtist→Artist, and
    /// finally `""`; Track and Disc compare as integers (`strtol`), others byte-wise.
    case tag(TagType)
    /// The file's modification time (`Last-Modified`).
    case lastModified
}

/// A sort key and its direction (`sort [-]TYPE`; MPDProtocol parses it).
public struct SortOrder: Sendable, Hashable {
    /// The sort key.
    public var key: SortKey
    /// Whether TYPE had a leading `-`, which swaps the operands.
    public var descending: Bool

    /// Creates an order.
    public init(key: SortKey, descending: Bool = false) {
        self.key = key
        self.descending = descending
    }
}
