// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// One audio format: a tag/info reader for the library and a decoder factory for playback.
///
/// Plugins are stateless values registered in `FormatRegistry`; adding a format means adding a plugin there,
/// without touching the scanner or the player. All methods may be called from any thread, concurrently.
public protocol FormatPlugin: Sendable {
    /// The plugin's name, as `mpd` names its decoder plugins (`mad`, `flac`…).
    var name: String { get }
    /// File name suffixes handled, lower case without the dot; matched ASCII case-insensitively.
    var suffixes: [String] { get }
    /// MIME types handled.
    var mimeTypes: [String] { get }

    /// Reads what the database stores about a file: tags, duration, format.
    ///
    /// - Throws: `FormatError.notRecognized` when `mpd` would not add the file; `.io` when it cannot be read.
    func readInfo(path: String) throws(FormatError) -> SongInfo

    /// Reads the picture `readpicture` returns for the file.
    ///
    /// - Returns: `nil` when the file has none.
    /// - Throws: `FormatError.notRecognized` when `mpd` would fail with "Failed to load file".
    func readPicture(path: String) throws(FormatError) -> Picture?

    /// Reads the name/value pairs `readcomments` prints (raw tag items, such as ID3 `TXXX` frames and
    /// APEv2 items), in the order `mpd`'s tag scan reports them.
    ///
    /// - Throws: `FormatError.notRecognized` when `mpd` would fail with "Failed to load file".
    func readComments(path: String) throws(FormatError) -> [(name: String, value: String)]

    /// Opens a decoder for playback. Call it on the thread that will decode.
    ///
    /// - Throws: `FormatError` when the file cannot be opened or decoded.
    func makeDecoder(path: String) throws(FormatError) -> any Decoder
}
