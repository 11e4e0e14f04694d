// SPDX-License-Identifier: GPL-3.0-or-later

/// A string compared and hashed by its UTF-8 bytes, as `mpd` compares file names and tag values.
///
/// Swift's `String` equality merges canonically equivalent text: "é" precomposed and "e" + U+0301 are one
/// `String` key, but two files (or two tag values) for `mpd`. Keys of the updater's tree and of value tables
/// use this type instead.
public struct ByteString: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The text.
    public let text: String

    /// Wraps `text`.
    public init(_ text: String) { self.text = text }

    /// Wraps a literal.
    public init(stringLiteral text: String) { self.text = text }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.text.utf8.elementsEqual(rhs.text.utf8) }

    public func hash(into hasher: inout Hasher) {
        var text = self.text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    public var description: String { self.text }
}
