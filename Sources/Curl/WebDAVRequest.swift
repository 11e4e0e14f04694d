// SPDX-License-Identifier: GPL-3.0-or-later

import CCurl
import Expat

/// Why a PROPFIND failed, in `mpd`'s curl storage's words.
public struct WebDAVError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The text `mpd` logs: `CURL failed: …` (libcurl's message), `Status N from WebDAV server; expected "207
    /// Multi-Status"`, `Unexpected Content-Type from WebDAV server`, or expat's message for a malformed body.
    public let message: String

    /// An error with `message`.
    public init(message: String) { self.message = message }

    public var description: String { self.message }
}

/// One WebDAV PROPFIND, made as `mpd`'s curl storage makes it (`PropfindOperation`): its body asks for
/// `resourcetype`, `getcontenttype`, `getcontentlength` and `getlastmodified`, with `depth:` and `content-type:
/// text/xml` headers, basic authentication, one redirect followed, and the options every `mpd` request has
/// (`Curl::Setup`: its user agent, `.netrc`, a 10 s connect timeout). As in `mpd`, the `input { plugin "curl" }`
/// settings (proxy, TLS verification) are not applied. The reply must be `207` with an XML content type; its
/// body is parsed by expat as it arrives.
///
/// ``perform(url:depth:)`` blocks the calling thread for the whole transfer (libcurl's `curl_easy_perform`): call
/// it from a thread that may wait on the network (an update thread), never the event loop.
public final class WebDAVRequest: CurlTransferHandler {
    /// The request body, `mpd`'s.
    static let body =
        "<?xml version=\"1.0\"?>\n<a:propfind xmlns:a=\"DAV:\"><a:prop><a:resourcetype/><a:getcontenttype/>"
        + "<a:getcontentlength/><a:getlastmodified/></a:prop></a:propfind>"

    /// libcurl's functions.
    private let curl: fermata_curl_functions
    private let easy: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private var headers = CurlResponseHeaders()
    private var headersChecked = false
    private let parser = XMLStreamParser(namespaceSeparator: "|")
    private var propfind = PropfindParser()
    /// The error a callback met (it then aborts the transfer): it stands, not libcurl's for the abort.
    private var failure: WebDAVError?

    /// The resources of the multistatus reply to a PROPFIND of `url` with `depth` (0 or 1), in document order.
    ///
    /// - Throws: `WebDAVError` in `mpd`'s words.
    public static func perform(url: String, depth: Int) throws(WebDAVError) -> [WebDAVResource] {
        try WebDAVRequest(url: url, depth: depth).run()
    }

    private init(url: String, depth: Int) throws(WebDAVError) {
        // As curl_easy_init failing when libcurl cannot be loaded (the reason reported once by CurlLibrary).
        guard let curl = try? CurlLibrary.shared.functions(), let easy = curl.curl_easy_init() else {
            throw WebDAVError(message: "curl_easy_init() failed")
        }
        self.curl = curl
        self.easy = easy
        self.errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        self.errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        self.headerList = self.curl.curl_slist_append(
            self.curl.curl_slist_append(nil, "depth: \(depth)"), "content-type: text/xml")
        do {
            try self.configure(url: url)
        } catch {
            self.free()
            throw error
        }
    }

    deinit { self.free() }

    private func free() {
        self.curl.curl_easy_cleanup(self.easy)
        self.curl.curl_slist_free_all(self.headerList)
        self.headerList = nil
        self.errorBuffer.deallocate()
    }

    /// `mpd`'s `Curl::Setup`, then `PropfindOperation`'s options.
    private func configure(url: String) throws(WebDAVError) {
        let this = Unmanaged<AnyObject>.passUnretained(self).toOpaque()
        try self.check(fermata_curl_setopt_pointer(self.curl, self.easy, CURLOPT_ERRORBUFFER, self.errorBuffer))
        try self.check(fermata_curl_setopt_callback(self.curl, self.easy, CURLOPT_HEADERFUNCTION, curlHeaderCallback))
        try self.check(fermata_curl_setopt_pointer(self.curl, self.easy, CURLOPT_HEADERDATA, this))
        try self.check(fermata_curl_setopt_callback(self.curl, self.easy, CURLOPT_WRITEFUNCTION, curlWriteCallback))
        try self.check(fermata_curl_setopt_pointer(self.curl, self.easy, CURLOPT_WRITEDATA, this))
        try self.check(fermata_curl_setopt_string(self.curl, self.easy, CURLOPT_URL, url))
        try self.check(fermata_curl_setopt_string(self.curl, self.easy, CURLOPT_USERAGENT, CurlSettings().userAgent))
        try self.check(fermata_curl_setopt_long(self.curl, self.easy, CURLOPT_NETRC, Int(CURL_NETRC_OPTIONAL.rawValue)))
        try self.check(fermata_curl_setopt_long(self.curl, self.easy, CURLOPT_NOPROGRESS, 1))
        try self.check(fermata_curl_setopt_long(self.curl, self.easy, CURLOPT_NOSIGNAL, 1))
        try self.check(
            fermata_curl_setopt_long(self.curl, self.easy, CURLOPT_CONNECTTIMEOUT, CurlSettings().connectTimeout))
        try self.check(fermata_curl_setopt_string(self.curl, self.easy, CURLOPT_CUSTOMREQUEST, "PROPFIND"))
        try self.check(fermata_curl_setopt_long(self.curl, self.easy, CURLOPT_FOLLOWLOCATION, 1))
        try self.check(fermata_curl_setopt_long(self.curl, self.easy, CURLOPT_MAXREDIRS, 1))
        try self.check(fermata_curl_setopt_long(self.curl, self.easy, CURLOPT_HTTPAUTH, fermata_curlauth_basic))
        try self.check(fermata_curl_setopt_slist(self.curl, self.easy, CURLOPT_HTTPHEADER, self.headerList))
        // libcurl copies the body (mpd's CURLOPT_POSTFIELDS keeps a pointer to its constant).
        try self.check(fermata_curl_setopt_string(self.curl, self.easy, CURLOPT_COPYPOSTFIELDS, Self.body))
    }

    private func check(_ code: CURLcode) throws(WebDAVError) {
        guard code == CURLE_OK else { throw WebDAVError(message: self.curl.text(of: code)) }
    }

    private func run() throws(WebDAVError) -> [WebDAVResource] {
        let result = self.curl.curl_easy_perform(self.easy)
        if let failure = self.failure { throw failure }
        guard result == CURLE_OK else {
            var message = String(cString: self.errorBuffer)
            while let last = message.unicodeScalars.last, last.value <= 0x20 { message.unicodeScalars.removeLast() }
            if message.isEmpty { message = self.curl.text(of: result) }
            throw WebDAVError(message: "CURL failed: \(message)")
        }
        // mpd's OnEnd: the headers are checked now if no body came, then expat is told the document ended.
        try self.checkHeaders()
        do {
            for event in try self.parser.finish() { self.propfind.consume(event) }
        } catch {
            throw WebDAVError(message: error.message)
        }
        return self.propfind.resources
    }

    /// `mpd`'s `OnHeaders`, once: a `207` with an XML content type.
    private func checkHeaders() throws(WebDAVError) {
        guard !self.headersChecked else { return }
        self.headersChecked = true
        var status = 0
        _ = fermata_curl_getinfo_long(self.curl, self.easy, CURLINFO_RESPONSE_CODE, &status)
        guard status == 207 else {
            throw WebDAVError(message: "Status \(status) from WebDAV server; expected \"207 Multi-Status\"")
        }
        guard let type = self.headers.value("content-type"),
            type.hasPrefix("text/xml") || type.hasPrefix("application/xml")
        else {
            throw WebDAVError(message: "Unexpected Content-Type from WebDAV server")
        }
    }

    /// One header line (the header callback): kept for the headers' check.
    func header(_ line: UnsafeRawBufferPointer) -> Bool {
        if !self.headersChecked { _ = self.headers.add(line) }
        return true
    }

    /// A block of the body (the write callback): parsed. Returns 0 to abort the transfer on an error.
    func data(_ block: UnsafeRawBufferPointer) -> Int {
        do {
            try self.checkHeaders()
            for event in try self.parser.parse(block) { self.propfind.consume(event) }
            return block.count
        } catch let error as WebDAVError {
            self.failure = error
        } catch let error as XMLError {
            self.failure = WebDAVError(message: error.message)
        } catch {
            self.failure = WebDAVError(message: "\(error)")
        }
        return 0
    }
}
