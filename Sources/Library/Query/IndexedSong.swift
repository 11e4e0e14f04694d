// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// A database song as a filter subject whose folded tag values come from the snapshot's `FoldedTagIndex`es,
/// so a case-insensitive filter folds only its needle.
///
/// Points to the snapshot's `SongTable` (valid only inside `withUnsafePointer`) so that matching copies no song
/// and no table: values are read from its columns as the filter asks for them.
struct IndexedSong: FilterSubject {
    let songs: UnsafePointer<SongTable>
    let index: Int32
    /// The folded values the filter reads.
    unowned(unsafe) let folded: FoldedTables

    /// The URI; for a song of a mounted storage relative to the storage, as `mpd`'s mounted database matches it
    /// (not a queued song's: the queue matches the full URI).
    var uri: String {
        let uri = self.songs.pointee.uri(self.index)
        guard let mount = self.mountPoint else { return uri }
        return String(uri.utf8.dropFirst(mount.utf8.count + 1))!
    }

    var mountPoint: String? {
        self.folded.mounted?.mountPoint(ofDirectory: self.songs.pointee.directory(self.index))
    }

    var lastModified: Int64? { self.songs.pointee.modificationTime(self.index) }

    /// The format; none for a song matched as a queued song.
    var audioFormat: AudioFormat? { self.folded.queued ? nil : self.songs.pointee.audioFormat(self.index) }

    var presentTags: TagMask { self.songs.pointee.presentTags(self.index) }

    func tagValues(_ type: TagType) -> LazyMapSequence<LazyFilterSequence<Range<Int>>, String> {
        let songs = self.songs
        return songs.pointee.tagPositions(self.index).lazy.filter { songs.pointee.tagType(at: $0) == type }.map {
            songs.pointee.values[songs.pointee.valueNumber(at: $0)]
        }
    }

    func foldedTagValues(_ type: TagType) -> FoldedValues {
        if let index = self.folded.indexes[type.rawValue] {
            return FoldedValues(source: .index(index, index.ids(of: self.index)))
        }
        return FoldedValues(source: .table(self.songs, self.songs.pointee.tagPositions(self.index), type))
    }
}

/// A song's folded values of one tag type: from a `FoldedTagIndex` when the filter prepared one, otherwise
/// folded from the table as they are read (a filter folding `any`, which reads every tag type).
struct FoldedValues: Sequence, IteratorProtocol {
    enum Source {
        /// The index and the numbers of the song's values in it.
        case index(FoldedTagIndex, ArraySlice<Int32>)
        /// The song's tag positions in the table, and the type wanted.
        case table(UnsafePointer<SongTable>, Range<Int>, TagType)
    }

    var source: Source

    mutating func next() -> FoldedText? {
        switch self.source {
        case .index(let index, var ids):
            guard let id = ids.popFirst() else { return nil }
            self.source = .index(index, ids)
            return index.value(id)
        case .table(let songs, var positions, let type):
            while let position = positions.popFirst() {
                guard songs.pointee.tagType(at: position) == type else { continue }
                self.source = .table(songs, positions, type)
                return FoldedText(folding: songs.pointee.values[songs.pointee.valueNumber(at: position)])
            }
            self.source = .table(songs, positions, type)
            return nil
        }
    }
}
