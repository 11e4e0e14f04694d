// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// `mpd`'s `pls` plugin: the `[playlist]` section's `FileN=`, `TitleN=` and `LengthN=` (keys ASCII
/// case-insensitive, compared by prefix), up to `NumberOfEntries` (at most 65536) entries. Without a
/// `[playlist]` section or a `NumberOfEntries` the file is not a pls; `NumberOfEntries=0` is an empty one.
enum PlsPlaylistPlugin {
    static let plugin = PlaylistPlugin(name: "pls", suffixes: ["pls"], mimeTypes: ["audio/x-scpls"]) {
        bytes throws(PlaylistParseError) in Self.entries(bytes)
    }

    /// `mpd`'s bound on entries.
    static let maximumEntries = 65536

    private struct Entry {
        var file: ArraySlice<UInt8> = []
        var title: ArraySlice<UInt8> = []
        var length: Int32 = -1
    }

    static func entries(_ bytes: [UInt8]) -> [PlaylistEntry]? {
        let lines = TextLines.lines(bytes)
        guard let section = lines.firstIndex(where: { TextLines.equalsIgnoringCase(TextLines.strip($0), "[playlist]") })
        else { return nil }
        var count = 0
        var entries: [Entry] = []
        for line in lines[(section + 1)...] {
            let line = TextLines.strip(line)
            guard let first = line.first, first != UInt8(ascii: ";") else { continue }
            if first == UInt8(ascii: "[") { break }
            guard let equals = line.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let name = TextLines.stripRight(line[..<equals])
            let value = TextLines.stripLeft(line[(equals + 1)...])
            if TextLines.equalsIgnoringCase(name, "NumberOfEntries") {
                count = Int(UInt32(truncatingIfNeeded: TextLines.strtoul(value)))
                if count == 0 { return [] }
                count = min(count, Self.maximumEntries)
                if entries.count > count {
                    entries.removeLast(entries.count - count)
                } else {
                    entries += Array(repeating: Entry(), count: count - entries.count)
                }
            } else if let index = Self.index(name, "File", count: count) {
                Self.grow(&entries, to: index)
                entries[index - 1].file = value
            } else if let index = Self.index(name, "Title", count: count) {
                Self.grow(&entries, to: index)
                entries[index - 1].title = value
            } else if let index = Self.index(name, "Length", count: count) {
                Self.grow(&entries, to: index)
                entries[index - 1].length = TextLines.atoi(value)
            }
        }
        guard count > 0 else { return nil }
        return entries.map { entry in
            var tag = TagBuilder()
            tag.add(.title, entry.title)
            if entry.length > 0 { tag.setDuration(seconds: UInt32(entry.length)) }
            return tag.commit(uri: TextLines.uri(entry.file))
        }
    }

    /// The entry number after `key` at the start of `name`, when it is in range.
    private static func index(_ name: ArraySlice<UInt8>, _ key: String, count: Int) -> Int? {
        guard URIScheme.hasPrefixIgnoringCase(name, key) else { return nil }
        let number = UInt32(truncatingIfNeeded: TextLines.strtoul(name.dropFirst(key.utf8.count)))
        let limit = count > 0 ? count : Self.maximumEntries
        return number >= 1 && Int(number) <= limit ? Int(number) : nil
    }

    private static func grow(_ entries: inout [Entry], to count: Int) {
        if entries.count < count { entries += Array(repeating: Entry(), count: count - entries.count) }
    }
}
