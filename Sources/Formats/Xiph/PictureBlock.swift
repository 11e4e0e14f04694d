// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// The picture layout FLAC PICTURE blocks, `METADATA_BLOCK_PICTURE` comments and ID3 `APIC` frames share,
/// read as `mpd`'s `ScanId3Apic` reads it: type, MIME type, description, four size fields, then the data.
///
/// Pure; any thread. Every length is checked against the bytes present.
public enum PictureBlock {
    /// The picture in `block`, or `nil` when a length runs past its end.
    public static func picture(_ block: ArraySlice<UInt8>) -> Picture? {
        var rest = block
        guard rest.count >= 4 else { return nil }
        rest = rest.dropFirst(4)  // picture type
        guard let mime = self.string(&rest), self.string(&rest) != nil, rest.count >= 20 else { return nil }
        rest = rest.dropFirst(16)  // width, height, depth, colours
        guard let size = self.bigEndian32(rest) else { return nil }
        rest = rest.dropFirst(4)
        guard UInt64(size) <= UInt64(rest.count) else { return nil }
        let data = Array(rest.prefix(Int(size)))
        return Picture(data: data, mimeType: String(decoding: mime, as: UTF8.self))
    }

    /// A 32-bit big-endian length and that many bytes.
    private static func string(_ rest: inout ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard let length = self.bigEndian32(rest) else { return nil }
        rest = rest.dropFirst(4)
        guard UInt64(length) <= UInt64(rest.count) else { return nil }
        let value = rest.prefix(Int(length))
        rest = rest.dropFirst(Int(length))
        return value
    }

    private static func bigEndian32(_ bytes: ArraySlice<UInt8>) -> UInt32? {
        guard bytes.count >= 4 else { return nil }
        let start = bytes.startIndex
        return UInt32(bytes[start]) << 24 | UInt32(bytes[start + 1]) << 16 | UInt32(bytes[start + 2]) << 8
            | UInt32(bytes[start + 3])
    }
}
