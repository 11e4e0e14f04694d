// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import RawText

/// One song a playlist file names, as `mpd`'s playlist plugins give it (a `DetachedSong` before it is
/// translated): the URI as written, the tags the playlist gave, and for cue tracks a range of the file.
public struct PlaylistEntry: Sendable, Hashable {
    /// The URI as the playlist writes it (relative to the playlist's directory, absolute, or a URL); bytes
    /// that are not UTF-8 are kept as `RawText` escapes.
    public var uri: String
    /// Tags from the playlist, in the order `mpd` adds them (already through `TagString.fixed`).
    public var tags: [TagItem]
    /// The length the playlist gives, in milliseconds; `nil` when it gives none (or `mpd`'s 32-bit
    /// millisecond count would be negative).
    public var durationMilliseconds: UInt64?
    /// Where the song starts in the file, in milliseconds (cue tracks); 0 is the beginning.
    public var startMilliseconds: UInt64
    /// Where it ends, in milliseconds; 0 is the end of the file.
    public var endMilliseconds: UInt64

    /// Creates an entry.
    public init(
        uri: String, tags: [TagItem] = [], durationMilliseconds: UInt64? = nil, startMilliseconds: UInt64 = 0,
        endMilliseconds: UInt64 = 0
    ) {
        self.uri = uri
        self.tags = tags
        self.durationMilliseconds = durationMilliseconds
        self.startMilliseconds = startMilliseconds
        self.endMilliseconds = endMilliseconds
    }
}

/// `mpd`'s `TagBuilder` as the playlist plugins use it: items added in order (empty values dropped, the
/// rest through `FixTagString`) and a duration in `mpd`'s signed 32-bit milliseconds.
struct TagBuilder: Sendable, Hashable {
    var items: [TagItem] = []
    /// Milliseconds; negative is unknown.
    var duration: Int32 = -1

    /// `AddItem`: nothing for an empty value.
    mutating func add(_ type: TagType, _ value: some Collection<UInt8>) {
        guard !value.isEmpty else { return }
        self.items.append(TagItem(type, TagString.fixed(value)))
    }

    /// `SetDuration(SignedSongTime::FromS(seconds))`: the product wraps in 32 bits as `mpd`'s does.
    mutating func setDuration(seconds: UInt32) {
        self.duration = Int32(truncatingIfNeeded: seconds) &* 1000
    }

    /// The entry for `uri` with these tags (`Commit`: the builder is left empty).
    mutating func commit(uri: String) -> PlaylistEntry {
        defer { self = TagBuilder() }
        return PlaylistEntry(
            uri: uri, tags: self.items, durationMilliseconds: self.duration < 0 ? nil : UInt64(self.duration))
    }
}
