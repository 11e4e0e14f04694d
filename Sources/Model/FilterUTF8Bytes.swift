// SPDX-License-Identifier: GPL-3.0-or-later

/// Byte-wise comparisons of UTF-8 strings, as `mpd` does them with `strcmp` and `strstr`.
///
/// Swift's `String ==` and `contains` use canonical equivalence and grapheme boundaries (`é` equals
/// `e`+U+0301), which `mpd` does not, so filters never use them. Because UTF-8 is self-synchronising, a byte-wise
/// substring is also a code-point-wise substring.
enum UTF8Bytes {
    /// Whether the two strings have the same UTF-8 bytes.
    @inline(__always)
    static func equal(_ lhs: String, _ rhs: String) -> Bool {
        guard lhs.utf8.count == rhs.utf8.count else { return false }
        return withBytes(lhs) { left in withBytes(rhs) { right in equal(left, right) } }
    }

    /// Whether `needle`'s UTF-8 bytes occur in `haystack`'s; an empty needle occurs everywhere.
    @inline(__always)
    static func contains(_ haystack: String, _ needle: String) -> Bool {
        withBytes(haystack) { hay in withBytes(needle) { contains(hay, $0) } }
    }

    static func equal(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for index in 0..<lhs.count where lhs[index] != rhs[index] { return false }
        return true
    }

    static func contains(_ haystack: UnsafeBufferPointer<UInt8>, _ needle: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = needle.count
        guard count > 0 else { return true }
        guard haystack.count >= count else { return false }
        let first = needle[0]
        var start = 0
        let lastStart = haystack.count - count
        outer: while start <= lastStart {
            if haystack[start] != first {
                start += 1
                continue
            }
            var offset = 1
            while offset < count {
                if haystack[start + offset] != needle[offset] {
                    start += 1
                    continue outer
                }
                offset += 1
            }
            return true
        }
        return false
    }

    /// Calls `body` with the string's contiguous UTF-8 (copying only for a non-native string).
    @inline(__always)
    static func withBytes<R>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(text.utf8).withUnsafeBufferPointer(body)
    }
}
