// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Server
import TestSupport
import Testing

/// `listplaylist`, `listplaylistinfo` and `load` of playlist files in the music directory (the playlist
/// plugins' entries merged with the database as mpd merges them).
@Suite(.serialized) struct PlaylistFileCommandTests {
    /// Writes `text` to `relative` in the fixture's music directory.
    private func write(_ text: String, to relative: String, in f: QueueFixture) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: f.music.path + "/" + relative))
    }

    @Test func extendedM3uEntriesMergeWithTheDatabase() throws {
        // URLs are songs when an input plugin opens their scheme (mpd's playlist_check_translate_song).
        let f = try QueueFixture { $0.remoteSchemes = ["http://", "https://"] }
        try self.write(
            "#EXTM3U\n#EXTINF:7,Seven\n1.mp3\n../top.mp3\nmissing.mp3\n#EXTINF:3,Radio\nhttp://u:p@h/s\n",
            to: "a/list.m3u", in: f)
        #expect(
            f.request("listplaylist a/list.m3u") == [
                "file: a/1.mp3", "file: top.mp3", "file: a/missing.mp3", "file: http://h/s", "OK",
            ])
        #expect(
            f.request("listplaylistinfo a/list.m3u") == [
                "file: a/1.mp3", "Last-Modified: 2020-09-13T12:26:40Z", "Name: Seven", "Artist: Art",
                "Title: a/1.mp3", "Time: 7", "duration: 7.000", "file: top.mp3", "Last-Modified: 2020-09-13T12:26:40Z",
                "Artist: Art", "Title: top.mp3", "Time: 1", "duration: 1.044", "file: a/missing.mp3",
                "file: http://h/s", "Name: Radio", "Time: 3", "duration: 3.000", "OK",
            ])
        #expect(f.request("listplaylist a/nope.m3u") == ["ACK [50@0] {listplaylist} No such playlist"])
    }

    @Test func cueTracksLoadAsRanges() throws {
        let f = try QueueFixture()
        try self.write(
            "TITLE \"Alb\"\nFILE \"1.mp3\" WAVE\n TRACK 01 AUDIO\n  INDEX 01 00:00:00\n TRACK 02 AUDIO\n"
                + "  TITLE T2\n  INDEX 01 00:00:30\n", to: "b/x.cue", in: f)
        #expect(f.request("load b/x.cue 1:") == ["OK"])
        #expect(
            f.request("playlistinfo") == [
                "file: b/1.mp3", "Range: 0.400-", "Last-Modified: 2020-09-13T12:26:40Z", "Album: Alb", "Track: 02",
                "Title: T2", "Artist: Art", "Time: 1", "duration: 0.644", "Pos: 0", "Id: 1", "OK",
            ])
    }
}
