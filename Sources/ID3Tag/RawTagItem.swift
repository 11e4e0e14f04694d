// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// A tag value as a tag reader hands it to `mpd`'s tag handler: raw UTF-8 bytes, before the tag builder's
/// clean-ups (Track/Disc number normalising, dropping empty values, fixing invalid UTF-8 and control
/// characters). The bytes may contain NULs or invalid UTF-8 when the file does.
public struct RawTagItem: Sendable, Hashable {
    /// The tag type.
    public var type: TagType
    /// The value bytes.
    public var value: [UInt8]

    /// Creates an item.
    public init(_ type: TagType, _ value: [UInt8]) {
        self.type = type
        self.value = value
    }

    /// Creates an item from text.
    public init(_ type: TagType, _ value: String) {
        self.type = type
        self.value = Array(value.utf8)
    }
}

/// A name/value pair a tag reader reports besides tags (ID3 `TXXX`, APE items): used for ReplayGain,
/// MixRamp and the `cuesheet` check.
public struct RawTagPair: Sendable, Hashable {
    /// The name bytes.
    public var name: [UInt8]
    /// The value bytes.
    public var value: [UInt8]

    /// Creates a pair.
    public init(name: [UInt8], value: [UInt8]) {
        self.name = name
        self.value = value
    }
}
