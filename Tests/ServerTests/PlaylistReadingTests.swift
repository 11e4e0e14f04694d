// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Library
import Model
import Network
import Posix
import Server
import StoredPlaylists
import Synchronization
import TestSupport
import Testing

/// `load`, `listplaylist` and `listplaylistinfo` read playlists, and the local files they name outside the music
/// directory, off the loop, and stored playlist edits read and write their files off it: other clients are served
/// while a read waits.
@Suite(.serialized) struct PlaylistReadingTests {
    /// A server with a music directory, a playlist directory and a Unix socket (a local client may name files
    /// outside the music directory); its library reads with `reader`.
    private static func server(
        music: MusicDirectory, playlists: String, reader: FakeReader
    ) throws -> (TestServer, socket: String) {
        let socket = playlists + "/socket"
        let path = music.path
        let server = try TestServer { options in
            options.listenAddresses.append(.unix(path: socket))
            options.musicDirectory = path
            options.playlists = PlaylistDirectory(path: playlists, musicDirectory: path)
            options.library = LibraryOptions(
                updater: Updater(root: path, reader: reader, logger: .discarding, metadata: options.metadataToUse),
                databaseFile: path + ".db")
        }
        return (server, socket)
    }

    /// Makes a FIFO at `path`: opening it to read waits until something opens it to write.
    private static func fifo(_ path: String) throws {
        guard mkfifo(path, 0o644) == 0 else { throw Errno.current }
    }

    /// Writes `text` into the FIFO at `path` (waiting for its reader) and closes it.
    private static func feed(_ path: String, _ text: String) throws {
        try writeFile(Array(text.utf8), atPath: path)
    }

    @Test func aPlaylistThatWaitsToBeReadKeepsNoOtherClientWaiting() throws {
        let music = try MusicDirectory()
        let outside = try MusicDirectory()
        try outside.song("x.mp3", ["Title": "Outside"])
        let stored = try MusicDirectory()
        let (server, socket) = try Self.server(music: music, playlists: stored.path, reader: FakeReader())
        defer { server.stop() }
        // A playlist in the music directory and a stored one, each a FIFO nobody writes yet.
        try Self.fifo(music.path + "/slow.m3u")
        try Self.fifo(stored.path + "/slow.m3u")
        let other = try LoopbackClient(port: server.port)
        _ = other.readLine()
        // An edit of a stored playlist reads it, then replaces it, off the loop too.
        let replies = [
            "load slow.m3u": ["OK"], "listplaylist slow": ["file: \(outside.path)/x.mp3", "OK"],
            "playlistdelete slow 0": ["OK"],
        ]
        for (request, path) in [
            ("load slow.m3u", music.path + "/slow.m3u"), ("listplaylist slow", stored.path + "/slow.m3u"),
            ("playlistdelete slow 0", stored.path + "/slow.m3u"),
        ] {
            let local = try LoopbackClient(unixPath: socket)
            _ = local.readLine()
            local.send(request + "\n")
            // The read waits on the FIFO off the loop: the other client is answered meanwhile (on the loop it
            // would wait for the FIFO's writer, and its read time out).
            #expect(other.request("ping") == ["OK"], "\(request)")
            try Self.feed(path, "\(outside.path)/x.mp3\n")
            #expect(local.readReply() == replies[request])
            #expect(unlink(path) == 0)
            try Self.fifo(path)
        }
        let local = try LoopbackClient(unixPath: socket)
        _ = local.readLine()
        #expect(local.request("playlist") == ["0:file: \(outside.path)/x.mp3", "OK"])
    }

    @Test func theFilesOfOneLoadAreReadInOneReadingSessionOffTheLoop() throws {
        let music = try MusicDirectory()
        let outside = try MusicDirectory()
        for name in ["a", "b", "c"] { try outside.song(name + ".mp3", ["Title": name.uppercased()]) }
        let stored = try MusicDirectory()
        let reader = FakeReader()
        let (server, socket) = try Self.server(music: music, playlists: stored.path, reader: reader)
        defer { server.stop() }
        let lines = ["a", "missing", "b", "c"].map { "\(outside.path)/\($0).mp3" }
        try writeFile(Array((lines.joined(separator: "\n") + "\n").utf8), atPath: stored.path + "/p.m3u")
        let local = try LoopbackClient(unixPath: socket)
        _ = local.readLine()
        // The first update (of the empty music directory) reads in a session of its own.
        var polls = 0
        while local.request("status").contains(where: { $0.hasPrefix("updating_db:") }) && polls < 500 {
            usleep(10_000)
            polls += 1
        }
        // A session is finished on a thread of its own after the command's reply: wait for it, a while at most.
        let sessions = { (expected: Int) -> Int in
            var finished = reader.finishedReading.load(ordering: .relaxed) - 1
            for _ in 0..<500 where finished < expected {
                usleep(10_000)
                finished = reader.finishedReading.load(ordering: .relaxed) - 1
            }
            return finished
        }
        #expect(sessions(0) == 0)
        // Only the files of the range are read; a missing one is skipped, as in mpd.
        #expect(local.request("load p 1:3") == ["OK"])
        #expect(reader.reads.load(ordering: .relaxed) == 1)
        #expect(sessions(1) == 1)
        #expect(local.request("load p") == ["OK"])
        #expect(reader.reads.load(ordering: .relaxed) == 4)
        #expect(sessions(2) == 2)
        let titles = local.request("playlistinfo").filter { $0.hasPrefix("Title: ") }
        #expect(titles == ["Title: B", "Title: A", "Title: B", "Title: C"])
        // `listplaylistinfo` and `listplaylist` read them too, as mpd's (which prints the path a song was read from).
        let info = local.request("listplaylistinfo p")
        #expect(info.filter { $0.hasPrefix("Title: ") } == ["Title: A", "Title: B", "Title: C"])
        #expect(sessions(3) == 3)
        #expect(local.request("listplaylist p") == lines.map { "file: \($0)" } + ["OK"])
        #expect(reader.reads.load(ordering: .relaxed) == 10)
        #expect(sessions(4) == 4)
        // One session for a whole command list.
        let list = ["command_list_begin", "load p 0:1", "add \"\(lines[2])\"", "addid \"\(lines[3])\"", "load p 2:3"]
        #expect(local.request((list + ["command_list_end"]).joined(separator: "\n")).last == "OK")
        #expect(reader.reads.load(ordering: .relaxed) == 14)
        #expect(sessions(5) == 5)
        // A client over TCP may not read them: nothing is read for it, and no reading session started.
        let remote = try LoopbackClient(port: server.port)
        _ = remote.readLine()
        #expect(remote.request("load p") == ["OK"])
        #expect(reader.reads.load(ordering: .relaxed) == 14)
        // (A session the load started would be finished by the time this one is.)
        #expect(local.request("add \"\(lines[2])\"") == ["OK"])
        #expect(sessions(6) == 6)
        #expect(reader.finishedReading.load(ordering: .relaxed) - 1 == 6)
    }
}
