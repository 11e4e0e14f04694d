// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Library
import MPDProtocol
import Model
import TestSupport
import Testing

@testable import Server

@Suite(.serialized)
struct SessionTests {
    @Test func greetingAndPing() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try LoopbackClient(port: server.port)
        #expect(client.readLine() == "OK MPD 0.23.5")
        #expect(client.request("ping") == ["OK"])
        #expect(client.request("foo") == ["ACK [5@0] {} unknown command \"foo\""])
        #expect(client.request("ping 1") == ["ACK [2@0] {ping} wrong number of arguments for \"ping\""])
    }

    @Test func commandListStopsAtFirstError() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try LoopbackClient(port: server.port)
        _ = client.readLine()
        client.send("command_list_ok_begin\nping\nping\nfoo\nping\ncommand_list_end\n")
        #expect(client.readReply() == ["list_OK", "list_OK", "ACK [5@2] {} unknown command \"foo\""])
        #expect(client.request("ping") == ["OK"])
    }

    @Test func idleIsWokenByAnotherClientsSubscribe() throws {
        let server = try TestServer()
        defer { server.stop() }
        let idler = try LoopbackClient(port: server.port)
        let other = try LoopbackClient(port: server.port)
        _ = idler.readLine()
        _ = other.readLine()
        idler.send("idle subscription message\n")
        #expect(other.request("subscribe chan") == ["OK"])
        #expect(idler.readReply() == ["changed: subscription", "OK"])
        idler.send("idle\n")
        idler.send("noidle\n")
        #expect(idler.readReply() == ["OK"])
    }

    @Test func commandDuringIdleCloses() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try LoopbackClient(port: server.port)
        _ = client.readLine()
        client.send("idle\n")
        client.send("ping\n")
        #expect(client.readUntilClosed().isEmpty)
        #expect(client.isClosed)
    }

    @Test func pipelinedPingsAnswerInOrder() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try LoopbackClient(port: server.port)
        _ = client.readLine()
        let count = 10_000
        // 50 kB of requests and 30 kB of replies fit in loopback socket buffers: one thread suffices.
        client.send(String(repeating: "ping\n", count: count))
        var oks = 0
        while oks < count, let line = client.readLine() {
            #expect(line == "OK")
            oks += 1
        }
        #expect(oks == count)
    }

    @Test func pipelinedLargeRepliesAllArrive() throws {
        // Replies that pass the back-pressure mark and that the kernel takes at once must not stall the
        // remaining pipelined requests.
        let server = try TestServer()
        defer { server.stop() }
        let client = try LoopbackClient(port: server.port)
        _ = client.readLine()
        let count = 400
        client.send(String(repeating: "commands\n", count: count) + "ping\n")
        var oks = 0
        while oks < count + 1, let line = client.readLine() {
            if line == "OK" { oks += 1 }
        }
        #expect(oks == count + 1)
    }

    @Test func maxConnectionsClosesExtraClientsWithoutGreeting() throws {
        let server = try TestServer { $0.maxConnections = 1 }
        defer { server.stop() }
        let first = try LoopbackClient(port: server.port)
        #expect(first.readLine() == "OK MPD 0.23.5")
        let second = try LoopbackClient(port: server.port)
        #expect(second.readUntilClosed().isEmpty)
        #expect(first.request("ping") == ["OK"])
    }

    @Test func connectionTimeoutClosesSilentClientsButNotIdleOnes() throws {
        // The timeout runs on this clock, which stands still until the test moves it.
        let clock = ManualClock()
        let server = try TestServer(clock: clock) { $0.connectionTimeoutSeconds = 60 }
        defer { server.stop() }
        let silent = try LoopbackClient(port: server.port)
        let idler = try LoopbackClient(port: server.port)
        // Once the greetings are read, both clients' timeouts run.
        _ = silent.readLine()
        _ = idler.readLine()
        idler.send("idle\n")
        #expect(server.waitUntil { $0.clients.values.contains { $0.isIdle } })

        clock.advance(seconds: 59)
        #expect(server.withServer { $0.clientCount } == 2)
        clock.advance(seconds: 1)
        #expect(silent.readUntilClosed().isEmpty)
        #expect(silent.isClosed)

        // However long an idle lasts, it is not timed out; its end starts the timeout again.
        clock.advance(seconds: 3600)
        #expect(server.withServer { $0.clientCount } == 1)
        idler.send("noidle\n")
        #expect(idler.readReply() == ["OK"])
        clock.advance(seconds: 59)
        #expect(idler.request("ping") == ["OK"])
        clock.advance(seconds: 59)
        #expect(server.withServer { $0.clientCount } == 1)
        clock.advance(seconds: 1)
        #expect(idler.readUntilClosed().isEmpty)
        #expect(idler.isClosed)
    }

    @Test func lineOfMaximumLengthIsAcceptedAndLongerCloses() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try LoopbackClient(port: server.port)
        _ = client.readLine()
        // "ping" + spaces + "\n" = 8192 bytes: trailing blanks are stripped.
        client.send("ping" + String(repeating: " ", count: 8192 - 5) + "\n")
        #expect(client.readReply() == ["OK"])
        client.send("ping" + String(repeating: " ", count: 8192 - 4) + "\n")
        #expect(client.readUntilClosed().isEmpty)
    }

    /// As in mpd, requests sent behind one that closes the connection are not run.
    @Test(arguments: [("close\n", ""), ("pi-ng\n", "ACK [5@0] {} Invalid word character\n")])
    func requestsBehindAClosingOneAreNotRun(closing: String, reply: String) throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try LoopbackClient(port: server.port)
        _ = client.readLine()
        client.send(closing + "repeat 1\n")
        #expect(client.readUntilClosed() == Array(reply.utf8))
        let other = try LoopbackClient(port: server.port)
        _ = other.readLine()
        #expect(other.request("status").contains("repeat: 0"))
    }
}

@Suite(.serialized)
struct DatabaseCommandTests {
    private func server(_ music: MusicDirectory, reader: FakeReader = FakeReader()) throws -> TestServer {
        let path = music.path
        return try TestServer { options in
            options.musicDirectory = path
            options.library = LibraryOptions(
                updater: Updater(root: path, reader: reader, logger: .discarding, metadata: options.metadataToUse),
                databaseFile: path + ".db")
        }
    }

    /// Waits until `status` shows no update job; a test failure if one still runs after 10 s of real time (a
    /// safety net, not a measurement: the jobs here take milliseconds).
    private func waitForUpdate(_ client: LoopbackClient) {
        for _ in 0..<1000 {
            if !client.request("status").contains(where: { $0.hasPrefix("updating_db:") }) { return }
            Thread.sleep(forTimeInterval: 0.01)
        }
        Issue.record("the update job did not finish")
    }

    /// A server on `music` and a client connected to it once the initial scan is done.
    private func scanned(_ music: MusicDirectory) throws -> (TestServer, LoopbackClient) {
        let server = try self.server(music)
        let client: LoopbackClient
        do { client = try LoopbackClient(port: server.port) } catch {
            server.stop()
            throw error
        }
        _ = client.readLine()
        self.waitForUpdate(client)
        return (server, client)
    }

    @Test func initialScanListsTheLibrary() throws {
        let music = try MusicDirectory()
        try music.song("b/x.mp3", ["Artist": "B", "Album": "Al"])
        try music.song("top.mp3", ["Artist": "A", "Title": "T"])
        let (server, client) = try self.scanned(music)
        defer { server.stop() }
        #expect(client.request("listall") == ["file: top.mp3", "directory: b", "file: b/x.mp3", "OK"])
        let lsinfo = client.request("lsinfo")
        #expect(lsinfo.first == "file: top.mp3")
        #expect(lsinfo.contains("Artist: A"))
        #expect(lsinfo.contains("Time: 1"))
        #expect(lsinfo.contains("duration: 1.044"))
        #expect(lsinfo.contains("directory: b"))
        #expect(client.request("lsinfo b/x.mp3").first == "file: b/x.mp3")
        #expect(client.request("lsinfo nope") == ["ACK [50@0] {lsinfo} No such directory"])
        let stats = client.request("stats")
        #expect(stats.contains("artists: 2"))
        #expect(stats.contains("songs: 2"))
        #expect(stats.contains("db_playtime: 2"))
    }

    @Test func searchesFoldOnceAndExactLookupsCompareBytes() throws {
        let music = try MusicDirectory()
        try music.song("a.mp3", ["Title": "Straße", "Artist": "Zoë", "Genre": "K"])
        try music.song("b.mp3", ["Title": "ß", "Artist": "X", "AlbumArtist": "Big Band", "Genre": "\u{212A}"])
        try music.song("c.mp3", ["Title": "plain", "Artist": "caf\u{E9}"])
        let (server, client) = try self.scanned(music)
        defer { server.stop() }
        func files(_ request: String) -> [String] {
            client.request(request).filter { $0.hasPrefix("file: ") || $0.hasPrefix("ACK") }.map {
                $0.hasPrefix("file: ") ? String($0.dropFirst(6)) : $0
            }
        }
        // mpd's folding quirk: a lone ß stays as it is, inside a longer title it becomes "ss".
        #expect(files("search title SS") == ["a.mp3"])
        #expect(files("search title ß") == ["b.mp3"])
        #expect(files("search title \"\"") == ["a.mp3", "b.mp3", "c.mp3"])
        #expect(files("search artist CAF\u{C9}") == ["c.mp3"])
        // AlbumArtist falls back to Artist only for a song without an AlbumArtist.
        #expect(files("search \"(AlbumArtist contains 'ZO')\"") == ["a.mp3"])
        #expect(files("search \"(AlbumArtist contains 'x')\"") == [])
        #expect(files("search \"(AlbumArtist contains 'band')\"") == ["b.mp3"])
        #expect(files("search \"(Title !contains 'ss')\"") == ["b.mp3", "c.mp3"])
        #expect(files("search \"(Genre contains '')\"") == ["a.mp3", "b.mp3", "c.mp3"])
        #expect(files("search \"(Genre == '')\"") == ["c.mp3"])
        #expect(files("search \"((Title contains 'a') AND (Artist == 'caf\u{E9}'))\"") == ["c.mp3"])
        #expect(files("search \"((Title contains 'a') AND (any contains 'zo'))\"") == ["a.mp3"])
        // The Kelvin sign and K are different values, as mpd compares bytes.
        #expect(files("find \"(Genre == 'K')\"") == ["a.mp3"])
        #expect(files("find \"(Genre == '\u{212A}')\"") == ["b.mp3"])
        #expect(files("find \"((Genre == 'K') AND (Title == 'ß'))\"") == [])
        // No two artists are canonically equivalent here, yet a decomposed needle still finds nothing.
        #expect(files("find \"(Artist == 'caf\u{E9}')\"") == ["c.mp3"])
        #expect(files("find \"(Artist == 'cafe\u{301}')\"") == [])
        #expect(client.request("count \"(Genre == '\u{212A}')\"") == ["songs: 1", "playtime: 1", "OK"])
        #expect(client.request("count \"(Genre == 'k')\"") == ["songs: 0", "playtime: 0", "OK"])
        #expect(
            client.request("list album group albumartist") == [
                "AlbumArtist: Big Band", "Album: ", "AlbumArtist: Zoë", "Album: ", "AlbumArtist: caf\u{E9}", "Album: ",
                "OK",
            ])
    }

    @Test func updateJobsHaveIdsAndRaiseIdleEvents() throws {
        let music = try MusicDirectory()
        try music.song("a.mp3")
        let server = try self.server(music)
        defer { server.stop() }
        let client = try LoopbackClient(port: server.port)
        let idler = try LoopbackClient(port: server.port)
        _ = client.readLine()
        _ = idler.readLine()
        self.waitForUpdate(client)
        #expect(client.request("update ../x") == ["ACK [2@0] {update} Malformed path"])
        #expect(client.request("update a/") == ["ACK [2@0] {update} Malformed path"])
        try music.song("new.mp3")
        idler.send("idle database\n")
        #expect(client.request("update") == ["updating_db: 2", "OK"])
        #expect(idler.readReply() == ["changed: database", "OK"])
        self.waitForUpdate(client)
        #expect(client.request("listall") == ["file: a.mp3", "file: new.mp3", "OK"])
    }

    @Test func largeListingsStreamPastTheOutputBufferLimit() throws {
        // mpd drops a client whose reply outgrows max_output_buffer_size; Fermata produces listings as the
        // client reads, so the whole reply arrives with far less buffered.
        let music = try MusicDirectory()
        for index in 0..<400 {
            try music.song(
                "d\(index % 7)/s\(index).mp3", ["Title": String(repeating: "t", count: 200), "Artist": "A\(index)"])
        }
        let path = music.path
        let server = try TestServer { options in
            options.maxOutputBufferSize = 32 * 1024
            options.musicDirectory = path
            options.library = LibraryOptions(
                updater: Updater(root: path, reader: FakeReader(), logger: .discarding), databaseFile: nil)
        }
        defer { server.stop() }
        let client = try LoopbackClient(port: server.port)
        _ = client.readLine()
        self.waitForUpdate(client)
        let stats = client.request("stats")
        #expect(stats.contains("songs: 400"), "\(stats)")
        let reply = client.request("listallinfo")
        #expect(reply.last == "OK")
        #expect(reply.filter { $0.hasPrefix("file: ") }.count == 400)
        #expect(reply.joined(separator: "\n").utf8.count > 100 * 1024)
        // The pieces, made one after the other in the connection's output, are what `lsinfo` of each directory
        // gives, in order: nothing lost, doubled or overwritten between pieces.
        var expected: [String] = []
        var brief: [String] = []
        let root = Array(client.request("lsinfo").dropLast())
        for (index, line) in root.enumerated() where line.hasPrefix("directory: ") {
            expected.append(line)
            brief.append(line)
            if index + 1 < root.count && root[index + 1].hasPrefix("Last-Modified: ") {
                expected.append(root[index + 1])
            }
            let songs = client.request("lsinfo \(line.dropFirst(11))").dropLast()
            expected += songs
            brief += songs.filter { $0.hasPrefix("file: ") }
        }
        #expect(brief.count == 7 + 400)
        #expect(Array(reply.dropLast()) == expected)
        #expect(client.request("listall") == brief + ["OK"])
        let search = client.request("search title t")
        #expect(search.filter { $0.hasPrefix("file: ") }.count == 400)
        #expect(client.request("ping") == ["OK"])
    }

    @Test func autoUpdatePicksUpNewAndDeletedFiles() throws {
        let music = try MusicDirectory()
        try music.song("a/old.mp3")
        let path = music.path
        let server = try TestServer { options in
            options.musicDirectory = path
            options.library = LibraryOptions(
                updater: Updater(root: path, reader: FakeReader(), logger: .discarding), databaseFile: nil,
                autoUpdate: true)
        }
        defer { server.stop() }
        let client = try LoopbackClient(port: server.port)
        _ = client.readLine()
        self.waitForUpdate(client)
        let idler = try LoopbackClient(port: server.port)
        _ = idler.readLine()
        idler.send("idle database\n")
        try music.song("a/new.mp3")
        try music.song("b/other.mp3")
        // The watcher waits a second after the last change, then updates the changed directories.
        #expect(idler.readReply() == ["changed: database", "OK"])
        self.waitForUpdate(client)
        #expect(
            client.request("listall") == [
                "directory: a", "file: a/new.mp3", "file: a/old.mp3", "directory: b", "file: b/other.mp3", "OK",
            ])
        try FileManager.default.removeItem(atPath: path + "/a/old.mp3")
        for _ in 0..<300 {
            if !client.request("listall").contains("file: a/old.mp3") { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        #expect(!client.request("listall").contains("file: a/old.mp3"))
    }
}

/// Whether a local client may read a file outside the music directory (`add`, `addid`, `getfingerprint`): decided
/// off the loop, where the file is read.
@Suite struct AllowFileTests {
    @Test func anotherUserReadsOnlyWhatItOwnsOrWhatEveryoneMayRead() throws {
        let directory = try MusicDirectory()
        let path = directory.path + "/x.mp3"
        try Data([1]).write(to: URL(fileURLWithPath: path))
        let other = geteuid() &+ 4242
        #expect(chmod(path, 0o600) == 0)
        #expect(throws: AckError(.permission, "Access denied")) {
            try SessionSettings.allowFile(path, peerUserID: other)
        }
        // The server's own user reads everything it can; a client that is not local reads nothing.
        try SessionSettings.allowFile(path, peerUserID: geteuid())
        #expect(throws: AckError(.permission, "Access denied")) { try SessionSettings.allowFile(path, peerUserID: nil) }
        #expect(chmod(path, 0o644) == 0)
        try SessionSettings.allowFile(path, peerUserID: other)
        let missing = #expect(throws: AckError.self) {
            try SessionSettings.allowFile(directory.path + "/missing.mp3", peerUserID: other)
        }
        #expect(missing?.code == .system)
        #expect(missing?.message.hasPrefix("Failed to access \(directory.path)/missing.mp3: ") == true)
    }
}
