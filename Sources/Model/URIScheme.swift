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

    /// Whether `text` starts with `prefix`, ASCII letters compared case-insensitively (`strncasecmp`): how
    /// `mpd` matches URI schemes and plugin prefixes (`smb://`, `http://`) and playlist keys.
    ///
    /// Inlinable, so each caller gets a loop over its own collection's bytes: unspecialized, the `zip` it was
    /// made of looked up generic metadata per byte (a third of a 10k-line list of `add`s).
    @inlinable
    public static func hasPrefixIgnoringCase(_ text: some Collection<UInt8>, _ prefix: String) -> Bool {
        var index = text.startIndex
        for byte in prefix.utf8 {
            guard index != text.endIndex, Self.lowercased(text[index]) == Self.lowercased(byte) else { return false }
            text.formIndex(after: &index)
        }
        return true
    }

    /// `byte` with an ASCII capital letter made small.
    @inlinable
    public static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }
}
