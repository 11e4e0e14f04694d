// SPDX-License-Identifier: GPL-3.0-or-later

/// A compiled `=~`/`!~` operand: the one thing filter matching needs from a regular-expression engine.
///
/// Model holds no engine. The PCRE module's `RegularExpression` implements this with libpcre2, as `mpd` does;
/// the code that parses filters is handed that type (`FilterParser.parse(arguments:foldCase:regex:)`) and
/// `StringMatcher(regex:foldCase:negated:using:)` compiles through it.
public protocol FilterRegularExpression: AnyObject, Sendable {
    /// Compiles `pattern` as `mpd` 0.23 compiles filter operands: `.` matches any byte (newlines too), plain
    /// parentheses do not capture, no UTF mode; with `caseless`, ASCII letters match either case.
    ///
    /// - Throws: `FilterRegularExpressionError` with the text `mpd` sends the client.
    init(filterPattern pattern: String, caseless: Bool) throws(FilterRegularExpressionError)

    /// Whether the pattern matches anywhere in `text` (an unanchored search over its UTF-8 bytes); an error
    /// while matching counts as no match, as in `mpd`.
    func matches(_ text: String) -> Bool

    /// `matches(_:)` over UTF-8 bytes already at hand (a value of the library's value table), with no `String`.
    func matches(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Bool
}

/// A `=~`/`!~` operand the engine refused to compile.
public struct FilterRegularExpressionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The text `mpd` sends the client: `Error in regex at offset 1: missing closing parenthesis`.
    public let description: String

    /// An error whose client-visible text is `description`.
    public init(_ description: String) { self.description = description }
}
