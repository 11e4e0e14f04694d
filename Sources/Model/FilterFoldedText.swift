// SPDX-License-Identifier: GPL-3.0-or-later

/// A string already passed through `FilterCaseFold.fold(_:)`: the form case-insensitive filters compare.
///
/// A library index can fold each tag value once when it builds a snapshot and hand these to
/// `FilterSubject.foldedTagValues(_:)`, so a `search` over many songs folds only its needle.
public struct FoldedText: Sendable, Hashable, CustomStringConvertible {
    /// The folded text.
    public let folded: String

    /// Folds `text` with `FilterCaseFold.fold(_:)`.
    public init(folding text: String) { self.folded = FilterCaseFold.fold(text) }

    /// Wraps text the caller already folded with `FilterCaseFold.fold(_:)` (for example, read from an index).
    public init(alreadyFolded folded: String) { self.folded = folded }

    /// The folded text.
    public var description: String { self.folded }

    /// Byte-wise equality of the folded UTF-8, as `mpd` compares (no canonical equivalence).
    public static func == (lhs: FoldedText, rhs: FoldedText) -> Bool { UTF8Bytes.equal(lhs.folded, rhs.folded) }

    /// Hashes the UTF-8 bytes, consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        for byte in self.folded.utf8 { hasher.combine(byte) }
    }
}
