// SPDX-License-Identifier: GPL-3.0-or-later

/// Reads the tokens of one `mpd.conf` line: a word, a quoted value, `{`, `}`, and a trailing comment.
///
/// The line is cut at its first NUL byte and stripped of ASCII white space at both ends, as `mpd` does. Each
/// method throws a ``ConfigLineScanner/Failure`` carrying `mpd`'s wording; the caller adds the file and line.
struct ConfigLineScanner {
    /// A syntax error in the line, with `mpd`'s message.
    struct Failure: Error {
        /// The message without a location.
        var message: String
    }

    /// What a whole line turned out to be.
    enum Line: Equatable {
        /// A blank or comment-only line.
        case blank
        /// `name "value"`, at the top level or inside a block.
        case parameter(name: String, value: String)
        /// `name {` at the top level.
        case openBlock(name: String)
        /// `}` inside a block.
        case closeBlock
        /// `include "pattern"` or `include_optional "pattern"` at the top level.
        case include(pattern: String, isOptional: Bool)
    }

    private let bytes: [UInt8]
    private var index: Int

    /// Prepares to scan `line`, which must not include its `\n`.
    init(_ line: ArraySlice<UInt8>) {
        var line = line
        if let nul = line.firstIndex(of: 0) { line = line[..<nul] }
        while let first = line.first, Self.isSpace(first) { line = line.dropFirst() }
        while let last = line.last, Self.isSpace(last) { line = line.dropLast() }
        self.bytes = Array(line)
        self.index = 0
    }

    /// Reads the whole line.
    ///
    /// At the top level the name decides the shape: a block name needs `{`, an option or `include` needs a quoted
    /// value, any other name is `unrecognized parameter`. Inside a block only `key "value"` and `}` are allowed.
    ///
    /// - Parameter insideBlock: Whether a block is open.
    mutating func readLine(insideBlock: Bool) throws(Failure) -> Line {
        if self.isBlankOrComment { return .blank }
        if insideBlock {
            if self.startsWithClosingBrace {
                try self.readClosingBrace()
                return .closeBlock
            }
            let key = try self.readWord()
            return .parameter(name: key, value: try self.readValue())
        }
        let name = try self.readWord()
        if name == "include" || name == "include_optional" {
            return .include(pattern: try self.readValue(), isOptional: name == "include_optional")
        }
        guard let option = ConfigOption.named(name) else { throw Failure(message: "unrecognized parameter: \(name)") }
        switch option.kind {
        case .block:
            try self.readOpeningBrace()
            return .openBlock(name: name)
        case .parameter:
            return .parameter(name: name, value: try self.readValue())
        }
    }

    /// Whether the line is blank or only a comment.
    private var isBlankOrComment: Bool { self.bytes.isEmpty || self.bytes[0] == UInt8(ascii: "#") }

    /// Whether the line starts with `}`.
    private var startsWithClosingBrace: Bool { self.bytes.first == UInt8(ascii: "}") }

    /// Reads a name: an ASCII letter, then letters, digits and `_`, ending at white space or the end of the line.
    private mutating func readWord() throws(Failure) -> String {
        guard let first = self.peek, Self.isLetter(first) else { throw Failure(message: "Letter expected") }
        let start = self.index
        while let byte = self.peek, Self.isWordCharacter(byte) { self.index += 1 }
        let word = String(decoding: self.bytes[start..<self.index], as: UTF8.self)
        if let byte = self.peek, !Self.isSpace(byte) { throw Failure(message: "Invalid word character") }
        self.skipSpace()
        return word
    }

    /// Reads a double-quoted value and checks that only white space and a comment follow it.
    ///
    /// A backslash makes the next byte literal, as in the MPD protocol.
    private mutating func readValue() throws(Failure) -> String {
        guard let first = self.peek else { throw Failure(message: "Value missing") }
        guard first == UInt8(ascii: "\"") else { throw Failure(message: "'\"' expected") }
        self.index += 1
        var value: [UInt8] = []
        while true {
            guard var byte = self.peek else { throw Failure(message: "Missing closing '\"'") }
            self.index += 1
            if byte == UInt8(ascii: "\"") { break }
            if byte == UInt8(ascii: "\\") {
                guard let escaped = self.peek else { throw Failure(message: "Missing closing '\"'") }
                self.index += 1
                byte = escaped
            }
            value.append(byte)
        }
        if let byte = self.peek, !Self.isSpace(byte) {
            throw Failure(message: "Space expected after closing '\"'")
        }
        try self.expectEndOfLine(after: "value")
        return String(decoding: value, as: UTF8.self)
    }

    /// Reads the `{` that opens a block and checks that only white space and a comment follow it.
    private mutating func readOpeningBrace() throws(Failure) {
        guard self.peek == UInt8(ascii: "{") else { throw Failure(message: "'{' expected") }
        self.index += 1
        try self.expectEndOfLine(after: "'{'")
    }

    /// Reads the `}` that closes a block and checks that only white space and a comment follow it.
    private mutating func readClosingBrace() throws(Failure) {
        guard self.peek == UInt8(ascii: "}") else { throw Failure(message: "'}' expected") }
        self.index += 1
        try self.expectEndOfLine(after: "'}'")
    }

    // MARK: - Helpers

    private var peek: UInt8? { self.index < self.bytes.count ? self.bytes[self.index] : nil }

    private mutating func skipSpace() {
        while let byte = self.peek, Self.isSpace(byte) { self.index += 1 }
    }

    private mutating func expectEndOfLine(after what: String) throws(Failure) {
        self.skipSpace()
        if let byte = self.peek, byte != UInt8(ascii: "#") {
            throw Failure(message: "Unknown tokens after \(what)")
        }
    }

    /// C `isspace` in the C locale: space, `\t`, `\n`, `\v`, `\f`, `\r`.
    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    private static func isWordCharacter(_ byte: UInt8) -> Bool {
        Self.isLetter(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
    }
}
