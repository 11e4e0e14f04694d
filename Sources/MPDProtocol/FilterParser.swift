// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// Parses filter arguments as `mpd` 0.23.12 does: expressions `(…)` and legacy `TYPE VALUE` pairs, ANDed.
///
/// Arguments arrive after the protocol tokenizer removed the outer quoting layer; the quoted values inside an
/// expression carry the second layer (a backslash escapes the next byte), which this parser removes. Every
/// error is `ACK` code 2 with `mpd`'s text. Pure; callable from any thread.
public enum FilterParser {
    /// Parses a whole filter: each argument starting with `(` is one expression; otherwise two arguments make
    /// a legacy pair (`find`: exact and case-sensitive; `search`: case-folded substring).
    ///
    /// - Parameters:
    ///   - arguments: the filter arguments, after `sort`/`window`/`group`/`position` were taken off the end.
    ///   - foldCase: `true` for `search`, `searchadd`, `searchaddpl`, `playlistsearch`.
    ///   - regex: the engine that compiles `=~` and `!~` operands (PCRE's `RegularExpression`, as `mpd`'s).
    /// - Throws: `Incorrect number of filter arguments`, `Unparsed garbage after expression`,
    ///   `Unknown filter type`, `Bad URI` and the expression, date, audio-format and regex errors.
    public static func parse(
        arguments: ArraySlice<String>, foldCase: Bool, regex: any FilterRegularExpression.Type
    ) throws(AckError) -> SongFilter {
        guard !arguments.isEmpty else { throw AckError(.arg, "Incorrect number of filter arguments") }
        var filter = SongFilter()
        var index = arguments.startIndex
        repeat {
            let argument = FilterCNumbers.cString(arguments[index])
            if argument.first == UInt8(ascii: "(") {
                var scanner = ExpressionScanner(argument, foldCase: foldCase, regex: regex)
                let item = try scanner.expression()
                guard scanner.atEnd else { throw AckError(.arg, "Unparsed garbage after expression") }
                filter.append(item)
                index += 1
                continue
            }
            guard arguments.endIndex - index >= 2 else {
                throw AckError(.arg, "Incorrect number of filter arguments")
            }
            let value = FilterCNumbers.cString(arguments[index + 1])
            filter.append(try legacyItem(type: argument, value: value, foldCase: foldCase))
            index += 2
        } while index < arguments.endIndex
        return filter
    }

    /// The filter types besides tag names.
    enum FilterType {
        case tag(TagType)
        case any, file, base, modifiedSince, audioFormat

        /// `mpd`'s `locate_parse_type`: `file`/`filename`, `any`, `AudioFormat` and tag names ignore ASCII case;
        /// `base` and `modified-since` are exact.
        init?(_ name: some Collection<UInt8>) {
            if FilterCNumbers.equalsIgnoringASCIICase(name, "file")
                || FilterCNumbers.equalsIgnoringASCIICase(name, "filename")
            {
                self = .file
            } else if FilterCNumbers.equalsIgnoringASCIICase(name, "any") {
                self = .any
            } else if name.elementsEqual("base".utf8) {
                self = .base
            } else if name.elementsEqual("modified-since".utf8) {
                self = .modifiedSince
            } else if FilterCNumbers.equalsIgnoringASCIICase(name, "AudioFormat") {
                self = .audioFormat
            } else if let tag = FilterCNumbers.tagType(name) {
                self = .tag(tag)
            } else {
                return nil
            }
        }
    }

    private static func legacyItem(type: [UInt8], value: [UInt8], foldCase: Bool) throws(AckError) -> FilterItem {
        guard let filterType = FilterType(type) else { throw AckError(.arg, "Unknown filter type") }
        let text = String(decoding: value, as: UTF8.self)
        // For compatibility with mpd 0.20 and older, folding case also means substring matching.
        let matcher = StringMatcher(text, operation: foldCase ? .contains : .equals, foldCase: foldCase)
        switch filterType {
        case .base:
            guard isSafeLocalURI(value) else { throw AckError(.arg, "Bad URI") }
            return .base(text)
        case .modifiedSince: return .modifiedSince(try FilterTimestamp.parse(value))
        case .file: return .uri(matcher)
        case .any: return .anyTag(matcher)
        case .tag(let tag): return .tag(tag, matcher)
        case .audioFormat: return .never
        }
    }

    /// `uri_safe_local`: not absolute, no empty, `.` or `..` segment (so no `//`, no trailing `/`), not empty.
    static func isSafeLocalURI(_ uri: [UInt8]) -> Bool {
        uri.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).allSatisfy { segment in
            !(segment.isEmpty || segment.elementsEqual([0x2E]) || segment.elementsEqual([0x2E, 0x2E]))
        }
    }
}

// MARK: - Expressions

extension FilterParser {
    /// A cursor over one expression argument, mirroring `mpd`'s parser position by position so that the same
    /// inputs fail with the same message.
    struct ExpressionScanner {
        private let bytes: [UInt8]
        private let foldCase: Bool
        private let regex: any FilterRegularExpression.Type
        private var index = 0

        init(_ bytes: [UInt8], foldCase: Bool, regex: any FilterRegularExpression.Type) {
            self.bytes = bytes
            self.foldCase = foldCase
            self.regex = regex
        }

        var atEnd: Bool { self.index >= self.bytes.count }

        /// The byte at the cursor, or 0 at the end (mpd reads a C string).
        private var current: UInt8 { self.peek(0) }

        private func peek(_ offset: Int) -> UInt8 {
            self.index + offset < self.bytes.count ? self.bytes[self.index + offset] : 0
        }

        private mutating func advance(_ count: Int = 1) { self.index = min(self.index + count, self.bytes.count) }

        /// Skips bytes 0x01…0x20, as `StripLeft` does.
        private mutating func skipWhitespace() {
            while self.index < self.bytes.count, self.bytes[self.index] <= 0x20, self.bytes[self.index] != 0 {
                self.index += 1
            }
        }

        /// One parenthesised expression. The cursor is on its `(`; mpd skips that byte without checking it, so
        /// after `AND` any byte stands in for `(` (`AND xalbum == 'x')` parses as `album`).
        mutating func expression() throws(AckError) -> FilterItem {
            self.advance()
            self.skipWhitespace()
            if self.current == UInt8(ascii: "(") {
                let first = try self.expression()
                if self.current == UInt8(ascii: ")") {
                    self.advance()
                    return first
                }
                guard try self.word().elementsEqual("AND".utf8) else { throw AckError(.arg, "'AND' expected") }
                var items = [first]
                while true {
                    items.append(try self.expression())
                    if self.current == UInt8(ascii: ")") {
                        self.advance()
                        return .and(items)
                    }
                    guard try self.word().elementsEqual("AND".utf8) else {
                        throw AckError(.arg, "'AND' expected")
                    }
                }
            }
            if self.current == UInt8(ascii: "!") {
                self.advance()
                self.skipWhitespace()
                guard self.current == UInt8(ascii: "(") else { throw AckError(.arg, "'(' expected") }
                let inner = try self.expression()
                try self.closeParenthesis()
                return .not(inner)
            }
            let name = try self.word()
            guard let type = FilterType(name) else {
                let text = "Unknown filter type: " + String(decoding: name, as: UTF8.self)
                throw AckError(.arg, FilterCNumbers.truncated(text, toBytes: 1023))
            }
            switch type {
            case .modifiedSince:
                let value = try self.quoted()
                try self.closeParenthesis()
                return .modifiedSince(try FilterTimestamp.parse(value))
            case .base:
                let value = try self.quoted()
                try self.closeParenthesis()
                return .base(String(decoding: value, as: UTF8.self))
            case .audioFormat:
                let mask: Bool
                if self.current == UInt8(ascii: "=") && self.peek(1) == UInt8(ascii: "=") {
                    mask = false
                } else if self.current == UInt8(ascii: "=") && self.peek(1) == UInt8(ascii: "~") {
                    mask = true
                } else {
                    throw AckError(.arg, "'==' or '=~' expected")
                }
                self.advance(2)
                self.skipWhitespace()
                let format = try FilterAudioFormat.parse(try self.quoted(), mask: mask)
                try self.closeParenthesis()
                return .audioFormat(format)
            case .file, .any, .tag:
                let matcher = try self.stringMatcher()
                try self.closeParenthesis()
                switch type {
                case .file: return .uri(matcher)
                case .tag(let tag): return .tag(tag, matcher)
                default: return .anyTag(matcher)
                }
            }
        }

        /// `)` then white space.
        private mutating func closeParenthesis() throws(AckError) {
            guard self.current == UInt8(ascii: ")") else { throw AckError(.arg, "')' expected") }
            self.advance()
            self.skipWhitespace()
        }

        /// `[A-Za-z_-]+` then white space.
        private mutating func word() throws(AckError) -> ArraySlice<UInt8> {
            let start = self.index
            while self.index < self.bytes.count, Self.isWordByte(self.bytes[self.index]) { self.index += 1 }
            guard self.index > start else { throw AckError(.arg, "Word expected") }
            let word = self.bytes[start..<self.index]
            self.skipWhitespace()
            return word
        }

        private static func isWordByte(_ byte: UInt8) -> Bool {
            (byte | 0x20) &- 0x61 < 26 || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }

        /// `'…'` or `"…"`, a backslash escaping the next byte, at most 4095 bytes; then white space.
        private mutating func quoted() throws(AckError) -> [UInt8] {
            let quote = self.current
            self.advance()
            guard quote == UInt8(ascii: "'") || quote == UInt8(ascii: "\"") else {
                throw AckError(.arg, "Quoted string expected")
            }
            var value: [UInt8] = []
            while self.current != quote {
                if self.current == UInt8(ascii: "\\") { self.advance() }
                guard !self.atEnd else { throw AckError(.arg, "Closing quote not found") }
                value.append(self.current)
                self.advance()
                guard value.count < 4096 else { throw AckError(.arg, "Quoted value is too long") }
            }
            self.advance()
            self.skipWhitespace()
            return value
        }

        /// The operator and quoted operand of a tag, `any` or `file` comparison.
        private mutating func stringMatcher() throws(AckError) -> StringMatcher {
            for (keyword, negated) in [("contains ", false), ("!contains ", true)] where self.hasPrefix(keyword) {
                self.advance(keyword.utf8.count)
                self.skipWhitespace()
                let value = String(decoding: try self.quoted(), as: UTF8.self)
                return StringMatcher(value, operation: .contains, foldCase: self.foldCase, negated: negated)
            }
            if (self.current == UInt8(ascii: "!") || self.current == UInt8(ascii: "=")) && self.peek(1) == 0x7E {
                let negated = self.current == UInt8(ascii: "!")
                self.advance(2)
                self.skipWhitespace()
                let pattern = String(decoding: try self.quoted(), as: UTF8.self)
                do {
                    return try StringMatcher(
                        regex: pattern, foldCase: self.foldCase, negated: negated, using: self.regex)
                } catch {
                    throw AckError(.arg, error.description)
                }
            }
            let negated: Bool
            if self.current == UInt8(ascii: "!") && self.peek(1) == UInt8(ascii: "=") {
                negated = true
            } else if self.current == UInt8(ascii: "=") && self.peek(1) == UInt8(ascii: "=") {
                negated = false
            } else {
                throw AckError(.arg, "'==' or '!=' expected")
            }
            self.advance(2)
            self.skipWhitespace()
            let value = String(decoding: try self.quoted(), as: UTF8.self)
            return StringMatcher(value, operation: .equals, foldCase: self.foldCase, negated: negated)
        }

        /// Whether the rest starts with `prefix`, ignoring ASCII case.
        private func hasPrefix(_ prefix: String) -> Bool {
            let count = prefix.utf8.count
            guard self.bytes.count - self.index >= count else { return false }
            return FilterCNumbers.equalsIgnoringASCIICase(self.bytes[self.index..<self.index + count], prefix)
        }
    }
}
