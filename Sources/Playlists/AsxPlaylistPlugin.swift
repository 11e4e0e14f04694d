// SPDX-License-Identifier: GPL-3.0-or-later

import Expat
import Model

/// `mpd`'s `asx` plugin: `entry` elements anywhere, each song the `href` of its `ref` (the last one);
/// `author` (`Artist`) and `title`; element and attribute names ASCII case-insensitive.
enum AsxPlaylistPlugin {
    static let plugin = PlaylistPlugin(name: "asx", suffixes: ["asx"], mimeTypes: ["video/x-ms-asf"]) {
        bytes throws(PlaylistParseError) in try Self.entries(bytes)
    }

    private enum State { case root, entry, tag }

    static func entries(_ bytes: [UInt8]) throws(PlaylistParseError) -> [PlaylistEntry] {
        let events = try PlaylistParseError.events(of: bytes)
        var entries: [PlaylistEntry] = []
        var state = State.root
        var tagType = TagType.title
        var location = ""
        var tag = TagBuilder()
        var value: [UInt8] = []
        for event in events {
            switch event {
            case .start(let name, let attributes):
                value.removeAll()
                switch state {
                case .root:
                    if Self.equal(name, "entry") {
                        state = .entry
                        location = ""
                    }
                case .entry:
                    if Self.equal(name, "ref") {
                        if let href = attributes.first(where: { Self.equal($0.name, "href") }) { location = href.value }
                    } else if Self.equal(name, "author") {
                        tagType = .artist
                        state = .tag
                    } else if Self.equal(name, "title") {
                        tagType = .title
                        state = .tag
                    }
                case .tag: break
                }
            case .end(let name):
                switch state {
                case .root: break
                case .entry:
                    if Self.equal(name, "entry") {
                        if !location.isEmpty { entries.append(tag.commit(uri: location)) }
                        state = .root
                    }
                case .tag:
                    tag.add(tagType, value)
                    state = .entry
                }
                value.removeAll()
            case .text(let text):
                if state == .tag { value += text }
            }
        }
        return entries
    }

    static func equal(_ name: String, _ other: String) -> Bool { TextLines.equalsIgnoringCase(Array(name.utf8), other) }
}
