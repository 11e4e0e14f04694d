// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// Reads song information from files; the format plugins implement it.
///
/// Called from scanner worker threads, several at once.
public protocol SongInfoReader: Sendable {
    /// Whether files with this suffix (without the dot, in the file's own case) are songs.
    func supports(suffix: String) -> Bool
    /// Reads a file's tags and audio properties.
    ///
    /// - Throws: when the file is not a song this reader can read; the scanner then skips it.
    func readInfo(path: String) throws -> SongInfo
}
