// SPDX-License-Identifier: GPL-3.0-or-later

import CMPG123

/// Process-wide libmpg123 set-up: `mpg123_init()` runs exactly once, before the first handle.
enum MPG123Library {
    /// The result of the one `mpg123_init()` call; Swift runs this initialiser once, thread-safely.
    static let initResult: Int32 = mpg123_init()

    /// Makes sure `mpg123_init()` ran; any thread.
    ///
    /// - Throws: `MPG123Error` if the library failed to initialise.
    static func ensureInitialized() throws(MPG123Error) {
        let result = Self.initResult
        if result != Int32(MPG123_OK.rawValue) {
            throw MPG123Error(function: "mpg123_init", code: result, message: Self.plainMessage(result))
        }
    }

    /// libmpg123's text for a result code, without a handle.
    static func plainMessage(_ code: Int32) -> String {
        guard let text = mpg123_plain_strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }
}
