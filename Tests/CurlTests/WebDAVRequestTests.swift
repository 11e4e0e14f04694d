// SPDX-License-Identifier: GPL-3.0-or-later

import Curl
import Glibc
import Input
import Posix
import TestTools
import Testing

/// tools/webdavserver.py on a directory of two files and a sub-directory, started once per test process.
private enum DAVFixture {
    static let files = MadeFiles("webdav")
    static let server: StreamServer = {
        do {
            _ = try files.file("a b.flac", bytes: Array(repeating: 7, count: 1234))
            mkdir(files.directory + "/sub", 0o755)
            try writeFile([1, 2, 3], atPath: files.directory + "/sub/c.flac")
            return try StreamServer(root: files.directory, script: StreamServer.webDAVScript)
        } catch {
            fatalError("cannot start tools/webdavserver.py: \(error)")
        }
    }()

    static func url(_ path: String) -> String { server.url(path) }

    /// The error a PROPFIND of `url` throws, or `nil`.
    static func error(_ url: String) -> WebDAVError? {
        do {
            _ = try WebDAVRequest.perform(url: url, depth: 1)
            return nil
        } catch {
            return error
        }
    }
}

@Suite struct WebDAVRequestTests {
    @Test func aDepth1ListingNamesTheDirectoryAndItsEntries() throws {
        let found = try WebDAVRequest.perform(url: DAVFixture.url("/dav/"), depth: 1)
        // (The server's own port and log files are there too.)
        let hrefs = found.map { String(decoding: $0.href, as: UTF8.self) }.filter { !$0.hasPrefix("/dav/.") }
        #expect(hrefs.sorted() == ["/dav/", "/dav/a%20b.flac", "/dav/sub/"])
        let file = try #require(found.first { $0.href == Array("/dav/a%20b.flac".utf8) })
        #expect(file.status == 200 && !file.isCollection && file.length == 1234)
        #expect((file.modificationTime ?? -1) > 0)
        #expect(found.filter(\.isCollection).count == 2)
        let one = try WebDAVRequest.perform(url: DAVFixture.url("/dav/sub"), depth: 0)
        #expect(one.map { String(decoding: $0.href, as: UTF8.self) } == ["/dav/sub/"])
    }

    @Test func theDepthIsSentAsAsked() throws {
        _ = try WebDAVRequest.perform(url: DAVFixture.url("/dav/sub/c.flac"), depth: 0)
        _ = try WebDAVRequest.perform(url: DAVFixture.url("/dav/sub/"), depth: 1)
        let stream = try CurlInputStream(url: DAVFixture.url("/log"))
        var bytes = [UInt8](repeating: 0, count: 1 << 16)
        let count = try bytes.withUnsafeMutableBytes { try stream.readFully(into: $0) }
        let text = String(decoding: bytes[0..<count], as: UTF8.self)
        #expect(text.contains("PROPFIND /dav/sub/c.flac depth=0\n"))
        #expect(text.contains("PROPFIND /dav/sub/ depth=1\n"))
    }

    @Test(arguments: [
        ("/missing/x", "Status 404 from WebDAV server; expected \"207 Multi-Status\""),
        ("/status/500/", "Status 500 from WebDAV server; expected \"207 Multi-Status\""),
        ("/plain/", "Unexpected Content-Type from WebDAV server"), ("/malformed/", "mismatched tag"),
        ("/empty/", "no element found"), ("/redirect2/sub/", "CURL failed: Maximum (1) redirects followed"),
    ])
    func repliesThatAreNoMultistatusFailInMpdsWords(path: String, message: String) {
        #expect(DAVFixture.error(DAVFixture.url(path))?.message == message)
    }

    @Test func oneRedirectIsFollowed() throws {
        let found = try WebDAVRequest.perform(url: DAVFixture.url("/redirect/sub/"), depth: 1)
        #expect(found.map { String(decoding: $0.href, as: UTF8.self) }.sorted() == ["/dav/sub/", "/dav/sub/c.flac"])
    }

    @Test func aRefusedConnectionIsLibcurlsError() throws {
        // Port 1: nothing listens there.
        let message = DAVFixture.error("http://127.0.0.1:1/x")?.message ?? ""
        #expect(message.hasPrefix("CURL failed: Failed to connect to 127.0.0.1 port 1 "), "\(message)")
    }
}
