// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Library
import Model
import Network
import Playback
import Server
import TestSupport
import Testing

/// A server on a small library (`a/1.mp3`…`a/3.mp3`, `b/1.mp3`, `top.mp3`) with a scripted player.
final class QueueFixture {
    let music: MusicDirectory
    let server: TestServer
    let client: LoopbackClient

    /// - Parameters:
    ///   - music: the library of an earlier fixture (its database file is loaded), or `nil` for a new one.
    ///   - clock: the server's clock (connection timeouts, the remote cover's expiry).
    ///   - configure: more settings.
    init(
        music: MusicDirectory? = nil, clock: any PlaybackClock = SystemClock(),
        configure: @escaping @Sendable (inout ServerOptions) -> Void = { _ in }
    ) throws {
        if let music {
            self.music = music
        } else {
            self.music = try MusicDirectory()
            for name in ["a/1.mp3", "a/2.mp3", "a/3.mp3", "b/1.mp3", "top.mp3"] {
                try self.music.song(
                    name, ["Artist": "Art", "Title": name], mtime: 1_600_000_000)
            }
        }
        let path = self.music.path
        self.server = try TestServer(clock: clock) { options in
            options.musicDirectory = path
            options.library = LibraryOptions(
                updater: Updater(
                    root: path, reader: FakeReader(), logger: .discarding, metadata: options.metadataToUse),
                databaseFile: path + ".db")
            configure(&options)
        }
        self.client = try LoopbackClient(port: self.server.port)
        _ = self.client.readLine()
        for _ in 0..<300 {
            let stats = self.client.request("stats")
            if stats.contains("songs: 5")
                && !self.client.request("status").contains(where: { $0.hasPrefix("updating_db") })
            {
                break
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    deinit { self.server.stop() }

    func request(_ line: String) -> [String] { self.client.request(line) }

    /// One `key: value` field of `status`.
    func status(_ key: String) -> String? {
        self.request("status").first { $0.hasPrefix(key + ": ") }.map { String($0.dropFirst(key.count + 2)) }
    }

    /// The `file:` lines of `playlistinfo`.
    var files: [String] {
        self.request("playlistinfo").filter { $0.hasPrefix("file: ") }.map { String($0.dropFirst(6)) }
    }
}

@Suite(.serialized) struct QueueCommandTests {
    @Test func addIsOneBulkEditAndListsQueueBlocks() throws {
        let f = try QueueFixture()
        #expect(f.status("playlist") == "1")
        #expect(f.request("add a") == ["OK"])
        #expect(f.status("playlist") == "2")
        #expect(f.status("playlistlength") == "3")
        #expect(
            f.request("playlistinfo 1") == [
                "file: a/2.mp3", "Last-Modified: 2020-09-13T12:26:40Z", "Artist: Art", "Title: a/2.mp3", "Time: 1",
                "duration: 1.044", "Pos: 1", "Id: 2", "OK",
            ])
        #expect(f.request("addid top.mp3 0") == ["Id: 4", "OK"])
        #expect(f.files == ["top.mp3", "a/1.mp3", "a/2.mp3", "a/3.mp3"])
        // addid with a position is an append then a move: two bumps.
        #expect(f.status("playlist") == "4")
        #expect(
            f.request("plchangesposid 3") == [
                "cpos: 0", "Id: 4", "cpos: 1", "Id: 1", "cpos: 2", "Id: 2", "cpos: 3", "Id: 3", "OK",
            ])
        #expect(f.request("plchangesposid 4") == ["OK"])
        #expect(f.request("add b 1") == ["OK"])
        #expect(f.files == ["top.mp3", "b/1.mp3", "a/1.mp3", "a/2.mp3", "a/3.mp3"])
        #expect(f.request("add \"\"") == ["OK"])
        #expect(f.status("playlistlength") == "10")
    }

    @Test func urlsOfTheInputPluginsSchemesAreQueuedAsRemoteSongs() throws {
        let f = try QueueFixture { $0.remoteSchemes = ["http://", "https://"] }
        #expect(f.request("urlhandlers") == ["handler: http://", "handler: https://", "OK"])
        #expect(f.request("add HTTP://radio.example/live.mp3") == ["OK"])
        #expect(f.request("addid https://radio.example/b.ogg 0") == ["Id: 2", "OK"])
        #expect(
            f.request("playlistinfo") == [
                "file: https://radio.example/b.ogg", "Pos: 0", "Id: 2", "file: HTTP://radio.example/live.mp3",
                "Pos: 1", "Id: 1", "OK",
            ])
        #expect(f.request("add ftp://host/a.mp3") == ["ACK [2@0] {add} Unsupported URI scheme"])
        #expect(f.request("addid nosuch://x") == ["ACK [2@0] {addid} Unsupported URI scheme"])
    }

    @Test func withoutInputPluginsNoURLIsQueued() throws {
        let f = try QueueFixture()
        #expect(f.request("urlhandlers") == ["OK"])
        #expect(f.request("add http://radio.example/live.mp3") == ["ACK [2@0] {add} Unsupported URI scheme"])
    }

    @Test func queueErrorsAsMPDWordsThem() throws {
        let f = try QueueFixture()
        #expect(f.request("add nope") == ["ACK [50@0] {add} No such directory"])
        #expect(f.request("addid a") == ["ACK [50@0] {addid} No such song"])
        #expect(f.request("add a +1") == ["ACK [55@0] {add} No current song"])
        #expect(f.request("add a 1") == ["ACK [2@0] {add} Number too large: 1"])
        #expect(f.request("add a x") == ["ACK [2@0] {add} Integer expected: x"])
        _ = f.request("add a")
        #expect(f.request("delete 4") == ["ACK [2@0] {delete} Bad song index"])
        #expect(f.request("delete 3") == ["OK"])
        #expect(f.request("deleteid 9") == ["ACK [50@0] {deleteid} No such song"])
        #expect(f.request("move 0: 1") == ["ACK [2@0] {move} Open-ended range not supported"])
        #expect(f.request("move 0 3") == ["ACK [2@0] {move} Number too large: 3"])
        #expect(f.request("move 0 +1") == ["ACK [55@0] {move} No current song"])
        #expect(f.request("swap 0 3") == ["ACK [2@0] {swap} Bad song index"])
        #expect(f.request("swapid 1 9") == ["ACK [50@0] {swapid} No such song"])
        #expect(f.request("prio 256 0") == ["ACK [2@0] {prio} Number too large: 256"])
        #expect(f.request("playlistinfo 4") == ["ACK [2@0] {playlistinfo} Bad song index"])
        #expect(f.request("playlistinfo 3") == ["OK"])
        #expect(f.request("playlistid 7") == ["ACK [50@0] {playlistid} No such song"])
        #expect(f.request("rangeid 1 2:1") == ["ACK [2@0] {rangeid} Bad range"])
        #expect(f.request("addtagid 1 artist x") == ["ACK [4@0] {addtagid} Cannot edit tags of local file"])
        #expect(f.request("addtagid 1 nope x") == ["ACK [2@0] {addtagid} Unknown tag type: nope"])
        #expect(f.request("play 3") == ["ACK [2@0] {play} Bad song index"])
        #expect(f.request("playid 99") == ["ACK [50@0] {playid} No such song"])
        #expect(f.request("next") == ["ACK [55@0] {next} Not playing"])
        #expect(f.request("seekcur 1") == ["ACK [55@0] {seekcur} Not playing"])
        #expect(f.request("seek 0 -1") == ["ACK [2@0] {seek} Negative value not allowed: -1"])
        #expect(f.request("single 2") == ["ACK [2@0] {single} Unrecognized single mode, expected 0, 1, or oneshot"])
        #expect(f.request("repeat 2") == ["ACK [2@0] {repeat} Boolean (0/1) expected: 2"])
        #expect(f.request("replay_gain_mode x") == ["ACK [2@0] {replay_gain_mode} Unrecognized replay gain mode"])
    }

    @Test func prioritiesRangesAndFind() throws {
        let f = try QueueFixture()
        _ = f.request("add a")
        #expect(f.request("prio 7 1:") == ["OK"])
        #expect(f.request("rangeid 3 0.5:") == ["OK"])
        let info = f.request("playlistid 3")
        #expect(info.prefix(2) == ["file: a/3.mp3", "Range: 0.500-"])
        #expect(info.suffix(6) == ["Time: 1", "duration: 0.544", "Pos: 2", "Id: 3", "Prio: 7", "OK"])
        #expect(f.request("playlistfind title a/2.mp3").filter { $0.hasPrefix("Pos") } == ["Pos: 1"])
        #expect(f.request("playlistsearch title A/").filter { $0.hasPrefix("Pos") } == ["Pos: 0", "Pos: 1", "Pos: 2"])
        #expect(f.request("playlist") == ["0:file: a/1.mp3", "1:file: a/2.mp3", "2:file: a/3.mp3", "OK"])
        #expect(f.request("findadd title a/1.mp3 position 0") == ["OK"])
        #expect(f.files.first == "a/1.mp3")
        #expect(f.request("searchadd title B/") == ["OK"])
        #expect(f.files.last == "b/1.mp3")
    }

    @Test func playbackStatusAndEndOfSong() throws {
        let f = try QueueFixture()
        _ = f.request("add a")
        #expect(f.request("play 1") == ["OK"])
        let status = f.request("status")
        #expect(status.contains("state: play"))
        #expect(
            Array(status.drop { !$0.hasPrefix("song:") }) == [
                "song: 1", "songid: 2", "time: 0:1", "elapsed: 0.000", "bitrate: 128", "duration: 1.044", "nextsong: 2",
                "nextsongid: 3", "OK",
            ])
        #expect(f.request("currentsong").suffix(3) == ["Pos: 1", "Id: 2", "OK"])
        let idler = try LoopbackClient(port: f.server.port)
        _ = idler.readLine()
        idler.send("idle player\n")
        f.server.withPlayer { player in
            player.start()
            player.endOfSong()
        }
        #expect(idler.readReply() == ["changed: player", "OK"])
        #expect(f.status("song") == "2")
        #expect(f.status("nextsong") == nil)
        #expect(f.request("pause") == ["OK"])
        #expect(f.status("state") == "pause")
        #expect(f.request("stop") == ["OK"])
        #expect(f.status("state") == "stop")
        #expect(f.status("song") == "2")
        #expect(f.status("time") == nil)
        #expect(f.request("seekid 1 0.25") == ["OK"])
        #expect(f.status("song") == "0")
        #expect(f.status("elapsed") == "0.250")
    }

    @Test func singleModePausesAtTheNextSong() throws {
        let f = try QueueFixture()
        _ = f.request("add a")
        _ = f.request("single oneshot")
        _ = f.request("play 0")
        f.server.withPlayer { player in
            player.start()
            player.endOfSong()
        }
        #expect(f.status("state") == "pause")
        #expect(f.status("song") == "1")
        #expect(f.status("single") == "0")
    }

    @Test func optionsVolumeAndOutputs() throws {
        let f = try QueueFixture()
        let idler = try LoopbackClient(port: f.server.port)
        _ = idler.readLine()
        idler.send("idle options\n")
        #expect(f.request("crossfade 3") == ["OK"])
        #expect(idler.readReply() == ["changed: options", "OK"])
        _ = f.request("mixrampdb -17.5")
        _ = f.request("mixrampdelay 2")
        let status = f.request("status")
        #expect(status.first == "volume: 100")
        #expect(status.contains("mixrampdb: -17.5"))
        #expect(status.contains("xfade: 3"))
        #expect(status.contains("mixrampdelay: 2"))
        #expect(f.request("replay_gain_mode auto") == ["OK"])
        #expect(f.request("replay_gain_status") == ["replay_gain_mode: auto", "OK"])
        #expect(f.request("setvol 40") == ["OK"])
        #expect(f.request("volume -50") == ["OK"])
        #expect(f.request("getvol") == ["volume: 0", "OK"])
        #expect(f.request("setvol 101") == ["ACK [2@0] {setvol} Number too large: 101"])
        #expect(
            f.request("outputs") == [
                "outputid: 0", "outputname: Null Output", "plugin: null", "outputenabled: 1", "OK",
            ])
        #expect(f.request("disableoutput 0") == ["OK"])
        #expect(f.request("toggleoutput 0") == ["OK"])
        #expect(f.request("outputs").contains("outputenabled: 1"))
        #expect(f.request("enableoutput 1") == ["ACK [50@0] {enableoutput} No such audio output"])
        #expect(f.request("outputset 0 a-b 1") == ["ACK [2@0] {outputset} Illegal attribute name"])
        #expect(f.request("outputset 0 dop 1") == ["ACK [2@0] {outputset} Unsupported attribute"])
    }

    @Test func aDatabaseUpdateRemovesDeletedQueuedSongs() throws {
        let f = try QueueFixture()
        _ = f.request("add a")
        try FileManager.default.removeItem(atPath: f.music.path + "/a/2.mp3")
        _ = f.request("update")
        for _ in 0..<300 where f.status("playlistlength") != "2" { Thread.sleep(forTimeInterval: 0.01) }
        #expect(f.files == ["a/1.mp3", "a/3.mp3"])
        #expect(f.status("playlist") == "3")
    }

    @Test func queuedSongsKeepTheirTagsUntilTheirFileChanges() throws {
        let f = try QueueFixture()
        _ = f.request("add a")
        #expect(f.status("playlist") == "2")
        // a/1.mp3 retagged with its old time: the rescan reads it, yet the queue keeps what it had, as mpd does;
        // a/2.mp3 changed: its new tags.
        try f.music.song("a/1.mp3", ["Artist": "Art", "Title": "New 1"], mtime: 1_600_000_000)
        try f.music.song("a/2.mp3", ["Artist": "Art", "Title": "New 2"], mtime: 1_600_000_100)
        _ = f.request("rescan")
        for _ in 0..<300 where f.request("status").contains(where: { $0.hasPrefix("updating_db") }) {
            Thread.sleep(forTimeInterval: 0.01)
        }
        #expect(f.request("find title \"New 1\"").first == "file: a/1.mp3")
        let titles = f.request("playlistinfo").filter { $0.hasPrefix("Title: ") }
        #expect(titles == ["Title: a/1.mp3", "Title: New 2", "Title: a/3.mp3"])
        #expect(f.status("playlist") == "3")
        #expect(f.request("plchangesposid 2") == ["cpos: 1", "Id: 2", "OK"])
        // The next update changes nothing more.
        _ = f.request("update")
        for _ in 0..<300 where f.request("status").contains(where: { $0.hasPrefix("updating_db") }) {
            Thread.sleep(forTimeInterval: 0.01)
        }
        #expect(f.request("playlistinfo").filter { $0.hasPrefix("Title: ") } == titles)
        #expect(f.status("playlist") == "3")
    }

    @Test func localClientsMayAddFilesOutsideTheMusicDirectory() throws {
        let music = try MusicDirectory()
        let outside = try MusicDirectory()
        try outside.song("x.mp3", ["Title": "Outside"])
        let socket = outside.path + "/socket"
        let path = music.path
        let server = try TestServer { options in
            options.listenAddresses.append(.unix(path: socket))
            options.musicDirectory = path
            options.library = LibraryOptions(
                updater: Updater(
                    root: path, reader: FakeReader(), logger: .discarding, metadata: options.metadataToUse),
                databaseFile: path + ".db")
        }
        defer { server.stop() }
        let remote = try LoopbackClient(port: server.port)
        _ = remote.readLine()
        #expect(remote.request("add \"\(outside.path)/x.mp3\"") == ["ACK [4@0] {add} Access denied"])
        #expect(remote.request("addid \"file://\(outside.path)/x.mp3\"") == ["ACK [4@0] {addid} Access denied"])
        let local = try LoopbackClient(unixPath: socket)
        _ = local.readLine()
        #expect(local.request("add \"\(outside.path)/x.mp3\"") == ["OK"])
        #expect(local.request("addid \"file://\(outside.path)/x.mp3\" 0") == ["Id: 2", "OK"])
        // As mpd's `DetachedSong::LoadFile`: a file that cannot be looked at is a system error, anything but a
        // regular file is no song.
        #expect(
            local.request("addid \"\(outside.path)/missing.mp3\"")
                == ["ACK [52@0] {addid} Failed to access \(outside.path)/missing.mp3: No such file or directory"])
        #expect(local.request("add \"\(outside.path)\"") == ["ACK [50@0] {add} No such song"])
        #expect(local.request("addid \"file://x.mp3\"") == ["ACK [2@0] {addid} Malformed file:// URI"])
        let info = local.request("playlistinfo")
        #expect(info.filter { $0.hasPrefix("file: ") } == Array(repeating: "file: \(outside.path)/x.mp3", count: 2))
        #expect(info.contains("Title: Outside"))
    }
}
