// SPDX-License-Identifier: GPL-3.0-or-later

/// Finds and parses a file's ID3 tag the way `mpd` 0.23 does (`tag_id3_load`).
///
/// 1. An ID3v2 tag at offset 0 (an ID3v1 tag there is ignored), then any chain of `SEEK` frames, each
///    offset counted from the end of the tag just read; a `SEEK` that leads nowhere keeps the last tag.
/// 2. Otherwise, in a RIFF (WAV) file, the first `id3 ` or `ID3 ` chunk; in an AIFF/AIFC file, the first
///    `ID3 ` chunk (`mpd`'s `riff_seek_id3`/`aiff_seek_id3`): at most 4 MiB, parsed from the chunk's start.
/// 3. Otherwise the ID3v1 tag in the last 128 bytes, replaced by an ID3v2 tag whose footer sits right
///    before it (or at the end of the file) if that can be parsed.
///
/// A tag is read in full, however large, only if the file holds all of it (`mpd` reads what the header
/// claims, at most 256 MiB by the ID3v2 size field). Any thread.
public enum ID3Loader {
    private static let id3v1Size = 128

    /// The tag `mpd` would use, or `nil` when there is none (or none that parses).
    public static func load(from file: TagSourceFile) -> ID3Tag? {
        if let tag = self.fromBeginning(file) { return tag }
        if let tag = self.fromChunk(file) { return tag }
        return self.fromEnd(file)
    }

    /// The largest ID3 chunk `mpd` reads.
    static let maximumChunkSize = 4 * 1024 * 1024

    /// The tag in a RIFF or AIFF file's ID3 chunk, if there is one and it parses.
    static func fromChunk(_ file: TagSourceFile) -> ID3Tag? {
        guard let chunk = self.riffID3Chunk(file) ?? self.aiffID3Chunk(file), chunk.size <= self.maximumChunkSize,
            let bytes = file.readFully(at: chunk.offset, count: chunk.size)
        else { return nil }
        return ID3Tag(parsing: bytes)
    }

    /// Where the body of a RIFF file's first `id3 `/`ID3 ` chunk starts and the size its header claims
    /// (not checked against the file: reading it fails if the file is shorter).
    ///
    /// - Returns: `nil` when the file is not RIFF (`RIFF` and a size no larger than the file) or has no such
    ///   chunk before a chunk header that does not fit or claims more than 2³¹ − 1 bytes.
    public static func riffID3Chunk(_ file: TagSourceFile) -> (offset: Int, size: Int)? {
        guard let header = file.readFully(at: 0, count: 12), header.prefix(4).elementsEqual("RIFF".utf8),
            Int(self.uint32(header, 4, bigEndian: false)) <= file.size
        else { return nil }
        return self.findChunk(file, ids: ["id3 ", "ID3 "], bigEndian: false)
    }

    /// Where the body of an AIFF/AIFC file's first `ID3 ` chunk starts and the size its header claims.
    ///
    /// - Returns: `nil` when the file is not AIFF (`FORM`, a size no larger than the file, `AIFF` or `AIFC`) or
    ///   has no such chunk before a chunk header that does not fit or claims more than 2³¹ − 1 bytes.
    public static func aiffID3Chunk(_ file: TagSourceFile) -> (offset: Int, size: Int)? {
        guard let header = file.readFully(at: 0, count: 12), header.prefix(4).elementsEqual("FORM".utf8),
            Int(self.uint32(header, 4, bigEndian: true)) <= file.size,
            header[8..<12].elementsEqual("AIFF".utf8) || header[8..<12].elementsEqual("AIFC".utf8)
        else { return nil }
        return self.findChunk(file, ids: ["ID3 "], bigEndian: true)
    }

    /// Walks the chunks after the 12-byte file header (odd sizes padded) until one named in `ids`. Each step
    /// moves at least 8 bytes forward and stops at the end of the file, so it ends whatever the sizes say.
    private static func findChunk(_ file: TagSourceFile, ids: [String], bigEndian: Bool) -> (offset: Int, size: Int)? {
        var position = 12
        while let header = file.readFully(at: position, count: 8) {
            let size = Int(self.uint32(header, 4, bigEndian: bigEndian))
            guard size <= Int(Int32.max) else { return nil }
            if ids.contains(where: { header.prefix(4).elementsEqual($0.utf8) }) { return (position + 8, size) }
            position += 8 + size + (size & 1)
        }
        return nil
    }

    private static func uint32(_ bytes: [UInt8], _ offset: Int, bigEndian: Bool) -> UInt32 {
        let value = bytes[offset..<(offset + 4)].enumerated().reduce(UInt32(0)) {
            $0 | UInt32($1.element) << (8 * $1.offset)
        }
        return bigEndian ? value.byteSwapped : value
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

    /// The ID3v2 tag at offset 0 and its `SEEK` chain (step 1 alone): all `mpd` looks for in a stream whose
    /// seeking is not cheap (`tag_id3_load` over HTTP). `nil` when there is none that parses.
    public static func fromBeginning(_ file: TagSourceFile) -> ID3Tag? {
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
