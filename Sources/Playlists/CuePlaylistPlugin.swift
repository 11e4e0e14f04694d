// SPDX-License-Identifier: GPL-3.0-or-later

/// `mpd`'s `cue` plugin: the tracks of a cue sheet (see `CueParser`), each a range of the file it names.
enum CuePlaylistPlugin {
    static let plugin = PlaylistPlugin(name: "cue", suffixes: ["cue"], mimeTypes: ["application/x-cue"]) {
        bytes throws(PlaylistParseError) in Self.entries(bytes)
    }

    static func entries(_ bytes: [UInt8]) -> [PlaylistEntry] {
        var parser = CueParser()
        for line in TextLines.lines(bytes) { parser.feed(line) }
        return parser.finish()
    }
}
