// SPDX-License-Identifier: GPL-3.0-or-later

import Formats
import Testing

@Suite struct FormatRegistryTests {
    @Test(arguments: [
        ("song.mp3", "mad"), ("SONG.MP3", "mad"), ("a/b.c/song.Mp3", "mad"), ("old.mp2", "mad"),
    ])
    func suffixLookupIsCaseInsensitive(_ path: String, _ plugin: String) {
        #expect(FormatRegistry.standard.plugin(forPath: path)?.name == plugin)
    }

    @Test(arguments: ["song.xyz", "song", ".mp3", "dir.mp3/song", "song.mp3.txt"])
    func unknownSuffixes(_ path: String) {
        #expect(FormatRegistry.standard.plugin(forPath: path) == nil)
    }

    @Test func suffixOfPath() {
        #expect(FormatRegistry.suffix(ofPath: "a/b.c/d.e.MP3") == "MP3")
        #expect(FormatRegistry.suffix(ofPath: "a/.hidden") == nil)
        #expect(FormatRegistry.suffix(ofPath: "a.b/noext") == nil)
    }

    @Test func mimeTypeLookup() {
        #expect(FormatRegistry.standard.plugin(forMimeType: "Audio/MPEG; charset=x")?.name == "mad")
        #expect(FormatRegistry.standard.plugin(forMimeType: "audio/flac")?.name == "flac")
        #expect(FormatRegistry.standard.plugin(forMimeType: "audio/x-unknown") == nil)
    }
}
