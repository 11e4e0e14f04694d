// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// `mpd`'s `extm3u` plugin: an m3u whose first line is `#EXTM3U` (else the `m3u` plugin takes the file);
/// `#EXTINF:seconds,text` gives the next song a duration and `Name` (not `Title`: `mpd` takes the text as
/// opaque).
enum ExtM3uPlaylistPlugin {
    static let plugin = PlaylistPlugin(
        name: "extm3u", suffixes: ["m3u", "m3u8"], mimeTypes: ["audio/x-mpegurl", "audio/mpegurl"]
    ) { bytes throws(PlaylistParseError) in Self.entries(bytes) }

    static func entries(_ bytes: [UInt8]) -> [PlaylistEntry]? {
        let lines = TextLines.lines(bytes)
        guard let first = lines.first, TextLines.stripRight(first).elementsEqual("#EXTM3U".utf8) else { return nil }
        var entries: [PlaylistEntry] = []
        var tag = TagBuilder()
        for line in lines.dropFirst() {
            let right = TextLines.stripRight(line)
            if right.starts(with: "#EXTINF:".utf8) {
                tag = Self.parseInfo(right.dropFirst(8))
                continue
            }
            let uri = TextLines.stripLeft(right)
            guard let first = uri.first, first != UInt8(ascii: "#") else { continue }
            entries.append(tag.commit(uri: TextLines.uri(uri)))
        }
        return entries
    }

    /// The tag of an `#EXTINF:` line's rest: nothing when it is malformed (no `,` after the number) or
    /// says nothing (no text and a duration of 0; a negative one counts as 0).
    static func parseInfo(_ text: ArraySlice<UInt8>) -> TagBuilder {
        let (value, rest) = TextLines.strtol(text)
        guard rest.first == UInt8(ascii: ",") else { return TagBuilder() }
        let seconds = max(value, 0)
        let name = TextLines.stripLeft(rest.dropFirst())
        guard !name.isEmpty || seconds != 0 else { return TagBuilder() }
        var tag = TagBuilder()
        tag.setDuration(seconds: UInt32(truncatingIfNeeded: seconds))
        tag.add(.name, name)
        return tag
    }
}
