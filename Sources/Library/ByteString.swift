// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

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

    public static func == (lhs: Self, rhs: Self) -> Bool { Self.sameBytes(lhs.text, rhs.text) }

    /// Whether two strings have the same UTF-8 bytes (`String`'s `==` finds "Café" in both normal forms equal):
    /// equal lengths, then the bytes in place (`memcmp`). The generic `elementsEqual` of two `UTF8View`s steps a byte
    /// at a time (3 % of an update's CPU time with nothing changed, looking up 100k names in the tree).
    static func sameBytes(_ left: String, _ right: String) -> Bool {
        guard left.utf8.count == right.utf8.count else { return false }
        var (left, right) = (left, right)
        return left.withUTF8 { left in
            right.withUTF8 { right in left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0 }
        }
    }

    public func hash(into hasher: inout Hasher) {
        var text = self.text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// The hash a `Dictionary` or `Set` of byte strings asks for (`Hashable`'s customisation point for it): the
    /// bytes read 8 at a time, each word mixed into the table's seed by a multiply and xor-shifts, the result by
    /// SplitMix64's finaliser, which spreads every bit into the low ones the table's buckets are chosen by. A tenth
    /// of `Hasher`'s SipHash for the short names an update looks up: its hashes were 12 % of the instructions of an
    /// update with nothing changed (100k songs, two lookups and a set insertion per name). Not meant to resist
    /// collisions made on purpose: its keys are the library's own file names and tag values.
    public func _rawHashValue(seed: Int) -> Int {
        var text = self.text
        return text.withUTF8 { Self.rawHash(of: $0, seed: seed) }
    }

    /// `_rawHashValue(seed:)` of a string with UTF-8 `bytes`: reads `bytes` and nothing around them.
    static func rawHash(of bytes: UnsafeBufferPointer<UInt8>, seed: Int) -> Int {
        var hash = UInt64(UInt(bitPattern: seed)) ^ UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15
        // An empty string's buffer may have an address: its length alone (above) is its hash.
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            let count = bytes.count
            if count >= 8 {
                var offset = 0
                while offset &+ 8 <= count {
                    hash = Self.mixed(hash ^ raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                    offset &+= 8
                }
                // The last 8 bytes, over some of the word before.
                if offset < count {
                    hash = Self.mixed(hash ^ raw.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self))
                }
            } else if count >= 4 {
                let head = UInt64(raw.loadUnaligned(as: UInt32.self))
                let tail = UInt64(raw.loadUnaligned(fromByteOffset: count &- 4, as: UInt32.self))
                hash = Self.mixed(hash ^ (head | tail << 32))
            } else if count > 0 {
                let first = UInt64(base[0])
                let middle = UInt64(base[count / 2])
                let last = UInt64(base[count &- 1])
                hash = Self.mixed(hash ^ (first | middle << 8 | last << 16))
            }
        }
        return Int(truncatingIfNeeded: Self.finalized(hash))
    }

    /// One word's mix: a multiply by an odd constant and an xor-shift.
    @inline(__always)
    private static func mixed(_ value: UInt64) -> UInt64 {
        let product = value &* 0xFF51_AFD7_ED55_8CCD
        return product ^ (product >> 29)
    }

    /// SplitMix64's finaliser.
    @inline(__always)
    private static func finalized(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    public var description: String { self.text }
}
