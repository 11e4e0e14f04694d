// SPDX-License-Identifier: GPL-3.0-or-later

import RawText

/// Splits a request line into a command name and arguments, with `mpd`'s rules and error texts.
///
/// - Whitespace is any byte from 0x01 to 0x20.
/// - The command name is a letter followed by letters, digits or `_`.
/// - A quoted argument starts with `"`; a backslash makes the next byte literal; the closing quote must be
///   followed by whitespace or the end of the line.
/// - An unquoted argument is bytes above 0x20 other than `"` and `'`.
/// - At most `maximumArguments` arguments (63 in `mpd` 0.23).
public enum Tokenizer {
    /// A request: the command name and its arguments, decoded with `RawText` so bytes that are not valid
    /// UTF-8 (a Latin-1 file name) survive as escapes and reach the file system unchanged.
    public struct Request: Equatable, Sendable {
        /// The command name.
        public var name: String
        /// The arguments, unquoted and unescaped.
        public var arguments: [String]

        /// Creates a request.
        public init(name: String, arguments: [String]) {
            self.name = name
            self.arguments = arguments
        }
    }

    /// A tokenizer failure.
    public enum Failure: Error, Equatable, Sendable {
        /// A byte in the command name that may not be there: `mpd` answers and then closes the connection.
        case invalidWordCharacter
        /// An argument error (`Missing closing '"'` and friends): answered with code 5, the connection stays.
        case argument(String)
        /// More than the maximum number of arguments: answered with code 2.
        case tooManyArguments

        /// The error the client receives.
        public var ack: AckError {
            switch self {
            case .invalidWordCharacter: AckError(.unknown, "Invalid word character")
            case .argument(let message): AckError(.unknown, message)
            case .tooManyArguments: AckError(.arg, "Too many arguments")
            }
        }
    }

    /// `mpd` 0.23's argument limit.
    public static let maximumArguments = 63

    /// Tokenizes one line (already framed and stripped).
    ///
    /// - Throws: `Failure` with `mpd`'s message.
    public static func tokenize(
        _ line: some Collection<UInt8>, maximumArguments: Int = Tokenizer.maximumArguments
    ) throws(Failure) -> Request {
        let bytes = Array(line)
        var index = 0
        let count = bytes.count

        // The command name.
        while index < count && !isWhitespace(bytes[index]) {
            let byte = bytes[index]
            let isLetter = (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A)
            let isDigit = byte >= 0x30 && byte <= 0x39
            let valid = index == 0 ? isLetter : (isLetter || isDigit || byte == UInt8(ascii: "_"))
            guard valid else { throw .invalidWordCharacter }
            index += 1
        }
        let name = RawText.decode(bytes[0..<index])

        var arguments: [String] = []
        while true {
            while index < count && isWhitespace(bytes[index]) { index += 1 }
            if index == count { break }
            if arguments.count == maximumArguments { throw .tooManyArguments }
            if bytes[index] == UInt8(ascii: "\"") {
                index += 1
                var value: [UInt8] = []
                var closed = false
                while index < count {
                    let byte = bytes[index]
                    if byte == UInt8(ascii: "\\") {
                        index += 1
                        guard index < count else { break }
                        value.append(bytes[index])
                    } else if byte == UInt8(ascii: "\"") {
                        closed = true
                        index += 1
                        break
                    } else {
                        value.append(byte)
                    }
                    index += 1
                }
                guard closed else { throw .argument("Missing closing '\"'") }
                guard index == count || isWhitespace(bytes[index]) else {
                    throw .argument("Space expected after closing '\"'")
                }
                arguments.append(RawText.decode(value))
            } else {
                let start = index
                while index < count && !isWhitespace(bytes[index]) {
                    let byte = bytes[index]
                    guard byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "'") else {
                        throw .argument("Invalid unquoted character")
                    }
                    index += 1
                }
                arguments.append(RawText.decode(bytes[start..<index]))
            }
        }
        return Request(name: name, arguments: arguments)
    }

    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool { byte != 0 && byte <= 0x20 }
}
