// SPDX-License-Identifier: GPL-3.0-or-later

/// `mpd`'s `embcue` plugin: a cue sheet in a song file's `CUESHEET` tag (the first, name compared ASCII
/// case-insensitively), every track a range of that file whatever its `FILE` lines say. It reads tags, not
/// bytes, so the registry's suffix search does not hold it: `mpd` tries it first (it opens by URI) for a
/// local file with one of its suffixes, and falls back to the stream plugins when the file has no sheet.
public enum EmbeddedCuePlaylistPlugin {
    /// The suffixes `mpd` 0.23.12 gives it.
    public static let suffixes = ["flac", "mp3", "mp2", "mp4", "mp4a", "m4b", "ape", "wv", "ogg", "oga"]

    /// Whether the plugin claims `suffix`.
    public static func supports(suffix: some StringProtocol) -> Bool {
        Self.suffixes.contains { TextLines.equalsIgnoringCase(Array(suffix.utf8), $0) }
    }

    /// The sheet among a file's tag pairs, if any.
    public static func cuesheet(in pairs: [(name: String, value: String)]) -> String? {
        pairs.first { TextLines.equalsIgnoringCase(Array($0.name.utf8), "cuesheet") && !$0.value.isEmpty }?.value
    }

    /// The tracks of `cuesheet` as ranges of the file named `fileName` (its base name: the entries are
    /// relative to its directory). Lines end at every `\r` or `\n`, as `mpd` splits the tag.
    public static func entries(cuesheet: String, fileName: String) -> [PlaylistEntry] {
        var parser = CueParser()
        let bytes = Array(cuesheet.utf8)
        for line in bytes.split(omittingEmptySubsequences: true, whereSeparator: { $0 == 0x0A || $0 == 0x0D }) {
            parser.feed(line.prefix { $0 != 0 })
        }
        return parser.finish().map { entry in
            var entry = entry
            entry.uri = fileName
            return entry
        }
    }
}
