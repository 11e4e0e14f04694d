// SPDX-License-Identifier: GPL-3.0-or-later

// Fuzz target `playlists`: the first byte picks a playlist plugin (extm3u, m3u, pls, xspf, asx, rss, cue: the
// byte modulo their count), the rest is a playlist file. It is parsed by that plugin (expat for the XML ones)
// and by the registry under the plugin's first suffix (each plugin claiming it in mpd's order), and every
// entry is checked: a cue track's range never ends before it starts, a duration fits mpd's 32-bit
// milliseconds, tag values are non-empty.

import Model
import Playlists

@_cdecl("LLVMFuzzerTestOneInput")
public func playlistsFuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(fuzzInput(data, size))
    guard let selector = input.first else { return 0 }
    let plugins = PlaylistRegistry.standard.plugins
    let plugin = plugins[Int(selector) % plugins.count]
    let bytes = Array(input.dropFirst())
    var results: [[PlaylistEntry]] = []
    if let entries = try? plugin.entries(bytes) { results.append(entries) }
    if let entries = try? PlaylistRegistry.standard.entries(bytes, suffix: plugin.suffixes[0]) {
        results.append(entries)
    }
    for entry in results.joined() {
        precondition(entry.endMilliseconds == 0 || entry.endMilliseconds > entry.startMilliseconds, "empty range")
        precondition(entry.durationMilliseconds.map { $0 <= UInt64(Int32.max) } ?? true, "duration too long")
        precondition(entry.tags.allSatisfy { !$0.value.isEmpty }, "empty tag value")
    }
    return 0
}
