// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Model
import Playlists
import Synchronization
import Testing

@testable import Server

/// Remote playlists (`load URL`), read off the loop through `ServerOptions.remoteOpener`.
@Suite(.serialized) struct RemotePlaylistTests {
    private final class Opened: Sendable {
        let urls = Mutex<[String]>([])
    }

    /// An opener serving `files` by URL; anything else fails as curl fails on a 404. The last URL opened is kept.
    private static func opener(_ files: [String: (text: String, mime: String?)], opened: Opened)
        -> @Sendable (String, InputCancellation) throws(InputError) -> any InputStream
    {
        { url, _ throws(InputError) in
            opened.urls.withLock { $0.append(url) }
            guard let file = files[url] else {
                throw .curl(message: "The requested URL returned error: 404", uri: url)
            }
            return MemoryInputStream(Array(file.text.utf8), uri: url, mimeType: file.mime)
        }
    }

    @Test func playlistsAreFoundByMimeTypeThenSuffixAndEntriesAreRelativeToTheirURL() {
        let text = Array("one.mp3\nhttp://other/two.ogg\n".utf8)
        let byMime = RemotePlaylist.parse(text, url: "http://h/d/list", mimeType: "audio/x-mpegurl; charset=utf-8")
        #expect(byMime?.entries.map(\.uri) == ["one.mp3", "http://other/two.ogg"])
        #expect(byMime?.base == "http://h/d")
        #expect(RemotePlaylist.parse(text, url: "http://h/list.m3u?x=1", mimeType: "text/plain")?.base == "http://h")
        #expect(RemotePlaylist.parse(text, url: "http://h/song.mp3", mimeType: "audio/mpeg") == nil)
        #expect(RemotePlaylist.parse(text, url: "http://h/a.b/list.m3u?q=x.y", mimeType: nil)?.base == "http://h/a.b")
        #expect(RemotePlaylist.parse(text, url: "http://h/a.b/list", mimeType: nil) == nil)
    }

    /// `lsinfo URL` prints the tags the format plugins read in the stream, off the loop (mpd's `tag_stream_scan`).
    @Test func lsinfoOfAURLPrintsTheStreamsTags() throws {
        let opened = Opened()
        let files: [String: (text: String, mime: String?)] = [
            "http://h/a.ogg": ("tags", nil), "http://h/b.bin": ("none", nil), "http://h/c.ogg": ("bad", nil),
        ]
        let f = try QueueFixture {
            $0.remoteSchemes = ["http://"]
            $0.remoteOpener = Self.opener(files, opened: opened)
            $0.streamTagScanner = { input in
                switch input.uri {
                case "http://h/a.ogg": .tags([TagItem(.artist, "A"), TagItem(.album, "B")])
                case "http://h/c.ogg": .failed(message: "Broken stream")
                default: .notRecognized
                }
            }
        }
        #expect(f.request("lsinfo http://h/a.ogg") == ["Artist: A", "Album: B", "OK"])
        // The client's tag mask applies.
        #expect(f.request("tagtypes disable Album") == ["OK"])
        #expect(f.request("lsinfo http://h/a.ogg") == ["Artist: A", "OK"])
        #expect(f.request("lsinfo http://h/b.bin") == ["ACK [50@0] {lsinfo} No such file"])
        #expect(f.request("lsinfo http://h/c.ogg") == ["ACK [5@0] {lsinfo} Broken stream"])
        let missing = "ACK [5@0] {lsinfo} CURL failed: The requested URL returned error: 404"
        #expect(f.request("lsinfo http://h/missing.mp3") == [missing])
    }

    @Test func loadReadsOffTheLoopAndTheSessionWaitsForIt() throws {
        let opened = Opened()
        let files: [String: (text: String, mime: String?)] = [
            "http://h/d/radio.pls": ("[playlist]\nFile1=a.mp3\nFile2=http://x/b.mp3\nNumberOfEntries=2\n", nil)
        ]
        let f = try QueueFixture {
            $0.remoteSchemes = ["http://"]
            $0.remoteOpener = Self.opener(files, opened: opened)
        }
        // A command list goes on after the deferred `load`, in order; the bad range is refused before reading.
        #expect(
            f.request("command_list_ok_begin\nload http://h/d/radio.pls\nplaylist\ncommand_list_end") == [
                "list_OK", "0:file: http://h/d/a.mp3", "1:file: http://x/b.mp3", "list_OK", "OK",
            ])
        #expect(
            f.request("listplaylist http://h/d/radio.pls") == ["file: http://h/d/a.mp3", "file: http://x/b.mp3", "OK"])
        #expect(f.request("load http://h/d/radio.pls x") == ["ACK [2@0] {load} Integer or range expected: x"])
        // A failing URL is logged and answered as mpd answers it.
        #expect(f.request("load http://h/missing.m3u") == ["ACK [50@0] {load} No such playlist"])
        let urls = opened.urls.withLock { $0 }
        #expect(urls == ["http://h/d/radio.pls", "http://h/d/radio.pls", "http://h/missing.m3u"])
        #expect(f.request("ping") == ["OK"])
    }
}
