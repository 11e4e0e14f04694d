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

    @Test(arguments: ["song.flac", "song.m4a", "song.MP4", "song.wma", "song.mka", "song.ogg", "song.wv"])
    func ffmpegIsTheLastResortForItsSuffixes(_ path: String) {
        #expect(FormatRegistry.standard.plugins(forPath: path).last?.name == "ffmpeg")
    }

    @Test func mp3FilesGoToMadThenMPG123ThenFFmpeg() {
        #expect(FormatRegistry.standard.plugins(forPath: "a.mp3").map(\.name) == ["mad", "mpg123", "ffmpeg"])
    }

    @Test func suffixLookupIgnoresASCIICaseAndKeepsPriority() {
        #expect(FormatRegistry.standard.plugins(forSuffix: "Mp3").map(\.name) == ["mad", "mpg123", "ffmpeg"])
        #expect(FormatRegistry.standard.plugins(forSuffix: "mp3é").isEmpty)
        #expect(FormatRegistry.standard.plugins(forSuffix: "").isEmpty)
    }

    @Test func mimeTypeLookup() {
        #expect(FormatRegistry.standard.plugin(forMimeType: "Audio/MPEG; charset=x")?.name == "mad")
        #expect(FormatRegistry.standard.plugin(forMimeType: "audio/flac")?.name == "flac")
        #expect(FormatRegistry.standard.plugin(forMimeType: "audio/x-unknown") == nil)
        // FFmpeg, last before gme and pcm, also claims what earlier plugins handle, as in mpd.
        #expect(FormatRegistry.standard.plugins(forMimeType: "audio/flac").last?.name == "ffmpeg")
        #expect(FormatRegistry.standard.plugins(forMimeType: "audio/mpeg").map(\.name) == ["mad", "ffmpeg"])
    }

    /// Debian's `mpd` 0.23.12 decoder list, in its order (`decoders`).
    static let mpdOrder = [
        "mad", "mpg123", "vorbis", "oggflac", "flac", "opus", "sndfile", "audiofile", "dsdiff", "dsf", "hybrid_dsd",
        "faad", "mpcdec", "wavpack", "openmpt", "modplug", "mikmod", "sidplay", "fluidsynth", "adplug", "ffmpeg",
        "gme", "pcm",
    ]

    @Test func standardPluginsFollowMPDsOrder() {
        let names = FormatRegistry.standard.plugins.map(\.name)
        let positions = names.map { Self.mpdOrder.firstIndex(of: $0) }
        #expect(!positions.contains(nil), "a plugin mpd does not have: \(names)")
        let known = positions.compactMap { $0 }
        #expect(known == known.sorted() && Set(known).count == known.count, "not in mpd's order: \(names)")
    }
}
