// SPDX-License-Identifier: GPL-3.0-or-later

import Expat
import Model

/// `mpd`'s `rss` plugin: `item` elements anywhere, each song the `url` of its `enclosure`; the text of
/// `title` (`Title`) and `itunes:author` (`Artist`), each piece of character data expat reports a value of
/// its own (as in `mpd`: `A &amp; B` gives three). Names ASCII case-insensitive.
enum RssPlaylistPlugin {
    static let plugin = PlaylistPlugin(
        name: "rss", suffixes: ["rss"], mimeTypes: ["application/rss+xml", "application/xml", "text/xml"]
    ) { bytes throws(PlaylistParseError) in try Self.entries(bytes) }

    static func entries(_ bytes: [UInt8]) throws(PlaylistParseError) -> [PlaylistEntry] {
        let events = try PlaylistParseError.events(of: bytes)
        var entries: [PlaylistEntry] = []
        var inItem = false
        var tagType: TagType? = nil
        var location = ""
        var tag = TagBuilder()
        for event in events {
            switch event {
            case .start(let name, let attributes):
                if !inItem {
                    if AsxPlaylistPlugin.equal(name, "item") {
                        inItem = true
                        location = ""
                        tagType = nil
                    }
                } else if AsxPlaylistPlugin.equal(name, "enclosure") {
                    if let url = attributes.first(where: { AsxPlaylistPlugin.equal($0.name, "url") }) {
                        location = url.value
                    }
                } else if AsxPlaylistPlugin.equal(name, "title") {
                    tagType = .title
                } else if AsxPlaylistPlugin.equal(name, "itunes:author") {
                    tagType = .artist
                }
            case .end(let name):
                guard inItem else { break }
                if AsxPlaylistPlugin.equal(name, "item") {
                    if !location.isEmpty { entries.append(tag.commit(uri: location)) }
                    inItem = false
                } else {
                    tagType = nil
                }
            case .text(let text):
                if inItem, let tagType { tag.add(tagType, text) }
            }
        }
        return entries
    }
}
