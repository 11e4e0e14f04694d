// SPDX-License-Identifier: GPL-3.0-or-later

import Expat
import Testing

@testable import Curl

@Suite struct WebDAVMultistatusTests {
    /// The resources `PropfindParser` finds in `document`, parsed as a reply arrives: in `chunk`-byte pieces.
    private func resources(_ document: String, chunk: Int = 4096) throws -> [WebDAVResource] {
        let parser = XMLStreamParser(namespaceSeparator: "|")
        var propfind = PropfindParser()
        let bytes = Array(document.utf8)
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + chunk, bytes.count)
            let events = try bytes[offset..<end].withUnsafeBytes { try parser.parse($0) }
            for event in events { propfind.consume(event) }
            offset = end
        }
        for event in try parser.finish() { propfind.consume(event) }
        return propfind.resources
    }

    private func multistatus(_ responses: String) -> String {
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<D:multistatus xmlns:D=\"DAV:\">\(responses)</D:multistatus>"
    }

    private static let directory = """
        <D:response><D:href>/dav/</D:href><D:propstat><D:prop><D:resourcetype><D:collection/></D:resourcetype>\
        <D:getlastmodified>Sat, 05 Dec 2026 11:48:36 GMT</D:getlastmodified></D:prop>\
        <D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
        """

    private static let file = """
        <D:response><D:href>/dav/a%20b.flac</D:href><D:propstat><D:prop><D:resourcetype/>\
        <D:getcontentlength>24989</D:getcontentlength><D:getcontenttype>audio/flac</D:getcontenttype>\
        <D:getlastmodified>Thu, 01 Jan 1970 00:01:40 GMT</D:getlastmodified></D:prop>\
        <D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
        """

    @Test func aListingGivesEachResourcesHrefStatusTypeTimeAndLength() throws {
        let found = try self.resources(self.multistatus(Self.directory + "\n" + Self.file))
        #expect(found.count == 2)
        #expect(found[0].href == Array("/dav/".utf8))
        #expect(found[0].status == 200 && found[0].isCollection && found[0].length == 0)
        #expect(found[0].modificationTime == 1_796_471_316)
        #expect(found[1].href == Array("/dav/a%20b.flac".utf8))
        #expect(found[1].status == 200 && !found[1].isCollection)
        #expect(found[1].length == 24989 && found[1].modificationTime == 100)
    }

    @Test func theSameResultWhateverPiecesTheReplyArrivesIn() throws {
        let document = self.multistatus(Self.directory + Self.file)
        let whole = try self.resources(document)
        for chunk in [1, 3, 17, 100] {
            // An href split between pieces is joined (a status or date split so would not be: mpd's own quirk,
            // which these pieces do not hit at a line end).
            let pieces = try self.resources(document, chunk: chunk)
            #expect(pieces.map(\.href) == whole.map(\.href), "chunk \(chunk)")
            #expect(pieces.map(\.isCollection) == whole.map(\.isCollection), "chunk \(chunk)")
        }
    }

    @Test func onlyTheFirstPropstatOfAResponseCounts() throws {
        // A 404 propstat first: it takes the href, and the 200 one after it has none, so is dropped.
        let found = try self.resources(
            self.multistatus(
                """
                <D:response><D:href>/dav/x.flac</D:href>\
                <D:propstat><D:prop><D:quota/></D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat>\
                <D:propstat><D:prop><D:resourcetype/></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat>\
                </D:response>
                """))
        #expect(found.count == 1)
        #expect(found[0].status == 404 && found[0].href == Array("/dav/x.flac".utf8))
    }

    @Test func anHrefAfterThePropstatIsNotTaken() throws {
        let found = try self.resources(
            self.multistatus(
                """
                <D:response><D:propstat><D:prop><D:resourcetype/></D:prop><D:status>HTTP/1.1 200 OK</D:status>\
                </D:propstat><D:href>/dav/x.flac</D:href></D:response>
                """))
        #expect(found.isEmpty)
    }

    @Test func anHrefAfterThePropstatPrefixesTheNextResponses() throws {
        // Nothing is reset at a response's end: the late href stays, and the next response's own is added to it.
        let found = try self.resources(
            self.multistatus(
                """
                <D:response><D:propstat><D:status>HTTP/1.1 200 OK</D:status></D:propstat>                <D:href>/dav/a.flac</D:href></D:response>                <D:response><D:href>/dav/b.flac</D:href><D:propstat><D:status>HTTP/1.1 200 OK</D:status>                </D:propstat></D:response>
                """))
        #expect(found.map(\.href) == [Array("/dav/a.flac/dav/b.flac".utf8)])
        #expect(WebDAVPath.name(ofHref: found[0].href, basePath: Array("/dav/".utf8)) == nil)
    }

    @Test func aStatusEndingInALineBreakReadsAsZero() throws {
        // expat reports the line break as a piece of its own, which replaces the status.
        let found = try self.resources(
            self.multistatus(
                "<D:response><D:href>/dav/x</D:href><D:propstat><D:status>HTTP/1.1 200 OK\n</D:status>"
                    + "</D:propstat></D:response>"))
        #expect(found.map(\.status) == [0])
    }

    @Test func elementsOutsideTheDAVNamespaceAreNotSeen() throws {
        let plain = try self.resources(
            "<multistatus><response><href>/x</href><propstat><status>HTTP/1.1 200 OK</status></propstat>"
                + "</response></multistatus>")
        #expect(plain.isEmpty)
        let other = try self.resources(
            "<m xmlns:D=\"urn:other\"><D:response><D:href>/x</D:href><D:propstat/></D:response></m>")
        #expect(other.isEmpty)
        let defaultNamespace = try self.resources(
            "<m><response xmlns=\"DAV:\"><href>/x</href><propstat><status>HTTP/1.1 200 OK</status>"
                + "<resourcetype><collection/></resourcetype></propstat></response></m>")
        #expect(defaultNamespace.count == 1 && defaultNamespace[0].isCollection && defaultNamespace[0].status == 200)
    }

    @Test func datesAndLengthsAreReadAsLibcurlAndStrtoullReadThem() throws {
        let found = try self.resources(
            self.multistatus(
                """
                <D:response><D:href>/a</D:href><D:propstat><D:getlastmodified>yesterday, roughly</D:getlastmodified>\
                <D:getcontentlength> +42xyz</D:getcontentlength></D:propstat></D:response>\
                <D:response><D:href>/b</D:href><D:propstat><D:getcontentlength>junk</D:getcontentlength>\
                </D:propstat></D:response>
                """))
        #expect(found.count == 2)
        #expect(found[0].modificationTime == -1 && found[0].length == 42)
        #expect(found[1].modificationTime == nil && found[1].length == 0)
    }

    @Test(arguments: [
        ("HTTP/1.1 200 OK", 200), ("HTTP/1.1  207", 207), ("HTTP/1.1", 0), ("200", 0), ("x 99999999999", 1_215_752_191),
        ("x 99999999999999999999", 4_294_967_295),
        ("HTTP/1.1 abc", 0),
    ])
    func statusLinesAreReadAsMpdReadsThem(line: String, status: Int) {
        #expect(PropfindParser.status(Array(line.utf8)) == status)
    }

    @Test func aMalformedOrEmptyReplyIsExpatsError() throws {
        let mismatched = #expect(throws: XMLError.self) {
            try self.resources(self.multistatus("<D:response><D:href>/x</D:wrong>"))
        }
        #expect(mismatched?.message == "mismatched tag")
        let empty = #expect(throws: XMLError.self) { try self.resources("") }
        #expect(empty?.message == "no element found")
        let text = #expect(throws: XMLError.self) { try self.resources("hello, this is not XML\n") }
        #expect(text?.message == "syntax error")
    }

    @Test(arguments: [
        ("/dav/", "/dav/short.flac", "short.flac"), ("/dav/", "/dav/Artist%20Dir/", "Artist Dir"),
        ("/dav/", "http://127.0.0.1:80/DAV/x.flac", "x.flac"), ("/dav/", "/dav/", nil), ("/dav/", "/dav/a/b.flac", nil),
        ("/dav/", "/elsewhere/x.flac", nil), ("/dav/", "http://host", nil), ("/dav/", "/dav/%C3%9C.flac", "Ü.flac"),
        ("/dav/", "/dav/a%2Fb.flac", nil), ("/a b/", "/a%20b/c", "c"), ("/", "//host/x/", "x"),
        ("/dav/", "/dav/50%25%zz", "50%%zz"),
    ])
    func aListedHrefNamesAnEntryDirectlyInTheDirectory(base: String, href: String, name: String?) {
        let found = WebDAVPath.name(ofHref: Array(href.utf8), basePath: Array(base.utf8))
        #expect(found == name.map { Array($0.utf8) })
    }

    @Test func theBasePathIsTheRequestedURLsPathUnescaped() {
        #expect(WebDAVPath.basePath(of: "http://h:1/a%20b/c/") == Array("/a b/c/".utf8))
        #expect(WebDAVPath.basePath(of: "http://h:1") == Array("/".utf8))
    }

    @Test func pathsAreEscapedSegmentBySegmentAsLibcurlEscapes() {
        #expect(WebDAVPath.escape("Artist Dir/long song.flac") == "Artist%20Dir/long%20song.flac")
        #expect(WebDAVPath.escape("sub/Ünïcode #1.flac") == "sub/%C3%9Cn%C3%AFcode%20%231.flac")
        #expect(WebDAVPath.escape("a-b_c.d~e/f+g&h") == "a-b_c.d~e/f%2Bg%26h")
    }
}
