// SPDX-License-Identifier: GPL-3.0-or-later

import CMPG123

/// A failed libmpg123 call: which function, its error code and libmpg123's message for it.
public struct MPG123Error: Error, Hashable, Sendable, CustomStringConvertible {
    /// The libmpg123 function that failed (`mpg123_open_fd`, `mpg123_read`…).
    public let function: String
    /// The libmpg123 result code (`MPG123_ERR`, `MPG123_BAD_FILE`…, or `MPG123_NEW_FORMAT`).
    public let code: Int32
    /// libmpg123's text for the error (`mpg123_strerror`/`mpg123_plain_strerror`).
    public let message: String

    /// Creates an error; used by the wrapper and by tests.
    public init(function: String, code: Int32, message: String) {
        self.function = function
        self.code = code
        self.message = message
    }

    /// `function: message`.
    public var description: String { "\(self.function): \(self.message)" }

    /// Whether this is `MPG123_NEW_FORMAT`: the stream changed its output format mid-way (not a failure:
    /// query the format again and go on reading).
    public var isNewFormat: Bool { self.code == Int32(MPG123_NEW_FORMAT.rawValue) }
}
