// SPDX-License-Identifier: GPL-3.0-or-later

/// How a filter compares one string (a tag value or a URI) with its operand: `mpd`'s `StringFilter`.
///
/// Comparisons are byte-wise on UTF-8. With `foldCase`, `==` and `contains` compare `FilterCaseFold.fold(_:)`
/// forms (the needle is folded once, here), while a regex stays on the raw value and becomes caseless (ASCII
/// only, since `mpd` does not use PCRE's UTF mode). Regexes are compiled by the `FilterRegularExpression` type
/// the caller passes in.
public struct StringMatcher: Sendable {
    /// The comparison.
    public enum Operation: Sendable, Hashable {
        /// The whole value equals the operand (`==`, `!=`, legacy `find`).
        case equals
        /// The operand occurs in the value (`contains`, `!contains`, legacy `search`).
        case contains
        /// The PCRE pattern matches somewhere in the value (`=~`, `!~`).
        case regex
    }

    /// The operand as the client wrote it (after unescaping).
    public var value: String { self.storage.value }
    /// The comparison.
    public var operation: Operation { self.storage.operation }
    /// Whether case is folded (`search`-style commands).
    public var foldCase: Bool { self.storage.foldCase }
    /// Whether the result is inverted (`!=`, `!contains`, `!~`, or a folded `(!…)`).
    public var negated: Bool

    /// The immutable parts, shared so that copying a matcher costs one reference count.
    private let storage: Storage

    private final class Storage: Sendable {
        let value: String
        let operation: Operation
        let foldCase: Bool
        let folded: FoldedText?
        let regex: (any FilterRegularExpression)?

        init(
            value: String, operation: Operation, foldCase: Bool, folded: FoldedText?,
            regex: (any FilterRegularExpression)?
        ) {
            self.value = value
            self.operation = operation
            self.foldCase = foldCase
            self.folded = folded
            self.regex = regex
        }
    }

    /// Creates an `==` or `contains` matcher.
    ///
    /// - Precondition: `operation` is not `.regex`; use `init(regex:foldCase:negated:)`.
    public init(_ value: String, operation: Operation, foldCase: Bool, negated: Bool = false) {
        precondition(operation != .regex, "use init(regex:foldCase:negated:)")
        self.negated = negated
        self.storage = Storage(
            value: value, operation: operation, foldCase: foldCase,
            folded: foldCase ? FoldedText(folding: value) : nil, regex: nil)
    }

    /// Creates a `=~` matcher, compiled by `engine` with `mpd`'s options (caseless when `foldCase`).
    ///
    /// - Throws: `FilterRegularExpressionError` when the engine rejects the pattern.
    public init(
        regex pattern: String, foldCase: Bool, negated: Bool = false, using engine: any FilterRegularExpression.Type
    ) throws(FilterRegularExpressionError) {
        let regex = try engine.init(filterPattern: pattern, caseless: foldCase)
        self.negated = negated
        self.storage = Storage(value: pattern, operation: .regex, foldCase: foldCase, folded: nil, regex: regex)
    }

    /// Whether matching reads folded haystacks (`FilterSubject.foldedTagValues(_:)`) rather than raw ones.
    public var usesFoldedHaystack: Bool { self.storage.folded != nil }

    /// The operand folded with `FilterCaseFold.fold(_:)`, for a matcher that folds (`usesFoldedHaystack`).
    public var foldedOperand: String? { self.storage.folded?.folded }

    /// Whether the operand is empty (an empty operand matches an absent tag).
    public var isEmpty: Bool { self.storage.value.isEmpty }

    /// The match result for `haystack`, with negation applied.
    public func matches(_ haystack: String) -> Bool { self.matchesIgnoringNegation(haystack) != self.negated }

    /// The match result for a raw `haystack`, ignoring `negated` (folding it first when `foldCase`).
    public func matchesIgnoringNegation(_ haystack: String) -> Bool {
        let storage = self.storage
        if storage.folded != nil { return self.matchesIgnoringNegation(folded: FoldedText(folding: haystack)) }
        if let regex = storage.regex { return regex.matches(haystack) }
        switch storage.operation {
        case .equals: return UTF8Bytes.equal(haystack, storage.value)
        case .contains, .regex: return UTF8Bytes.contains(haystack, storage.value)
        }
    }

    /// `matchesIgnoringNegation(_:)` for a haystack given as its UTF-8 bytes: no `String` is made (the library
    /// compares each distinct value of its value table this way).
    ///
    /// - Precondition: not `usesFoldedHaystack`.
    public func matchesIgnoringNegation(bytes haystack: UnsafeBufferPointer<UInt8>) -> Bool {
        let storage = self.storage
        precondition(storage.folded == nil, "a case-folding matcher folds a String haystack")
        if let regex = storage.regex { return regex.matches(utf8: haystack) }
        return UTF8Bytes.withBytes(storage.value) { needle in
            switch storage.operation {
            case .equals: UTF8Bytes.equal(haystack, needle)
            case .contains, .regex: UTF8Bytes.contains(haystack, needle)
            }
        }
    }

    /// The match result for an already folded haystack, ignoring `negated`.
    ///
    /// - Precondition: `usesFoldedHaystack`.
    public func matchesIgnoringNegation(folded haystack: FoldedText) -> Bool {
        guard let needle = self.storage.folded else { preconditionFailure("matcher does not fold case") }
        switch self.storage.operation {
        case .equals: return UTF8Bytes.equal(haystack.folded, needle.folded)
        case .contains, .regex: return UTF8Bytes.contains(haystack.folded, needle.folded)
        }
    }

    /// The match result for the UTF-8 bytes of an already folded haystack, ignoring `negated`.
    ///
    /// - Precondition: `usesFoldedHaystack`.
    public func matchesIgnoringNegation(foldedBytes haystack: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let needle = self.storage.folded else { preconditionFailure("matcher does not fold case") }
        return UTF8Bytes.withBytes(needle.folded) { needle in
            switch self.storage.operation {
            case .equals: UTF8Bytes.equal(haystack, needle)
            case .contains, .regex: UTF8Bytes.contains(haystack, needle)
            }
        }
    }

    /// `mpd`'s operator spelling: `==`, `!=`, `contains`, `!contains`, `=~`, `!~`.
    public var operatorText: String {
        switch self.operation {
        case .equals: self.negated ? "!=" : "=="
        case .contains: self.negated ? "!contains" : "contains"
        case .regex: self.negated ? "!~" : "=~"
        }
    }
}
