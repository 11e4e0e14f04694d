// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// The probe library: the same 18 songs, tags, mtimes and formats that the expected results were recorded from
/// on mpd 0.23.12 (mp3 files tagged with mutagen), in mpd's database order.
struct FilterTestSong: FilterSubject, Sendable {
    let uri: String
    let tags: [TagItem]
    let lastModified: Int64?
    let audioFormat: AudioFormat?

    func tagValues(_ type: TagType) -> LazyMapSequence<LazyFilterSequence<[TagItem]>, String> {
        self.tags.lazy.filter { $0.type == type }.map(\.value)
    }

    static let library: [FilterTestSong] = [
        FilterTestSong(
            uri: "a/03.mp3",
            tags: [
                TagItem(.artist, "İstanbul"),
                TagItem(.artistSort, "Sort Artist"),
                TagItem(.title, "SS"),
            ],
            lastModified: 1646092800, audioFormat: AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2)),
        FilterTestSong(
            uri: "a/01.mp3",
            tags: [
                TagItem(.artist, "Alpha"),
                TagItem(.title, "Straße"),
                TagItem(.album, "One"),
                TagItem(.track, "1"),
                TagItem(.genre, "Rock"),
            ],
            lastModified: 1577836800, audioFormat: AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2)),
        FilterTestSong(
            uri: "a/02.mp3",
            tags: [
                TagItem(.artist, "beta"),
                TagItem(.albumArtist, "Gamma"),
                TagItem(.title, "ß"),
                TagItem(.album, "One"),
                TagItem(.track, "2"),
            ],
            lastModified: 1623760200, audioFormat: AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2)),
        FilterTestSong(
            uri: "ab/18.mp3",
            tags: [
                TagItem(.artist, "ǅ"),
                TagItem(.title, "ab dir"),
                TagItem(.composer, "ŉ"),
            ],
            lastModified: 1514764800, audioFormat: AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2)),
        FilterTestSong(
            uri: "b/04.mp3",
            tags: [
                TagItem(.artist, "FI"),
                TagItem(.albumSort, "AlbumSortVal"),
                TagItem(.title, "ﬁ"),
            ],
            lastModified: 1646092801, audioFormat: AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2)),
        FilterTestSong(
            uri: "b/05.mp3", tags: [TagItem(.artist, "σίσυφος"), TagItem(.title, "ΣΊΣΥΦΟΣ")],
            lastModified: 1577836799, audioFormat: AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2)),
        FilterTestSong(
            uri: "b/06.mp3", tags: [TagItem(.artist, "abc"), TagItem(.title, "ＡＢＣ")],
            lastModified: 1514764800, audioFormat: AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2)),
        FilterTestSong(
            uri: "b/07.mp3", tags: [TagItem(.artist, "E\u{301}"), TagItem(.title, "é")],
            lastModified: 1514764800, audioFormat: AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2)),
        FilterTestSong(
            uri: "c/08.mp3", tags: [TagItem(.artist, "ꭰ"), TagItem(.title, "Ꭰ")],
            lastModified: 1514764800, audioFormat: AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2)),
        FilterTestSong(
            uri: "c/09.mp3", tags: [],
            lastModified: 1514764800, audioFormat: AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2)),
        FilterTestSong(
            uri: "c/10.mp3", tags: [TagItem(.artist, "O'Brien"), TagItem(.title, "a\\b\"c")],
            lastModified: 1514764800, audioFormat: AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2)),
        FilterTestSong(
            uri: "c/11.mp3",
            tags: [
                TagItem(.artist, "P1"),
                TagItem(.artist, "P2"),
                TagItem(.albumArtistSort, "AASort"),
                TagItem(.title, "multi"),
                TagItem(.performer, "Perf1"),
                TagItem(.performer, "Perf2"),
            ],
            lastModified: 1514764800, audioFormat: AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2)),
        FilterTestSong(
            uri: "c/12.mp3", tags: [TagItem(.artist, "ΐ"), TagItem(.title, "İ")],
            lastModified: 1514764800, audioFormat: AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2)),
        FilterTestSong(
            uri: "c/13.mp3",
            tags: [
                TagItem(.artist, "ΐa"),
                TagItem(.title, "ﬃx"),
                TagItem(.album, "ſ"),
                TagItem(.composer, "ẞ"),
            ],
            lastModified: 1514764800, audioFormat: AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2)),
        FilterTestSong(
            uri: "d/14.mp3",
            tags: [
                TagItem(.artist, "Ǆ"),
                TagItem(.title, "mono"),
                TagItem(.composer, "ǆ"),
            ],
            lastModified: 1514764800, audioFormat: AudioFormat(sampleRate: 22050, sampleFormat: .s24, channels: 1)),
        FilterTestSong(
            uri: "d/15.mp3",
            tags: [
                TagItem(.artist, "kelvin"),
                TagItem(.title, "\u{212A}elvin"),
                TagItem(.composer, "ΣΣ"),
            ],
            lastModified: 1514764800, audioFormat: AudioFormat(sampleRate: 48000, sampleFormat: .s24, channels: 2)),
        FilterTestSong(
            uri: "d e/16.mp3", tags: [TagItem(.artist, "Ｚ"), TagItem(.title, "space dir")],
            lastModified: 1514764800, audioFormat: AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2)),
        FilterTestSong(
            uri: "d e/sub/17.mp3", tags: [TagItem(.artist, "Ωmega"), TagItem(.title, "sub")],
            lastModified: 1514764800, audioFormat: AudioFormat(sampleRate: 44100, sampleFormat: .s24, channels: 2)),
    ]
}
