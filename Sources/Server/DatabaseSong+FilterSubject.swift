// SPDX-License-Identifier: GPL-3.0-or-later

import Library
import Model

extension Database.Song: FilterSubject {
    public var lastModified: Int64? { self.modificationTime }

    public var audioFormat: AudioFormat? { self.info.audioFormat }

    public var presentTags: TagMask { TagMask(self.info.tags.lazy.map(\.type)) }

    public func tagValues(
        _ type: TagType
    ) -> LazyMapSequence<LazyFilterSequence<[TagItem]>, String> {
        self.info.tags.lazy.filter { $0.type == type }.map(\.value)
    }
}
