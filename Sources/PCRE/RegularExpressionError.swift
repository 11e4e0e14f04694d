// SPDX-License-Identifier: GPL-3.0-or-later

import CPCRE2

/// A pattern that PCRE2 refused to compile.
public struct RegularExpressionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// PCRE2's error number (positive for compile errors).
    public let code: Int32
    /// The byte offset in the pattern where PCRE2 noticed the error.
    public let offset: Int

    /// Creates an error from PCRE2's code and offset.
    public init(code: Int32, offset: Int) {
        self.code = code
        self.offset = offset
    }

    /// PCRE2's own text for `code`, e.g. `missing closing parenthesis`.
    public var message: String {
        var buffer = [UInt8](repeating: 0, count: 256)
        let length = buffer.withUnsafeMutableBufferPointer { pcre2_get_error_message_8(self.code, $0.baseAddress, 256) }
        guard length >= 0 else { return "" }
        return String(decoding: buffer[..<Int(length)], as: UTF8.self)
    }

    /// `mpd`'s client-visible text: `Error in regex at offset 1: missing closing parenthesis`.
    public var description: String { "Error in regex at offset \(self.offset): \(self.message)" }
}
