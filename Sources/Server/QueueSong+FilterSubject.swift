// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Playback

/// `playlistfind` and `playlistsearch` match queue songs as `mpd` does: through its light view of a queue song,
/// which carries no audio format (so an `AudioFormat` filter never matches).
extension QueueSong: FilterSubject {
    public var lastModified: Int64? { self.modificationTime }

    public var audioFormat: AudioFormat? { nil }

    public var presentTags: TagMask { TagMask(self.info.tags.lazy.map(\.type)) }

    public func tagValues(_ type: TagType) -> LazyMapSequence<LazyFilterSequence<[TagItem]>, String> {
        self.info.tags.lazy.filter { $0.type == type }.map(\.value)
    }
}
