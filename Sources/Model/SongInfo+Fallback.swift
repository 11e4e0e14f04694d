// SPDX-License-Identifier: GPL-3.0-or-later

extension SongInfo {
    /// `mpd`'s `Tag::GetSortValue`: the tag, else its non-sort base tag, else the fallbacks, else "".
    public func sortValue(_ type: TagType) -> String { Self.sortValue(type, firstValue: self.firstValue) }

    /// `sortValue(_:)` for a song whose first value of each tag type `firstValue` gives.
    public static func sortValue(_ type: TagType, firstValue: (TagType) -> String?) -> String {
        if let value = firstValue(type) { return value }
        let decayed: TagType? =
            switch type {
            case .artistSort: .artist
            case .albumSort: .album
            case .albumArtistSort: .albumArtist
            default: nil
            }
        if let decayed, let value = firstValue(decayed) { return value }
        func fallback(_ type: TagType) -> TagType? {
            switch type {
            case .albumArtist: .artist
            case .musicBrainzAlbumArtistID: .musicBrainzArtistID
            default: nil
            }
        }
        if let next = fallback(type) { return Self.sortValue(next, firstValue: firstValue) }
        if let decayed, let next = fallback(decayed) { return Self.sortValue(next, firstValue: firstValue) }
        return ""
    }

    /// Calls `body` for every value of `type`, or of its fallbacks, or once with "" (`mpd`'s
    /// `VisitTagWithFallbackOrEmpty`).
    public func visitWithFallbackOrEmpty(_ type: TagType, _ body: (String) -> Void) {
        if self.visitValues(type, body) { return }
        for candidate in type.fallbackTags where self.visitValues(candidate, body) { return }
        body("")
    }

    /// Calls `body` for every value of `type`; returns whether there was any.
    private func visitValues(_ type: TagType, _ body: (String) -> Void) -> Bool {
        var found = false
        for item in self.tags where item.type == type {
            found = true
            body(item.value)
        }
        return found
    }
}
