// SPDX-License-Identifier: GPL-3.0-or-later

/// Whether a URI names something an input plugin opens (`http://…`) rather than a song path: the one test
/// every module asks, as `mpd`'s `uri_has_scheme`. Pure: no I/O.
public enum URIScheme {
    /// Whether `uri` has a scheme: anything before its first `://`.
    public static func hasScheme(_ uri: String) -> Bool {
        Self.schemeEnd(uri).map { $0 > 0 } ?? false
    }

    /// The byte offset of the first `://` in `uri`, if any.
    public static func schemeEnd(_ uri: String) -> Int? {
        var utf8 = uri.utf8.makeIterator()
        var offset = 0
        var previous: (UInt8, UInt8) = (0, 0)
        while let byte = utf8.next() {
            if previous == (UInt8(ascii: ":"), UInt8(ascii: "/")) && byte == UInt8(ascii: "/") { return offset - 2 }
            previous = (previous.1, byte)
            offset += 1
        }
        return nil
    }
}
