// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Input
import Model
import Synchronization
import TestSupport
import Testing

@testable import Server

/// `albumart`, `readpicture` and `readcomments`: their files are read off the loop.
@Suite(.serialized) struct ArtCommandTests {
    /// Runs `request` on `fixture`'s client in a thread of its own; the reply is `reply` once `answered` signals.
    private final class PendingRequest: Sendable {
        let answered = DispatchSemaphore(value: 0)
        let reply = Mutex<[String]>([])

        init(_ line: String, on fixture: QueueFixture) {
            nonisolated(unsafe) let fixture = fixture  // used by that thread alone until `answered`
            Thread { [self] in
                let lines = fixture.request(line)
                self.reply.withLock { $0 = lines }
                self.answered.signal()
            }.start()
        }
    }

    /// A read that blocks (a slow disk, a network share) keeps its own client waiting and no other.
    @Test(arguments: ["readpicture top.mp3 0", "readcomments top.mp3"])
    func aBlockedReadKeepsOnlyItsClientWaiting(command: String) throws {
        let entered = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let f = try QueueFixture {
            $0.pictureReader = { _ in
                entered.signal()
                gate.wait()
                return Picture(data: Array("abc".utf8), mimeType: "image/png")
            }
            $0.commentReader = { _ in
                entered.signal()
                gate.wait()
                return [("comment", "x"), ("bad name", "y"), ("TITLE", "a\u{1}b")]
            }
        }
        let other = try LoopbackClient(port: f.server.port)
        _ = other.readLine()
        let pending = PendingRequest(command, on: f)
        #expect(entered.wait(timeout: .now() + 5) == .success)
        // The reader is blocked: the loop still serves everyone else.
        #expect(other.request("ping") == ["OK"])
        #expect(other.request("status").last == "OK")
        #expect(pending.answered.wait(timeout: .now() + 0.1) == .timedOut)
        gate.signal()
        #expect(pending.answered.wait(timeout: .now() + 5) == .success)
        let expected =
            command.hasPrefix("readpicture")
            ? ["size: 3", "type: image/png", "binary: 3", "abc", "OK"] : ["comment: x", "OK"]
        #expect(pending.reply.withLock { $0 } == expected)
        // The session goes on with the next request.
        #expect(f.request("ping") == ["OK"])
    }

    @Test func readErrorsAreMpds() throws {
        struct Broken: Error {}
        let f = try QueueFixture {
            $0.pictureReader = { _ in throw Broken() }
            $0.commentReader = { _ in throw Broken() }
        }
        #expect(f.request("readpicture top.mp3 0") == ["ACK [50@0] {readpicture} Failed to load file"])
        #expect(f.request("readcomments top.mp3") == ["ACK [50@0] {readcomments} Failed to load file"])
        #expect(f.request("readcomments none.mp3") == ["ACK [50@0] {readcomments} No such song"])
        // A song whose file is gone since the last update: mpd's open fails.
        try FileManager.default.removeItem(atPath: f.music.path + "/a/1.mp3")
        let gone = f.request("readpicture a/1.mp3 0")
        #expect(
            gone == ["ACK [52@0] {readpicture} Failed to open '\(f.music.path)/a/1.mp3': No such file or directory"])
        // In a command list, the deferred reply's error ends the list at its index.
        #expect(
            f.request("command_list_begin\nping\nreadcomments top.mp3\nping\ncommand_list_end")
                == ["ACK [50@1] {readcomments} Failed to load file"])
    }

    /// `albumart URL`: cover.png, cover.jpg, cover.webp beside the URL through the input plugins, the first that
    /// opens (`mpd`'s `read_stream_art`).
    @Test func albumartOfAURLReadsTheCoverBesideIt() throws {
        let opened = Mutex<[String]>([])
        let f = try QueueFixture {
            $0.remoteSchemes = ["http://"]
            $0.remoteOpener = { url, _ throws(InputError) in
                opened.withLock { $0.append(url) }
                switch url {
                case "http://h/d/cover.jpg": return MemoryInputStream(Array("0123456789".utf8), uri: url)
                case "http://h/n/cover.png": return UnsizedStream(uri: url)
                default: throw .curl(message: "The requested URL returned error: 404", uri: url)
                }
            }
        }
        #expect(f.request("binarylimit 64") == ["OK"])
        #expect(f.request("albumart http://h/d/a.mp3 4") == ["size: 10", "binary: 6", "456789", "OK"])
        #expect(opened.withLock { $0 } == ["http://h/d/cover.png", "http://h/d/cover.jpg"])
        #expect(f.request("albumart http://h/d/a.mp3 10") == ["size: 10", "binary: 0", "", "OK"])
        #expect(f.request("albumart http://h/d/a.mp3 11") == ["ACK [2@0] {albumart} Offset too large"])
        // The client's next chunks come from the cover it read last: nothing is opened again.
        #expect(opened.withLock { $0 } == ["http://h/d/cover.png", "http://h/d/cover.jpg"])
        #expect(f.request("albumart http://h/e/a.mp3 0") == ["ACK [50@0] {albumart} No file exists"])
        #expect(f.request("albumart http://h/n/a.mp3 0") == ["ACK [50@0] {albumart} Cannot get size for stream"])
        // Another directory in between: the cover is read again.
        #expect(f.request("albumart http://h/d/b.mp3 0") == ["size: 10", "binary: 10", "0123456789", "OK"])
        #expect(opened.withLock { $0.filter { $0 == "http://h/d/cover.jpg" }.count } == 2)
        // A scheme no input plugin opens.
        #expect(f.request("albumart smb://h/s/a.mp3 0") == ["ACK [2@0] {albumart} Unsupported URI scheme"])
    }

    /// The cover a client read whole is dropped once unused for its lifetime, though the client stays connected and
    /// sends nothing (`mpd`'s timer closes the cover's stream): an idle client holds no cover.
    @Test func aKeptRemoteCoverIsDroppedWhenItExpires() throws {
        let clock = ManualClock()
        let f = try QueueFixture(clock: clock) {
            $0.connectionTimeoutSeconds = 3600
            $0.remoteSchemes = ["http://"]
            $0.remoteOpener = { url, _ throws(InputError) in
                guard url == "http://h/d/cover.png" else { throw .curl(message: "404", uri: url) }
                return MemoryInputStream(Array("0123456789".utf8), uri: url)
            }
        }
        func kept() -> Bool {
            f.server.withServer { $0.clients.values.contains { $0.settings.lastRemoteCover != nil } }
        }
        #expect(f.request("binarylimit 64") == ["OK"])
        #expect(f.request("albumart http://h/d/a.mp3 0") == ["size: 10", "binary: 10", "0123456789", "OK"])
        #expect(kept())
        // A use moves the expiry: the timer armed for the first one finds the cover still in use.
        clock.advance(seconds: 10)
        #expect(f.request("albumart http://h/d/a.mp3 4") == ["size: 10", "binary: 6", "456789", "OK"])
        clock.advance(seconds: 10)
        #expect(kept())
        // Waiting in `idle` (for an event that does not come) keeps nothing alive either.
        f.client.send("idle message\n")
        #expect(f.server.waitUntil { $0.clients.values.contains { $0.isIdle } })
        clock.advance(seconds: 10)
        #expect(!kept())
    }

    /// `readcomments URL` and `readpicture URL`: the stream opened off the loop, read by the format plugins
    /// (`streamCommentReader`, `streamPictureReader`), errors in `mpd`'s words.
    @Test func readcommentsAndReadpictureOfAURL() throws {
        let f = try QueueFixture {
            $0.remoteSchemes = ["http://", "smb://"]
            $0.remoteOpener = { url, _ throws(InputError) in
                switch url {
                case let url where url.hasPrefix("http://h/ok"): return MemoryInputStream([], uri: url)
                case let url where url.hasPrefix("smb://"):
                    throw .plugin(message: "smbc_open() failed: Connection refused", uri: url)
                default: throw .curl(message: "The requested URL returned error: 404", uri: url)
                }
            }
            $0.streamCommentReader = { input throws(StreamReadError) in
                switch input.uri {
                case "http://h/ok/a.ogg": return [("title", "T"), ("bad name", "x"), ("ARTIST", "a\u{1}b")]
                case "http://h/ok/a.m3u": throw .failed(message: "avformat_open_input() failed: Invalid data")
                default: throw .notRecognized
                }
            }
            $0.streamPictureReader = { input throws(StreamReadError) in
                input.uri == "http://h/ok/a.flac" ? Picture(data: Array("0123456789".utf8), mimeType: "image/png") : nil
            }
        }
        #expect(f.request("readcomments http://h/ok/a.ogg") == ["title: T", "OK"])
        #expect(
            f.request("readcomments http://h/ok/a.m3u")
                == ["ACK [5@0] {readcomments} avformat_open_input() failed: Invalid data"])
        #expect(f.request("readcomments http://h/ok/x") == ["ACK [50@0] {readcomments} Failed to load file"])
        #expect(
            f.request("readcomments http://h/gone.ogg")
                == ["ACK [5@0] {readcomments} CURL failed: The requested URL returned error: 404"])
        #expect(
            f.request("readpicture smb://h/s/a.flac 0")
                == ["ACK [52@0] {readpicture} smbc_open() failed: Connection refused"])
        #expect(f.request("readpicture http://h/ok/a.ogg 0") == ["OK"])
        #expect(f.request("binarylimit 64") == ["OK"])
        #expect(
            f.request("readpicture http://h/ok/a.flac 4") == [
                "size: 10", "type: image/png", "binary: 6", "456789", "OK",
            ])
        #expect(f.request("readpicture http://h/ok/a.flac 11") == ["ACK [2@0] {readpicture} Bad file offset"])
        // A scheme no input plugin opens.
        #expect(f.request("readcomments nfs://h/e/a.flac") == ["ACK [2@0] {readcomments} Unsupported URI scheme"])
    }

    /// A cover cut short after 80 of its 100 bytes: the chunk before the break is sent, the cover is not kept.
    @Test func aCoverCutShortIsNotKept() throws {
        let opened = Mutex(0)
        let f = try QueueFixture {
            $0.remoteSchemes = ["http://"]
            $0.remoteOpener = { url, _ throws(InputError) in
                guard url == "http://h/d/cover.png" else { throw .curl(message: "404", uri: url) }
                opened.withLock { $0 += 1 }
                return CutStream(uri: url)
            }
        }
        #expect(f.request("binarylimit 64") == ["OK"])
        let first = f.request("albumart http://h/d/a.mp3 0")
        #expect(first.first == "size: 100" && first.dropFirst().first == "binary: 64" && first.last == "OK")
        #expect(
            f.request("albumart http://h/d/a.mp3 64") == ["ACK [5@0] {albumart} CURL failed: transfer closed"])
        #expect(opened.withLock { $0 } == 2)
    }

    /// 100 bytes announced, a failure after 80.
    private final class CutStream: Input.InputStream {
        let uri: String
        var size: UInt64? { 100 }
        var isSeekable: Bool { true }
        var mimeType: String? { nil }
        private(set) var offset: UInt64 = 0
        init(uri: String) { self.uri = uri }
        func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
            if self.offset >= 80 { throw .curl(message: "transfer closed", uri: self.uri) }
            let count = min(buffer.count, 80 - Int(self.offset))
            for index in 0..<count { buffer[index] = UInt8(ascii: "a") }
            self.offset += UInt64(count)
            return count
        }
        func seek(to offset: UInt64) throws(InputError) { self.offset = offset }
    }

    /// A stream that does not know its size (HTTP without Content-Length).
    private final class UnsizedStream: Input.InputStream {
        let uri: String
        var size: UInt64? { nil }
        var isSeekable: Bool { false }
        var mimeType: String? { nil }
        var offset: UInt64 { 0 }
        init(uri: String) { self.uri = uri }
        func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int { 0 }
        func seek(to offset: UInt64) throws(InputError) { throw .notSeekable(uri: self.uri) }
    }

    @Test func albumartReadsTheChunkAskedFor() throws {
        let f = try QueueFixture()
        let cover = Array("0123456789".utf8)
        try Data(cover).write(to: URL(fileURLWithPath: f.music.path + "/a/cover.jpg"))
        #expect(f.request("binarylimit 64") == ["OK"])
        #expect(f.request("albumart a/2.mp3 4") == ["size: 10", "binary: 6", "456789", "OK"])
        #expect(f.request("albumart a/2.mp3 10") == ["size: 10", "binary: 0", "", "OK"])
        #expect(f.request("albumart a/2.mp3 11") == ["ACK [2@0] {albumart} Offset too large"])
        #expect(f.request("albumart b/1.mp3 0") == ["ACK [50@0] {albumart} No file exists"])
        // In a command list, the reply comes in its place.
        #expect(
            f.request("command_list_ok_begin\nalbumart a/2.mp3 8\nping\ncommand_list_end")
                == ["size: 10", "binary: 2", "89", "list_OK", "list_OK", "OK"])
    }
}
