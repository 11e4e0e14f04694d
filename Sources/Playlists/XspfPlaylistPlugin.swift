// SPDX-License-Identifier: GPL-3.0-or-later

import Expat
import Model

/// `mpd`'s `xspf` plugin: `playlist/trackList/track` elements with a `location`; `title`, `creator`
/// (`Artist`), `annotation` (`Comment`), `album` and `trackNum` count only after the track's `location`.
/// Element names are compared case-sensitively; as in `mpd`, `</trackList>` never leaves the track list
/// (it looks for `tracklist`).
enum XspfPlaylistPlugin {
    static let plugin = PlaylistPlugin(name: "xspf", suffixes: ["xspf"], mimeTypes: ["application/xspf+xml"]) {
        bytes throws(PlaylistParseError) in try Self.entries(bytes)
    }

    private enum State { case root, playlist, trackList, track, tag, location }

    private static let tagElements: [String: TagType] = [
        "title": .title, "creator": .artist, "annotation": .comment, "album": .album, "trackNum": .track,
    ]

    static func entries(_ bytes: [UInt8]) throws(PlaylistParseError) -> [PlaylistEntry] {
        let events = try PlaylistParseError.events(of: bytes)
        var entries: [PlaylistEntry] = []
        var state = State.root
        var tagType = TagType.title
        var location: [UInt8] = []
        var tag = TagBuilder()
        var value: [UInt8] = []
        for event in events {
            switch event {
            case .start(let name, _):
                value.removeAll()
                switch state {
                case .root: if name == "playlist" { state = .playlist }
                case .playlist: if name == "trackList" { state = .trackList }
                case .trackList:
                    if name == "track" {
                        state = .track
                        location.removeAll()
                    }
                case .track:
                    if name == "location" {
                        state = .location
                    } else if !location.isEmpty, let type = Self.tagElements[name] {
                        tagType = type
                        state = .tag
                    }
                case .tag, .location: break
                }
            case .end(let name):
                switch state {
                case .root: break
                case .playlist: if name == "playlist" { state = .root }
                case .trackList: if name == "tracklist" { state = .playlist }
                case .track:
                    if name == "track" {
                        if !location.isEmpty { entries.append(tag.commit(uri: TextLines.uri(location))) }
                        state = .trackList
                    }
                case .tag:
                    tag.add(tagType, value)
                    state = .track
                case .location:
                    location = value
                    state = .track
                }
                value.removeAll()
            case .text(let text):
                if state == .tag || state == .location { value += text }
            }
        }
        return entries
    }
}
