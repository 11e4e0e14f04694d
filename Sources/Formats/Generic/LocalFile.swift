// SPDX-License-Identifier: GPL-3.0-or-later

import Input

/// Local files opened as streams, for the plugins that read a file through the same code as a remote stream.
enum LocalFile {
    /// The file at `path`, open for reading from its start.
    ///
    /// - Throws: `FormatError.input` when it cannot be opened.
    static func input(_ path: String) throws(FormatError) -> FileInputStream {
        do {
            return try FileInputStream(path: path)
        } catch {
            throw .input(error)
        }
    }
}
