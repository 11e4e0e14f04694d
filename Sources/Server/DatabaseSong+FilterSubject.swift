// SPDX-License-Identifier: GPL-3.0-or-later

import Library
import Model

extension Database.Song: FilterSubject {
    public var lastModified: Int64? { self.modificationTime }

    public var audioFormat: AudioFormat? { self.info.audioFormat }

    public var presentTags: TagMask { self.info.presentTags }

    public func tagValues(_ type: TagType) -> LazyMapSequence<LazyFilterSequence<[TagItem]>, String> { self.info.tagValues(type) }
}

extension SongInfo {
    /// The values of one tag, lazily, for filter matching.
    typealias TagValues = LazyMapSequence<LazyFilterSequence<[TagItem]>, String>

    /// The values of `type`, in stored order.
    func tagValues(_ type: TagType) -> TagValues { self.tags.lazy.filter { $0.type == type }.map(\.value) }

    /// The tag types present.
    var presentTags: TagMask { TagMask(self.tags.lazy.map(\.type)) }

    /// `mpd`'s `Tag::GetSortValue`: the tag, else its non-sort base tag, else the fallbacks, else "".
    func sortValue(_ type: TagType) -> String {
        if let value = self.firstValue(type) { return value }
        let decayed: TagType? =
            switch type {
            case .artistSort: .artist
            case .albumSort: .album
            case .albumArtistSort: .albumArtist
            default: nil
            }
        if let decayed, let value = self.firstValue(decayed) { return value }
        func fallback(_ type: TagType) -> TagType? {
            switch type {
            case .albumArtist: .artist
            case .musicBrainzAlbumArtistID: .musicBrainzArtistID
            default: nil
            }
        }
        if let next = fallback(type) { return self.sortValue(next) }
        if let decayed, let next = fallback(decayed) { return self.sortValue(next) }
        return ""
    }

    /// Calls `body` for every value of `type`, or of its fallbacks, or once with "" (`mpd`'s
    /// `VisitTagWithFallbackOrEmpty`).
    func visitWithFallbackOrEmpty(_ type: TagType, _ body: (String) -> Void) {
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
