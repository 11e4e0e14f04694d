// SPDX-License-Identifier: GPL-3.0-or-later

import Curl
import Glibc
import Input
import Model
import Posix
import TestTools
import Testing

/// The files the server serves, made once per test process, and the server.
private enum Fixture {
    static let files = MadeFiles("curl")
    /// 300,000 bytes of a fixed pseudo-random sequence.
    static let data: [UInt8] = {
        var state: UInt32 = 12345
        return (0..<300_000).map { _ in
            state = state &* 1_103_515_245 &+ 12345
            return UInt8(truncatingIfNeeded: state >> 16)
        }
    }()
    static let small = Array(data[0..<20_000])
    static let server: StreamServer = {
        do {
            _ = try files.file("data.bin", bytes: data)
            _ = try files.file("small.bin", bytes: small)
            return try StreamServer(root: files.directory)
        } catch {
            fatalError("cannot start tools/streamserver.py: \(error)")
        }
    }()

    static func url(_ path: String) -> String { server.url(path) }
}

/// Reads `stream` to its end in pieces of `piece` bytes.
private func readAll(_ stream: CurlInputStream, piece: Int = 4096, limit: Int = 10_000_000) throws -> [UInt8] {
    var result: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: piece)
    while result.count < limit {
        let count = try chunk.withUnsafeMutableBytes { try stream.read(into: $0) }
        if count == 0 { break }
        result += chunk[0..<count]
    }
    return result
}

/// Reads exactly `count` bytes (or up to the end).
private func readSome(_ stream: CurlInputStream, _ count: Int) throws -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    let read = try bytes.withUnsafeMutableBytes { try stream.readFully(into: $0) }
    return Array(bytes[0..<read])
}

/// The `InputError` `body` throws, or `nil`.
private func inputError(_ body: () throws -> Void) -> InputError? {
    do {
        try body()
        return nil
    } catch {
        return error as? InputError
    }
}

@Suite(.serialized) struct CurlInputStreamTests {
    @Test func aFileWithLengthReadsWhole() throws {
        let stream = try CurlInputStream(url: Fixture.url("/file/data.bin"))
        #expect(stream.size == UInt64(Fixture.data.count))
        #expect(stream.isSeekable)
        #expect(stream.mimeType == "application/octet-stream")
        #expect(stream.metaInterval == 0)
        #expect(stream.readTag() == nil)
        #expect(try readAll(stream) == Fixture.data)
        #expect(stream.offset == UInt64(Fixture.data.count))
        #expect(stream.isAtEnd)
    }

    @Test func withoutLengthOrChunkedItReadsToTheEnd() throws {
        for path in ["/nolength/data.bin", "/chunked/data.bin"] {
            let stream = try CurlInputStream(url: Fixture.url(path))
            #expect(stream.size == nil)
            #expect(!stream.isSeekable)
            #expect(try readAll(stream, piece: 1000) == Fixture.data, "\(path)")
            // The end stays the end.
            #expect(try readAll(stream) == [])
        }
    }

    @Test func seeksByRangeRequestsAndWithinTheBuffer() throws {
        let stream = try CurlInputStream(url: Fixture.url("/file/data.bin"))
        #expect(try readSome(stream, 1000) == Array(Fixture.data[0..<1000]))
        // Forward within what is buffered: no new request needed, same bytes.
        try stream.seek(to: 1500)
        #expect(try readSome(stream, 100) == Array(Fixture.data[1500..<1600]))
        // Backwards and far: new requests with Range.
        try stream.seek(to: 10)
        #expect(stream.offset == 10)
        #expect(try readSome(stream, 100) == Array(Fixture.data[10..<110]))
        try stream.seek(to: 250_000)
        #expect(try readAll(stream) == Array(Fixture.data[250_000...]))
        try stream.seek(to: 0)
        #expect(try readSome(stream, 10) == Array(Fixture.data[0..<10]))
        // To the end: no request (mpd avoids the 416), reads end at once.
        try stream.seek(to: UInt64(Fixture.data.count))
        #expect(try readAll(stream) == [])
        // Past the end: the server's 416 through libcurl.
        let error = inputError { try stream.seek(to: UInt64(Fixture.data.count) + 10) }
        #expect(error?.mpdMessage == "CURL failed: The requested URL returned error: 416")
    }

    @Test func withoutAcceptRangesItDoesNotSeek() throws {
        let stream = try CurlInputStream(url: Fixture.url("/norange/data.bin"))
        #expect(stream.size == UInt64(Fixture.data.count))
        #expect(!stream.isSeekable)
        #expect(throws: InputError.notSeekable(uri: stream.uri)) { try stream.seek(to: 100_000) }
        try stream.seek(to: 0)
        #expect(try readAll(stream) == Fixture.data)
    }

    @Test func redirectsAreFollowedUpToFive() throws {
        let stream = try CurlInputStream(url: Fixture.url("/redirect/5/file/small.bin"))
        #expect(try readAll(stream) == Fixture.small)
        let tooMany = inputError { _ = try CurlInputStream(url: Fixture.url("/redirect/6/file/small.bin")) }
        #expect(tooMany?.mpdMessage == "CURL failed: Maximum (5) redirects followed")
        let loop = inputError { _ = try CurlInputStream(url: Fixture.url("/loop/x")) }
        #expect(loop?.mpdMessage == "CURL failed: Maximum (5) redirects followed")
    }

    @Test func httpErrorsAreMpdsTexts() {
        let missing = inputError { _ = try CurlInputStream(url: Fixture.url("/status/404")) }
        #expect(missing?.mpdMessage == "CURL failed: The requested URL returned error: 404")
        #expect(missing?.uri == Fixture.url("/status/404"))
        let failing = inputError { _ = try CurlInputStream(url: Fixture.url("/status/500")) }
        #expect(failing?.mpdMessage == "CURL failed: The requested URL returned error: 500")
        // A 3xx without Location is not followed, and refused as mpd refuses it.
        let multiple = inputError { _ = try CurlInputStream(url: Fixture.url("/status/300")) }
        #expect(multiple == .httpStatus(300, uri: Fixture.url("/status/300")))
        #expect(multiple?.mpdMessage == "got HTTP status 300")
    }

    @Test func aRefusedConnectionIsCurlsError() throws {
        // A port nobody listens on: bind one, then close it.
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(socket, pointer, length)
                return getsockname(socket, pointer, &length)
            }
        }
        let port = UInt16(bigEndian: address.sin_port)
        close(socket)
        let error = inputError { _ = try CurlInputStream(url: "http://127.0.0.1:\(port)/x") }
        let message = error?.mpdMessage ?? ""
        #expect(message.hasPrefix("CURL failed: Failed to connect to 127.0.0.1 port \(port)"), "\(message)")
    }

    @Test func aCancelEndsAnOpenWaitingOnASilentServer() {
        let cancellation = InputCancellation()
        let thread = NamedThread("cancel") {
            usleep(300_000)
            cancellation.cancel()
        }
        defer { thread.join() }
        let error = inputError {
            _ = try CurlInputStream(url: Fixture.url("/stall/accept"), cancellation: cancellation)
        }
        #expect(error == .cancelled(uri: Fixture.url("/stall/accept")))
        #expect(cancellation.isCancelled)
    }

    @Test func aCancelEndsABlockedRead() throws {
        let stream = try CurlInputStream(url: Fixture.url("/stall/body/1000/data.bin"))
        #expect(stream.size == UInt64(Fixture.data.count))
        #expect(try readSome(stream, 1000) == Array(Fixture.data[0..<1000]))
        let cancellation = stream.cancellation
        let thread = NamedThread("cancel") {
            usleep(300_000)
            cancellation.cancel()
        }
        defer { thread.join() }
        let error = inputError { _ = try readSome(stream, 10) }
        #expect(error == .cancelled(uri: stream.uri))
        // And every later call.
        #expect(inputError { _ = try readSome(stream, 10) } == .cancelled(uri: stream.uri))
    }

    @Test func headersWithoutBodyOpen() throws {
        let stream = try CurlInputStream(url: Fixture.url("/stall/headers/small.bin"))
        #expect(stream.size == UInt64(Fixture.small.count))
        stream.cancellation.cancel()
        #expect(inputError { _ = try readSome(stream, 1) } == .cancelled(uri: stream.uri))
    }

    @Test func aCancelBeforeOpeningFailsTheOpen() {
        let cancellation = InputCancellation()
        cancellation.cancel()
        let error = inputError {
            _ = try CurlInputStream(url: Fixture.url("/file/small.bin"), cancellation: cancellation)
        }
        #expect(error == .cancelled(uri: Fixture.url("/file/small.bin")))
    }

    @Test func aDropWithLengthIsAnErrorWithoutItAnEnd() throws {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var opened: CurlInputStream?
        // As in mpd, the error may already be there when the headers are: then the open fails with it.
        let error = inputError {
            let cut = try CurlInputStream(url: Fixture.url("/drop/50000/data.bin"))
            opened = cut
            while true {
                let count = try chunk.withUnsafeMutableBytes { try cut.read(into: $0) }
                if count == 0 { break }
                received += chunk[0..<count]
            }
        }
        let message = error?.mpdMessage ?? ""
        #expect(message == "CURL failed: transfer closed with 250000 bytes remaining to read", "\(message)")
        #expect(received.count <= 50_000)
        #expect(received == Array(Fixture.data[0..<received.count]))
        if let cut = opened {
            // As mpd: the error is reported once; what was buffered then ends the stream.
            let rest = try readAll(cut)
            #expect(received + rest == Array(Fixture.data[0..<(received.count + rest.count)]))
        }

        let ended = try CurlInputStream(url: Fixture.url("/dropnolength/50000/data.bin"))
        #expect(try readAll(ended) == Array(Fixture.data[0..<50_000]))
    }

    @Test func aTrickleArrivesWhole() throws {
        let stream = try CurlInputStream(url: Fixture.url("/trickle/40000/small.bin"))
        #expect(try readAll(stream, piece: 333) == Fixture.small)
    }

    @Test func theRequestIsMpds() throws {
        let stream = try CurlInputStream(url: Fixture.url("/headers"))
        let text = String(decoding: try readAll(stream), as: UTF8.self)
        #expect(text.hasPrefix("GET /headers HTTP/1.1\n"))
        #expect(text.contains("User-Agent: Music Player Daemon 0.23.12\n"))
        #expect(text.contains("Icy-Metadata: 1\n"))
    }

    @Test func theProxySettingsAreUsed() throws {
        // The stream server answers proxy requests too (it reads the path of the absolute URL), so a host that
        // does not exist is reached through it.
        var settings = CurlSettings()
        settings.proxy = "127.0.0.1"
        settings.proxyPort = Fixture.server.port
        settings.proxyUser = "me"
        settings.proxyPassword = "secret"
        let stream = try CurlInputStream(url: "http://radio.invalid/headers", settings: settings)
        let text = String(decoding: try readAll(stream), as: UTF8.self)
        #expect(text.hasPrefix("GET http://radio.invalid/headers HTTP/1.1\n"), "\(text)")
        #expect(text.contains("Proxy-Authorization: Basic bWU6c2VjcmV0\n"))
        // A user without a password is not sent (as mpd).
        settings.proxyPassword = nil
        let anonymous = try CurlInputStream(url: "http://radio.invalid/headers", settings: settings)
        #expect(!String(decoding: try readAll(anonymous), as: UTF8.self).contains("Proxy-Authorization"))
    }

    @Test func tlsToAPlainServerFails() {
        let error = inputError {
            _ = try CurlInputStream(url: "https://127.0.0.1:\(Fixture.server.port)/file/small.bin")
        }
        #expect(error?.mpdMessage.hasPrefix("CURL failed: ") == true, "\(String(describing: error))")
    }

    @Test func icyMetadataIsStrippedAndTitlesChange() throws {
        let path = "/radio/data.bin?metaint=1000&every=3&limit=60000&genre=Jazz"
        let stream = try CurlInputStream(url: Fixture.url(path))
        #expect(stream.metaInterval == 1000)
        #expect(stream.size == nil)
        #expect(!stream.isSeekable)
        #expect(stream.mimeType == "audio/mpeg")
        // The headers' name comes first, before any read.
        #expect(stream.readTag() == [TagItem(.name, "Fermata Test Radio")])
        #expect(stream.readTag() == nil)
        var audio: [UInt8] = []
        var tags: [[TagItem]] = []
        var chunk = [UInt8](repeating: 0, count: 700)
        while true {
            let count = try chunk.withUnsafeMutableBytes { try stream.read(into: $0) }
            if count == 0 { break }
            audio += chunk[0..<count]
            #expect(stream.offset == UInt64(audio.count))
            if let tag = stream.readTag() { tags.append(tag) }
        }
        #expect(audio == Array(Fixture.data[0..<60_000]))
        // A title every 3 blocks (60 blocks: Title 1 … Title 20), each with the station's name after it.
        #expect(tags.count == 20)
        #expect(tags.first == [TagItem(.title, "Title 1"), TagItem(.name, "Fermata Test Radio")])
        #expect(tags.last == [TagItem(.title, "Title 20"), TagItem(.name, "Fermata Test Radio")])
        #expect(throws: InputError.notSeekable(uri: stream.uri)) { try stream.seek(to: 0) }
    }

    @Test func shoutcastStatusLinesAndRepeatedTitles() throws {
        let path = "/radio/small.bin?metaint=500&every=2&repeat=1&limit=5000&shoutcast=1&name=&titles=A%7CB"
        let stream = try CurlInputStream(url: Fixture.url(path))
        #expect(stream.metaInterval == 500)
        var tags: [[TagItem]] = []
        var audio: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 100)
        while true {
            let count = try chunk.withUnsafeMutableBytes { try stream.read(into: $0) }
            // The last block's tag may come with the read that finds the end (the transfer's timing).
            if let tag = stream.readTag() { tags.append(tag) }
            if count == 0 { break }
            audio += chunk[0..<count]
        }
        #expect(audio == Array(Fixture.small[0..<5000]))
        // mpd hands out every block's tag, repeated or not; no icy-name: no Name.
        #expect(
            tags == [
                [TagItem(.title, "A")], [TagItem(.title, "A")], [TagItem(.title, "B")], [TagItem(.title, "B")],
                [TagItem(.title, "A")], [TagItem(.title, "A")], [TagItem(.title, "B")], [TagItem(.title, "B")],
                [TagItem(.title, "A")], [TagItem(.title, "A")],
            ])
    }

    @Test func aCharsetFragmentConvertsTitlesAndName() throws {
        let path = "/radio/small.bin?metaint=500&limit=1500&encoding=latin-1&titles=Caf%C3%A9&name=Radio%20Z%C3%BCrich"
        for (fragment, title, name) in [
            ("#charset=ISO-8859-1", "Café", "Radio Zürich"), ("", "Caf?", "Radio Z?rich"),
            ("#x=1&charset=windows-1252", "Café", "Radio Zürich"),
        ] {
            let stream = try CurlInputStream(url: Fixture.url(path + fragment))
            #expect(stream.readTag() == [TagItem(.name, name)])
            #expect(try readAll(stream) == Array(Fixture.small[0..<1500]))
            #expect(stream.readTag() == [TagItem(.title, title), TagItem(.name, name)], "\(fragment)")
        }
    }

    @Test func aRadioStreamRewindsWithinItsStart() throws {
        let radio = try CurlInputStream(url: Fixture.url("/radio/data.bin?metaint=1000&limit=100000"))
        let stream = RewindInputStream(radio)
        #expect(!stream.isSeekable)
        #expect(try stream.readBytes(20_000) == Array(Fixture.data[0..<20_000]))
        try stream.seek(to: 0)
        #expect(try stream.readBytes(30_000) == Array(Fixture.data[0..<30_000]))
        #expect(stream.readTag()?.contains(TagItem(.name, "Fermata Test Radio")) == true)
        radio.cancellation.cancel()
    }

    @Test func theBufferIsBoundedAndTheServerWaits() throws {
        let identifier = "bounded\(getpid())"
        let stream = try CurlInputStream(url: Fixture.url("/radio/data.bin?metaint=0&id=\(identifier)"))
        #expect(stream.metaInterval == 0)
        /// What the server has sent so far.
        func sent() throws -> Int {
            let stats = try CurlInputStream(url: Fixture.url("/stats?id=\(identifier)"))
            let text = String(decoding: try readAll(stats), as: UTF8.self)
            return Int(text.dropFirst("bytes=".count).prefix { $0.isNumber }) ?? -1
        }
        // Without reads, the transfer pauses: what the server sends stops growing (a guard of 60 s against a
        // hang), bounded by the 512 KiB buffer plus the kernel's socket buffers.
        var previous = -1
        var current = try sent()
        for _ in 0..<300 where current != previous || current == 0 {
            usleep(200_000)
            previous = current
            current = try sent()
        }
        #expect(current == previous)
        #expect(current > 0)
        #expect(current < 512 * 1024 + 32 * 1024 * 1024)
        // Reading resumes the transfer: more than was sent while paused arrives, in order.
        let wanted = current + 1_000_000
        let audio = try readAll(stream, piece: 65536, limit: wanted)
        #expect(audio.count >= wanted)
        for index in stride(from: 0, to: audio.count - 1000, by: 99_991) {
            #expect(audio[index] == Fixture.data[index % Fixture.data.count])
        }
        #expect(try sent() > current)
    }

    @Test func schemes() {
        #expect(CurlInputStream.canOpen("http://x/"))
        #expect(CurlInputStream.canOpen("HTTPS://x/"))
        #expect(!CurlInputStream.canOpen("ftp://x/"))
        #expect(!CurlInputStream.canOpen("/music/x.mp3"))
        #expect(CurlGlobal.protocols.contains("http://"))
        #expect(CurlGlobal.protocols.contains("https://"))
        #expect(!CurlGlobal.protocols.contains("file://"))
        #expect(CurlGlobal.protocols == CurlGlobal.protocols.sorted())
    }
}
