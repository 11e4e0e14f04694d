// SPDX-License-Identifier: GPL-3.0-or-later

/// The suffix of a file name or URI, where every plugin registry looks: the one rule of `mpd`'s
/// `PathTraitsUTF8::GetFilenameSuffix` (files) and `uri_get_suffix` (URIs). Pure: no I/O.
///
/// Bytes, as `mpd` compares them: a combining mark after a `/` or `.` does not hide it. The suffix may be
/// empty (`"a."`), which no plugin claims.
public enum Suffix {
    /// The text after the last `.` of the last component of `path`, unless that dot starts the name
    /// (`.mp3` has none).
    public static func ofPath(_ path: String) -> Substring? {
        // Over the bytes in place (a native string's are contiguous): the views' indices cost a few instructions per
        // byte, for every file of an update.
        var path = path
        let (dot, nameStart) = path.withUTF8 { buffer in
            var dot = -1
            var nameStart = buffer.count
            while nameStart > 0 {
                let byte = buffer[nameStart - 1]
                if byte == UInt8(ascii: "/") { break }
                if byte == UInt8(ascii: "."), dot < 0 { dot = nameStart - 1 }
                nameStart -= 1
            }
            return (dot, nameStart)
        }
        guard dot >= 0, dot != nameStart else { return nil }
        return path[path.utf8.index(path.utf8.startIndex, offsetBy: dot + 1)...]
    }

    /// `ofPath(_:)` of any string.
    public static func ofPath(_ path: some StringProtocol) -> Substring? { Self.ofPath(String(path)) }

    /// The suffix of a URI's last segment, its query (from the first `?`) cut off; a `\` separates segments
    /// as a `/` does.
    public static func ofURI(_ uri: some StringProtocol) -> Substring? {
        let full = Substring(uri)
        let bytes = full.utf8
        let end = bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.endIndex
        guard let dot = bytes[..<end].lastIndex(of: UInt8(ascii: ".")), dot != bytes.startIndex else { return nil }
        let before = bytes[bytes.index(before: dot)]
        guard before != UInt8(ascii: "/"), before != UInt8(ascii: "\\") else { return nil }
        let suffix = full[bytes.index(after: dot)..<end]
        guard !suffix.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") }) else {
            return nil
        }
        return suffix
    }
}
