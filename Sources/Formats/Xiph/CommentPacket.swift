// SPDX-License-Identifier: GPL-3.0-or-later

/// The comment packets of Ogg streams, parsed as `mpd` parses `OpusTags` itself: a magic, a vendor string,
/// a count, then that many length-prefixed entries (all lengths little-endian 32-bit).
///
/// Pure; any thread. Lengths are checked against the bytes present, so a damaged packet yields `nil`.
public enum CommentPacket {
    /// The entries of a packet that starts with `magic` (`OpusTags`; `\u{3}vorbis` for a Vorbis comment
    /// header), or `nil` when it does not start so or a length runs past its end.
    public static func entries(_ packet: ArraySlice<UInt8>, magic: [UInt8]) -> [ArraySlice<UInt8>]? {
        guard packet.starts(with: magic) else { return nil }
        var rest = packet.dropFirst(magic.count)
        guard self.string(&rest) != nil, let count = self.littleEndian32(&rest) else { return nil }
        var entries: [ArraySlice<UInt8>] = []
        // Each entry needs at least its 4 length bytes: a count larger than that is damage, not a reason to
        // reserve memory.
        guard UInt64(count) <= UInt64(rest.count / 4) else { return nil }
        entries.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let entry = self.string(&rest) else { return nil }
            entries.append(entry)
        }
        return entries
    }

    private static func string(_ rest: inout ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard let length = self.littleEndian32(&rest), UInt64(length) <= UInt64(rest.count) else { return nil }
        let value = rest.prefix(Int(length))
        rest = rest.dropFirst(Int(length))
        return value
    }

    private static func littleEndian32(_ rest: inout ArraySlice<UInt8>) -> UInt32? {
        guard rest.count >= 4 else { return nil }
        let start = rest.startIndex
        let value =
            UInt32(rest[start]) | UInt32(rest[start + 1]) << 8 | UInt32(rest[start + 2]) << 16
            | UInt32(rest[start + 3]) << 24
        rest = rest.dropFirst(4)
        return value
    }
}
