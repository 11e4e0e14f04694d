// SPDX-License-Identifier: GPL-3.0-or-later

import CID3Tag
import Glibc
import Model

/// A parsed ID3 tag (v1, v2.2, v2.3 or v2.4) owned by libid3tag; freed when released.
///
/// libid3tag only ever sees bytes this module read itself. It translates v2.2/v2.3 frame IDs to v2.4 ones
/// (`TT2`/`TIT2`, `TYER`→`TDRC`, `PIC`→`APIC`…) and ID3v1 fields into the same frames, and decodes every
/// text encoding to UCS-4, so callers see one model. Any thread, one at a time.
public final class ID3Tag {
    private let tag: UnsafeMutablePointer<id3_tag>

    /// The number of bytes `query(_:)` needs (`ID3_TAG_QUERYSIZE`).
    public static let querySize = 10

    /// Asks libid3tag whether a tag starts (or an ID3v2 footer ends) at the start of `bytes`.
    ///
    /// - Returns: the size of a tag starting here (128 for ID3v1; header, body and footer for ID3v2), minus
    ///   the footer-reported size minus 10 for an ID3v2 footer, or 0 for no tag (`id3_tag_query`).
    public static func query(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return 0 }
        return id3_tag_query(base.assumingMemoryBound(to: id3_byte_t.self), id3_length_t(bytes.count))
    }

    /// `query(_:)` on an array.
    public static func query(_ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBytes { Self.query($0) }
    }

    /// Parses a whole tag (`id3_tag_parse`); libid3tag copies what it keeps.
    ///
    /// - Returns: `nil` when `bytes` do not start with a tag libid3tag can parse.
    public init?(parsing bytes: [UInt8]) {
        guard !bytes.isEmpty else { return nil }
        let parsed = bytes.withUnsafeBufferPointer { buffer in
            id3_tag_parse(buffer.baseAddress, id3_length_t(buffer.count))
        }
        guard let parsed else { return nil }
        self.tag = parsed
    }

    deinit { id3_tag_delete(self.tag) }

    /// Whether this tag came from an ID3v1 tag.
    public var isID3v1: Bool {
        (id3_tag_options(self.tag, 0, 0) & Int32(ID3_TAG_OPTION_ID3V1)) != 0
    }

    /// The ID3v2 version as libid3tag reports it (`0x0400` for v2.4.0; `0x0100` for ID3v1).
    public var version: Int { Int(id3_tag_version(self.tag)) }

    /// The IDs of all frames, in file order (v2.4 names after libid3tag's translation).
    public var frameIDs: [String] {
        var ids: [String] = []
        let count = Int(self.tag.pointee.nframes)
        guard let frames = self.tag.pointee.frames else { return [] }
        for index in 0..<count {
            guard let frame = frames[index] else { continue }
            ids.append(Self.frameID(frame))
        }
        return ids
    }

    /// The value of the first `SEEK` frame (the offset of a further tag, counted from the end of this one).
    public var seekOffset: Int? {
        guard let frame = self.frame("SEEK", 0), let field = id3_frame_field(frame, 0) else { return nil }
        return Int(id3_field_getint(field))
    }

    // MARK: - Frame access for the mapping code

    func frame(_ id: String, _ index: Int) -> UnsafeMutablePointer<id3_frame>? {
        id3_tag_findframe(self.tag, id, UInt32(index))
    }

    /// Calls `body` for every frame with `id`, in file order.
    func forEachFrame(_ id: String, _ body: (UnsafeMutablePointer<id3_frame>) -> Void) {
        var index = 0
        while let frame = self.frame(id, index) {
            body(frame)
            index += 1
        }
    }

    private static func frameID(_ frame: UnsafeMutablePointer<id3_frame>) -> String {
        withUnsafeBytes(of: frame.pointee.id) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}

// MARK: - String conversion

extension ID3Tag {
    /// UTF-8 bytes of a libid3tag UCS-4 string (`id3_ucs4_utf8duplicate`), `nil` if conversion fails.
    static func utf8(_ ucs4: UnsafePointer<id3_ucs4_t>) -> [UInt8]? {
        guard let duplicate = id3_ucs4_utf8duplicate(ucs4) else { return nil }
        defer { free(duplicate) }
        return Self.bytes(cString: duplicate)
    }

    /// Latin-1 bytes of a libid3tag UCS-4 string (`id3_ucs4_latin1duplicate`).
    static func latin1(_ ucs4: UnsafePointer<id3_ucs4_t>) -> [UInt8]? {
        guard let duplicate = id3_ucs4_latin1duplicate(ucs4) else { return nil }
        defer { free(duplicate) }
        return Self.bytes(cString: duplicate)
    }

    static func bytes<T: FixedWidthInteger>(cString: UnsafePointer<T>) -> [UInt8] {
        var length = 0
        while cString[length] != 0 { length += 1 }
        return UnsafeRawBufferPointer(start: cString, count: length * MemoryLayout<T>.size).map { $0 }
    }
}
