// SPDX-License-Identifier: GPL-3.0-or-later

/// Finds and parses a file's ID3 tag the way `mpd` 0.23 does (`tag_id3_load`).
///
/// 1. An ID3v2 tag at offset 0 (an ID3v1 tag there is ignored), then any chain of `SEEK` frames, each
///    offset counted from the end of the tag just read; a `SEEK` that leads nowhere keeps the last tag.
/// 2. Otherwise the ID3v1 tag in the last 128 bytes, replaced by an ID3v2 tag whose footer sits right
///    before it (or at the end of the file) if that can be parsed.
///
/// A tag is read in full, however large, only if the file holds all of it (`mpd` reads what the header
/// claims, at most 256 MiB by the ID3v2 size field). Any thread.
public enum ID3Loader {
    private static let id3v1Size = 128

    /// The tag `mpd` would use, or `nil` when there is none (or none that parses).
    public static func load(from file: TagSourceFile) -> ID3Tag? {
        if let tag = self.fromBeginning(file) { return tag }
        return self.fromEnd(file)
    }

    /// Reads the tag starting at `offset`.
    ///
    /// - Returns: the tag (if it parses) and the offset just past the bytes read.
    static func readTag(_ file: TagSourceFile, at offset: Int) -> (tag: ID3Tag?, end: Int) {
        guard let header = file.readFully(at: offset, count: ID3Tag.querySize) else { return (nil, offset) }
        let size = ID3Tag.query(header)
        guard size > 0 else { return (nil, offset + header.count) }
        if size <= header.count {
            return (ID3Tag(parsing: Array(header.prefix(size))), offset + header.count)
        }
        guard let rest = file.readFully(at: offset + header.count, count: size - header.count) else {
            return (nil, offset + header.count)
        }
        return (ID3Tag(parsing: header + rest), offset + size)
    }

    static func fromBeginning(_ file: TagSourceFile) -> ID3Tag? {
        var (found, end) = self.readTag(file, at: 0)
        guard var tag = found, !tag.isID3v1 else { return nil }
        while let seek = tag.seekOffset {
            guard seek >= 0 else { break }
            (found, end) = self.readTag(file, at: end + seek)
            guard let next = found, !next.isID3v1 else { break }
            tag = next
        }
        return tag
    }

    static func fromEnd(_ file: TagSourceFile) -> ID3Tag? {
        let size = file.size
        guard size >= self.id3v1Size else { return nil }
        var offset = size - self.id3v1Size
        let v1 = file.readFully(at: offset, count: self.id3v1Size).flatMap { ID3Tag(parsing: $0) }
        if v1 == nil { offset = size }
        guard offset >= ID3Tag.querySize,
            let footer = file.readFully(at: offset - ID3Tag.querySize, count: ID3Tag.querySize)
        else { return v1 }
        let query = ID3Tag.query(footer)
        guard query < 0 else { return v1 }
        // mpd steps back by the size the footer query reports (body + 10), not to the tag's header.
        let tagSize = -query
        guard tagSize <= offset, let tag = self.readTag(file, at: offset - tagSize).tag else { return v1 }
        return tag
    }
}
