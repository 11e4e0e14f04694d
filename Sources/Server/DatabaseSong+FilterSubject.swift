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
}
