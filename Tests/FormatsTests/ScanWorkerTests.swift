// SPDX-License-Identifier: GPL-3.0-or-later

import Configuration
import Formats
import Glibc
import Input
import Model
import Posix
import Synchronization
import Testing

@Suite struct ScanWorkerProtocolTests {
    static let fullInfo: SongInfo = {
        var gain = ReplayGainInfo()
        gain.trackGain = -6.5
        gain.albumPeak = 0.987_654_321
        return SongInfo(
            tags: [
                TagItem(.artist, "Ünïcode Artist"), TagItem(.title, ""), TagItem(.artist, "Second"),
                TagItem(.musicBrainzWorkID, "a\nb"),
            ],
            durationMilliseconds: 123_456,
            audioFormat: AudioFormat(sampleRate: 96000, sampleFormat: .float, channels: 6),
            replayGain: gain, hasPicture: true, hasPlaylist: true)
    }()

    static let replies: [ScanWorkerProtocol.Reply] = [
        .success(Self.fullInfo), .success(SongInfo()),
        .success(
            SongInfo(
                durationMilliseconds: UInt64.max,
                audioFormat: AudioFormat(sampleRate: 1, sampleFormat: .dsd, channels: 1))),
        .failure(.notRecognized(path: "/music/a.m4a")), .failure(.decoder("avformat_open_input() failed")),
        .failure(.unsupportedFormat("24-bit")),
        .failure(.input(.io(SystemCallError("open", Errno(rawValue: ENOENT)), uri: "/music/gone.m4a"))),
        .failure(.input(.notAFile(uri: "/music/dir.m4a"))),
    ]

    @Test(arguments: Self.replies)
    func repliesRoundTrip(_ reply: ScanWorkerProtocol.Reply) throws {
        #expect(try ScanWorkerProtocol.decodeReply(ScanWorkerProtocol.encode(reply)) == reply)
    }

    @Test func everySampleFormatRoundTrips() throws {
        for format in [SampleFormat.s8, .s16, .s24, .s32, .float, .dsd] {
            let reply = ScanWorkerProtocol.Reply.success(
                SongInfo(audioFormat: AudioFormat(sampleRate: 44100, sampleFormat: format, channels: 2)))
            #expect(try ScanWorkerProtocol.decodeReply(ScanWorkerProtocol.encode(reply)) == reply)
        }
    }

    @Test func everyTagTypeRoundTrips() throws {
        let reply = ScanWorkerProtocol.Reply.success(SongInfo(tags: TagType.allCases.map { TagItem($0, $0.name) }))
        #expect(try ScanWorkerProtocol.decodeReply(ScanWorkerProtocol.encode(reply)) == reply)
    }

    @Test func otherErrorsTravelAsTheirText() throws {
        let error = FormatError.input(.plugin(message: "smbc_open() failed", uri: "smb://x/y"))
        #expect(
            try ScanWorkerProtocol.decodeReply(ScanWorkerProtocol.encode(.failure(error)))
                == .failure(.decoder(error.description)))
    }

    @Test func requestsRoundTrip() throws {
        let requests = [
            ScanWorkerProtocol.Request(plugin: "ffmpeg", settings: [], path: "/music/a.m4a"),
            ScanWorkerProtocol.Request(
                plugin: "ffmpeg",
                settings: [.init(name: "probesize", value: "32"), .init(name: "analyzeduration", value: "")],
                path: "/music/Café/\u{1F3B5}.m4a"),
        ]
        for request in requests {
            #expect(try ScanWorkerProtocol.decodeRequest(ScanWorkerProtocol.encode(request)) == request)
        }
    }

    @Test func everyTruncationIsAnError() {
        for reply in Self.replies {
            let payload = ScanWorkerProtocol.encode(reply)
            for length in 0..<payload.count {
                #expect(throws: ScanWorkerProtocol.DecodingError.self) {
                    try ScanWorkerProtocol.decodeReply(Array(payload[..<length]))
                }
            }
        }
        let request = ScanWorkerProtocol.encode(
            ScanWorkerProtocol.Request(plugin: "ffmpeg", settings: [.init(name: "a", value: "b")], path: "/x.m4a"))
        for length in 0..<request.count {
            #expect(throws: ScanWorkerProtocol.DecodingError.self) {
                try ScanWorkerProtocol.decodeRequest(Array(request[..<length]))
            }
        }
    }

    @Test func garbageIsAnErrorNotACrash() {
        var generator = SystemRandomNumberGenerator()
        #expect(throws: ScanWorkerProtocol.DecodingError.malformed("reply kind 7")) {
            try ScanWorkerProtocol.decodeReply([7])
        }
        #expect(throws: ScanWorkerProtocol.DecodingError.malformed("error kind 9")) {
            try ScanWorkerProtocol.decodeReply([1, 9])
        }
        // A count far beyond the payload, an unknown tag type, trailing bytes, text that is not UTF-8.
        #expect(throws: ScanWorkerProtocol.DecodingError.truncated) {
            try ScanWorkerProtocol.decodeReply([0, 0xFF, 0xFF, 0xFF, 0xFF])
        }
        #expect(throws: ScanWorkerProtocol.DecodingError.malformed("tag type 200")) {
            try ScanWorkerProtocol.decodeReply([0, 1, 0, 0, 0, 200, 0, 0, 0, 0])
        }
        #expect(throws: ScanWorkerProtocol.DecodingError.malformed("1 bytes left")) {
            try ScanWorkerProtocol.decodeReply(ScanWorkerProtocol.encode(.failure(.decoder("x"))) + [0])
        }
        #expect(throws: ScanWorkerProtocol.DecodingError.malformed("text not UTF-8")) {
            try ScanWorkerProtocol.decodeReply([1, 4, 1, 0, 0, 0, 0xFF])
        }
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0..<64, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            _ = try? ScanWorkerProtocol.decodeReply(bytes)
            _ = try? ScanWorkerProtocol.decodeRequest(bytes)
        }
    }

    @Test func framesGoThroughAPipe() throws {
        let (read, write) = try FileDescriptor.pipe()
        defer { read.close() }
        try read.setNonBlocking(false)
        try ScanWorkerProtocol.writeFrame([1, 2, 3], to: write)
        try ScanWorkerProtocol.writeFrame([], to: write)
        write.close()
        #expect(try ScanWorkerProtocol.readFrame(from: read) == [1, 2, 3])
        #expect(try ScanWorkerProtocol.readFrame(from: read) == [])
        #expect(try ScanWorkerProtocol.readFrame(from: read) == nil)
    }

    @Test func aStreamEndingInsideAFrameOrAnOversizedLengthIsAnError() throws {
        for bytes: [UInt8] in [[5, 0], [5, 0, 0, 0, 1, 2], [0xFF, 0xFF, 0xFF, 0xFF]] {
            let (read, write) = try FileDescriptor.pipe()
            defer { read.close() }
            try read.setNonBlocking(false)
            try write.writeAll(bytes)
            write.close()
            #expect(throws: ScanWorkerProtocol.DecodingError.self) { try ScanWorkerProtocol.readFrame(from: read) }
        }
    }
}

/// A plugin of the test catalogue: its settings and the path come back as tags; `bad` paths are declined.
private struct EchoFormat: FileScanFormatPlugin {
    let name = "echo"
    let suffixes = ["echo"]
    let mimeTypes: [String] = []
    let setting: String

    func readInfo(path: String) throws(FormatError) -> SongInfo {
        guard !path.hasSuffix("bad.echo") else { throw .notRecognized(path: path) }
        return SongInfo(tags: [TagItem(.title, path), TagItem(.comment, self.setting)], durationMilliseconds: 7)
    }

    func makeDecoder(input: any InputStream) throws(FormatError) -> any Decoder {
        throw .notRecognized(path: input.uri)
    }

    var scanWorkerSettings: [ScanWorkerProtocol.Setting]? { [.init(name: "setting", value: self.setting)] }
}

@Suite struct ScanWorkerTests {
    static let catalogue = [
        DecoderPluginEntry("echo") { settings in EchoFormat(setting: settings.string("setting") ?? "") }
    ]

    /// Runs `ScanWorker.serve` over the frames of `requests` (written to its input beforehand) and reads its replies.
    private func serve(_ payloads: [[UInt8]]) throws -> (status: Int32, replies: [ScanWorkerProtocol.Reply]) {
        let (input, feed) = try FileDescriptor.pipe()
        let (drain, output) = try FileDescriptor.pipe()
        defer {
            input.close()
            drain.close()
        }
        for end in [input, feed, drain, output] { try end.setNonBlocking(false) }
        for payload in payloads { try ScanWorkerProtocol.writeFrame(payload, to: feed) }
        feed.close()
        let status = ScanWorker.serve(input: input, output: output, catalogue: Self.catalogue)
        output.close()
        var replies: [ScanWorkerProtocol.Reply] = []
        while let payload = try ScanWorkerProtocol.readFrame(from: drain) {
            replies.append(try ScanWorkerProtocol.decodeReply(payload))
        }
        return (status, replies)
    }

    @Test func answersEachRequestWithThePluginBuiltFromItsSettings() throws {
        let requests = [
            ScanWorkerProtocol.Request(
                plugin: "echo", settings: [.init(name: "setting", value: "one")], path: "/a.echo"),
            ScanWorkerProtocol.Request(
                plugin: "echo", settings: [.init(name: "setting", value: "two")], path: "/b.echo"),
            ScanWorkerProtocol.Request(plugin: "echo", settings: [], path: "/bad.echo"),
            ScanWorkerProtocol.Request(plugin: "nosuch", settings: [], path: "/c.echo"),
        ]
        let (status, replies) = try self.serve(requests.map(ScanWorkerProtocol.encode))
        #expect(status == 0)
        #expect(
            replies == [
                .success(
                    SongInfo(tags: [TagItem(.title, "/a.echo"), TagItem(.comment, "one")], durationMilliseconds: 7)),
                .success(
                    SongInfo(tags: [TagItem(.title, "/b.echo"), TagItem(.comment, "two")], durationMilliseconds: 7)),
                .failure(.notRecognized(path: "/bad.echo")),
                .failure(.decoder("scan worker: no decoder plugin nosuch")),
            ])
    }

    @Test func aMalformedRequestEndsTheWorker() throws {
        let good = ScanWorkerProtocol.encode(ScanWorkerProtocol.Request(plugin: "echo", settings: [], path: "/a.echo"))
        let (status, replies) = try self.serve([good, [1, 2, 3], good])
        #expect(status == 1)
        #expect(replies.count == 1)
    }

    final class Lines: Sendable {
        private let lines = Mutex<[String]>([])
        var all: [String] { self.lines.withLock { $0 } }
        func append(_ line: String) { self.lines.withLock { $0.append(line) } }
    }

    @Test func aPoolThatCannotStartAWorkerLeavesTheFileToTheServer() throws {
        let lines = Lines()
        let logger = Logger(label: "update", threshold: .debug) { lines.append("\($1)") }
        let pool = ScanWorkerPool(program: "/nonexistent/fermata", arguments: ["fermata"], logger: logger)
        #expect(try pool.readInfo(plugin: "echo", settings: [], path: "/a.echo") == nil)
        #expect(try pool.readInfo(plugin: "echo", settings: [], path: "/b.echo") == nil)
        // Logged once.
        #expect(lines.all.filter { $0.contains("cannot start a scan worker") }.count == 1)
    }

    @Test(arguments: [
        // Dies at once; answers garbage (the request echoed back); answers nothing and exits 3.
        ["sh", "-c", "exit 0"], ["sh", "-c", "exec cat"], ["sh", "-c", "head -c 1 >/dev/null; exit 3"],
    ])
    func aWorkerThatDiesOrTalksGarbageCostsOneFile(_ arguments: [String]) throws {
        let lines = Lines()
        let logger = Logger(label: "update", threshold: .debug) { lines.append("\($1)") }
        let pool = ScanWorkerPool(program: "/bin/sh", arguments: arguments, logger: logger)
        for name in ["/a.echo", "/b.echo"] {
            #expect(throws: FormatError.self) { try pool.readInfo(plugin: "echo", settings: [], path: name) }
        }
        pool.finish()
        #expect(lines.all.filter { $0.contains("scan worker ended while reading a file") }.count == 2)
    }

    @Test func workersOutliveAnUpdateUntilNoFileIsReadForTheTimeGiven() throws {
        // A worker in sh: for each request frame, the frame of an empty song's reply (lengths little-endian, as
        // `od -tu4` reads them here).
        var reply = [UInt8]()
        let payload = ScanWorkerProtocol.encode(.success(SongInfo()))
        for shift in stride(from: 0, to: 32, by: 8) { reply.append(UInt8(truncatingIfNeeded: payload.count >> shift)) }
        reply += payload
        let printed = reply.map { "\\" + String($0, radix: 8) }.joined()
        let script =
            "while n=$(head -c 4 | od -An -tu4) && [ -n \"$n\" ]; do head -c $n >/dev/null; printf '\(printed)'; done"
        let timers = Mutex<[@Sendable () -> Void]>([])
        let pool = ScanWorkerPool(
            program: "/bin/sh", arguments: ["sh", "-c", script],
            logger: Logger(label: "update", threshold: .error) { _, _ in },
            schedule: { _, work in timers.withLock { $0.append(work) } })
        defer { pool.finish() }
        #expect(try pool.readInfo(plugin: "echo", settings: [], path: "/a.echo") == SongInfo())
        #expect(pool.idleWorkerCount == 1)
        // The update ends; another reads a file before the time is up: the worker is kept, and read with again.
        pool.finish(afterIdle: 3)
        #expect(try pool.readInfo(plugin: "echo", settings: [], path: "/b.echo") == SongInfo())
        timers.withLock { $0[0]() }
        #expect(pool.idleWorkerCount == 1)
        // That update ends, and no file is read for the time given: the worker ends.
        pool.finish(afterIdle: 3)
        timers.withLock { $0[1]() }
        #expect(pool.idleWorkerCount == 0)
    }

    @Test func aFileAWorkerDidNotRecogniseIsNotSentAgainUntilItChangesOrARescan() throws {
        // A worker in sh that counts the requests (a line each in `count`) and answers each "not recognised".
        var template = Array("/tmp/fermata-verdicts-XXXXXX".utf8CString)
        let directory = try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) })
        let base = String(cString: directory)
        defer {
            for name in ["song.echo", "other.echo", "count"] { unlink(base + "/" + name) }
            rmdir(base)
        }
        let (song, other, count) = (base + "/song.echo", base + "/other.echo", base + "/count")
        try writeFile(Array("garbage".utf8), atPath: song)
        try writeFile(Array("garbage".utf8), atPath: other)
        try FileStatus.setModificationTime(1_600_000_000, ofPath: song)
        var reply = [UInt8]()
        let payload = ScanWorkerProtocol.encode(.failure(.notRecognized(path: "x")))
        for shift in stride(from: 0, to: 32, by: 8) { reply.append(UInt8(truncatingIfNeeded: payload.count >> shift)) }
        reply += payload
        let printed = reply.map { "\\" + String($0, radix: 8) }.joined()
        let script =
            "while n=$(head -c 4 | od -An -tu4) && [ -n \"$n\" ]; do head -c $n >/dev/null; echo >> '\(count)';"
            + " printf '\(printed)'; done"
        let pool = ScanWorkerPool(
            program: "/bin/sh", arguments: ["sh", "-c", script],
            logger: Logger(label: "update", threshold: .error) { _, _ in }, schedule: { _, _ in })
        defer { pool.finish() }
        func requests() -> Int { ((try? readFile(atPath: count)) ?? []).count }
        func read(_ path: String, settings: [ScanWorkerProtocol.Setting] = []) {
            #expect(throws: FormatError.notRecognized(path: "x")) {
                try pool.readInfo(plugin: "echo", settings: settings, path: path)
            }
        }
        read(song)
        #expect(requests() == 1)
        // Unchanged: the verdict again, no request.
        read(song)
        #expect(requests() == 1)
        // Another file, or the same one for a plugin of other settings, is asked about.
        read(other)
        read(song, settings: [.init(name: "probesize", value: "32")])
        #expect(requests() == 3)
        // Changed (its time): asked again, then kept again.
        try FileStatus.setModificationTime(1_600_000_100, ofPath: song)
        read(song)
        read(song)
        #expect(requests() == 4)
        // A rescan forgets every verdict.
        pool.forgetVerdicts()
        read(song)
        read(other)
        #expect(requests() == 6)
    }

    @Test func registryReadsThroughTheScannerOnlyForPluginsThatAskForIt() throws {
        final class Recorder: OutOfProcessScanner {
            let asked = Mutex<[String]>([])
            func readInfo(
                plugin: String, settings: [ScanWorkerProtocol.Setting], path: String
            ) throws(FormatError) -> SongInfo? {
                self.asked.withLock { $0.append("\(plugin) \(settings.map(\.value)) \(path)") }
                return SongInfo(tags: [TagItem(.artist, "from the worker")])
            }
        }
        let recorder = Recorder()
        let registry = FormatRegistry([EchoFormat(setting: "x")])
        let info = try registry.readInfo(path: "/nonexistent/a.echo", scanner: recorder)
        #expect(info.tags == [TagItem(.artist, "from the worker")])
        #expect(recorder.asked.withLock { $0 } == ["echo [\"x\"] /nonexistent/a.echo"])
        // Without a scanner, the plugin reads it here.
        #expect(try registry.readInfo(path: "/nonexistent/a.echo").tags.first == TagItem(.title, "/nonexistent/a.echo"))
        // The standard registry sends FFmpeg's files out, and no other plugin's.
        let outside = FormatRegistry.standard.plugins.filter { $0.scanWorkerSettings != nil }.map(\.name)
        #expect(outside == ["ffmpeg"])
    }
}
