// SPDX-License-Identifier: GPL-3.0-or-later

/// `mpd`'s `m3u` plugin: one URI per line, stripped; empty lines and `#` lines skipped.
enum M3uPlaylistPlugin {
    static let plugin = PlaylistPlugin(
        name: "m3u", suffixes: ["m3u", "m3u8"], mimeTypes: ["audio/x-mpegurl", "audio/mpegurl"]
    ) { bytes throws(PlaylistParseError) in Self.entries(bytes) }

    static func entries(_ bytes: [UInt8]) -> [PlaylistEntry] {
        TextLines.lines(bytes).compactMap { line in
            let line = TextLines.strip(line)
            guard let first = line.first, first != UInt8(ascii: "#") else { return nil }
            return PlaylistEntry(uri: TextLines.uri(line))
        }
    }
}
