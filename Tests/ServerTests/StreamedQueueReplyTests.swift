// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Server
import TestSupport
import Testing

/// The queue's listings (`playlistinfo`, `plchanges`, `playlistid`, `playlistfind`) are sent while they are made
/// rather than queued whole: what a client gets, and when.
@Suite(.serialized) struct StreamedQueueReplyTests {
    /// A queue of 1000 songs with 1000-character titles: a `playlistinfo` of about 1.1 MB, several times what the
    /// server's socket buffer holds.
    private func bigQueue(configure: @escaping @Sendable (inout ServerOptions) -> Void = { _ in }) throws
        -> QueueFixture
    {
        let music = try MusicDirectory()
        for name in ["a/1.mp3", "a/2.mp3", "a/3.mp3", "b/1.mp3", "top.mp3"] {
            try music.song(
                name, ["Artist": "Art", "Title": name + String(repeating: "t", count: 1000)], mtime: 1_600_000_000)
        }
        let f = try QueueFixture(music: music, configure: configure)
        let adds = Array(repeating: "add \"\"\n", count: 200).joined()
        f.client.send("command_list_begin\n" + adds + "command_list_end\n")
        #expect(f.client.readReply() == ["OK"])
        #expect(f.status("playlistlength") == "1000")
        return f
    }

    /// The reply as the session makes it inside a command list: whole, in one turn, never streamed.
    private func wholeReply(_ f: QueueFixture, _ command: String) -> [UInt8] {
        f.client.send("command_list_begin\n\(command)\ncommand_list_end\n")
        return f.client.readReplyBytes()
    }

    @Test func aSlowReaderGetsTheWholeReplyInOrderAndItsNextCommandsAfterIt() throws {
        let f = try self.bigQueue()
        let whole = self.wholeReply(f, "playlistinfo")
        #expect(whole.count > 1_000_000)
        #expect(whole.suffix(3).elementsEqual("OK\n".utf8))

        let reader = try LoopbackClient(port: f.server.port)
        reader.limitReceiveBuffer(to: 64 * 1024)
        _ = reader.readLine()
        // The reply, then two more commands in the same packet: read only after the reply is out.
        reader.send("playlistinfo\nstatus\nping\n")
        // Its first line: the reply has begun. Then not reading for a while: the server's socket fills and it must
        // wait for the reader, while it goes on answering others.
        let first = reader.readLine() ?? ""
        Thread.sleep(forTimeInterval: 0.1)
        #expect(f.request("ping") == ["OK"])
        #expect(f.request("deleteid 1") == ["OK"])
        let streamed = Array((first + "\n").utf8) + reader.readReplyBytes()
        // As the queue was when the command came: the deletion meanwhile does not show in it.
        #expect(streamed == whole)
        let status = reader.readReply()
        #expect(status.contains("playlistlength: 999"))
        #expect(status.last == "OK")
        #expect(reader.request("ping") == ["OK"])
        #expect(!reader.isClosed)
    }

    @Test func everyStreamedQueueListingMatchesItsWholeReply() throws {
        let f = try self.bigQueue()
        #expect(f.request("prio 7 10:20") == ["OK"])
        for command in ["plchanges 0", "plchanges 2", "playlistid", "playlistinfo 990:", "playlistsearch title t"] {
            let whole = self.wholeReply(f, command)
            f.client.send(command + "\n")
            #expect(f.client.readReplyBytes() == whole, "\(command)")
        }
        #expect(self.wholeReply(f, "playlistfind title nothing").elementsEqual("OK\n".utf8))
        #expect(f.request("playlistfind title nothing") == ["OK"])
    }

    @Test func aReplyWhoseSizeBoundPassesTheLimitButNotItsSizeIsStreamed() throws {
        // About 1.1 MB of reply, bounded by about 1.7 MB: under a 1.5 MiB limit it is counted exactly, and fits.
        let f = try self.bigQueue { $0.maxOutputBufferSize = 1536 * 1024 }
        let whole = self.wholeReply(f, "playlistinfo")
        #expect(whole.count > 1_000_000 && whole.count < 1536 * 1024)
        f.client.send("playlistinfo\n")
        #expect(f.client.readReplyBytes() == whole)
        #expect(f.request("ping") == ["OK"])
    }

    @Test func aQueueReplyOverTheOutputBufferLimitDropsTheClientWithNothingSent() throws {
        // mpd buffers the whole reply: past max_output_buffer_size it closes the connection before sending any
        // of it (probed on 0.23.12: `playlistinfo 0:1000` of a 2000-song queue with a 64 KiB limit gives 0 bytes).
        let f = try self.bigQueue { $0.maxOutputBufferSize = 256 * 1024 }
        let small = try LoopbackClient(port: f.server.port)
        _ = small.readLine()
        // Under the limit: answered.
        let some = small.request("playlistinfo 0:100")
        #expect(some.filter { $0.hasPrefix("file: ") }.count == 100)
        #expect(some.last == "OK")
        small.send("playlistinfo\nping\n")
        #expect(small.readUntilClosed().isEmpty)
        #expect(small.isClosed)
        // Inside a list the reply is made whole and measured: the same.
        let listed = try LoopbackClient(port: f.server.port)
        _ = listed.readLine()
        listed.send("command_list_begin\nplchanges 0\ncommand_list_end\n")
        #expect(listed.readUntilClosed().isEmpty)
        #expect(f.request("ping") == ["OK"])
    }
}
