// SPDX-License-Identifier: GPL-3.0-or-later

import CCurl
import Input
import Posix

/// A stream's read-ahead buffer, whose producer's answer is the response's headers.
typealias CurlStreamBuffer = AsyncStreamBuffer<CurlResponseHeaders>

/// One HTTP request of a stream (the first, or the one a seek makes), on a thread of its own: a libcurl easy
/// handle driven by a multi handle of its own, as `mpd`'s `CurlRequest` with `CurlInputStream::InitEasy`'s
/// options. Received bytes go into the stream's ``AsyncStreamBuffer``; when a block does not fit the transfer
/// pauses, and the reader's resume request (through the buffer's eventfd) unpauses it.
///
/// The handles are made on the opening thread, then used only by the transfer thread, which frees them when
/// the transfer ends or the buffer's generation moves on. `@unchecked Sendable` for that hand-over.
final class CurlRequest: CurlTransferHandler, @unchecked Sendable {
    /// Why the handles could not be set up: libcurl's text for the failing code.
    struct SetupError: Error { let message: String }

    private let uri: String
    private let buffer: CurlStreamBuffer
    private let generation: Int
    /// Whether this request is a seek's: its headers do not change the stream's size, type or tags.
    let isSeek: Bool
    /// libcurl's functions.
    private let curl: fermata_curl_functions
    private let easy: UnsafeMutableRawPointer
    private let multi: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var aliasList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>
    /// Response headers, received on the transfer thread.
    private var headers = CurlResponseHeaders()
    /// The stream's headers were handed over (or refused): later header lines are trailers and ignored.
    private var headersDone = false

    /// Sets up a GET of `uri` from `offset` (a `Range: offset-` header when it is not 0).
    ///
    /// - Throws: `SetupError` when libcurl refuses a handle or an option, or cannot be loaded ("curl_easy_init()
    ///   failed", the reason reported once by `CurlLibrary`).
    init(
        uri: String, settings: CurlSettings, offset: UInt64, buffer: CurlStreamBuffer, generation: Int, isSeek: Bool
    ) throws(SetupError) {
        guard let curl = try? CurlLibrary.shared.functions(), let easy = curl.curl_easy_init() else {
            throw SetupError(message: "curl_easy_init() failed")
        }
        guard let multi = curl.curl_multi_init() else {
            curl.curl_easy_cleanup(easy)
            throw SetupError(message: "curl_multi_init() failed")
        }
        self.curl = curl
        self.uri = uri
        self.buffer = buffer
        self.generation = generation
        self.isSeek = isSeek
        self.easy = easy
        self.multi = multi
        self.errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        self.errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        do {
            try self.configure(settings, offset: offset)
        } catch {
            self.free()
            throw error
        }
    }

    /// The options of `mpd`'s `Curl::Setup` and `CurlInputStream::InitEasy`, in that order.
    private func configure(_ settings: CurlSettings, offset: UInt64) throws(SetupError) {
        let this = Unmanaged<AnyObject>.passUnretained(self).toOpaque()
        try self.set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(self.errorBuffer))
        try self.set(CURLOPT_HEADERFUNCTION, callback: curlHeaderCallback)
        try self.set(CURLOPT_HEADERDATA, pointer: this)
        try self.set(CURLOPT_WRITEFUNCTION, callback: curlWriteCallback)
        try self.set(CURLOPT_WRITEDATA, pointer: this)
        try self.set(CURLOPT_URL, string: self.uri)
        try self.set(CURLOPT_USERAGENT, string: settings.userAgent)
        try self.set(CURLOPT_NETRC, long: Int(CURL_NETRC_OPTIONAL.rawValue))
        try self.set(CURLOPT_NOPROGRESS, long: 1)
        try self.set(CURLOPT_NOSIGNAL, long: 1)
        try self.set(CURLOPT_CONNECTTIMEOUT, long: settings.connectTimeout)
        self.aliasList = self.curl.curl_slist_append(nil, "ICY 200 OK")
        try self.set(CURLOPT_HTTP200ALIASES, list: self.aliasList)
        try self.set(CURLOPT_FOLLOWLOCATION, long: 1)
        try self.set(CURLOPT_MAXREDIRS, long: settings.maximumRedirects)
        try self.set(CURLOPT_FAILONERROR, long: 1)
        try self.set(CURLOPT_HTTPAUTH, long: fermata_curlauth_basic)
        if let proxy = settings.proxy { try self.set(CURLOPT_PROXY, string: proxy) }
        if settings.proxyPort > 0 { try self.set(CURLOPT_PROXYPORT, long: settings.proxyPort) }
        if let user = settings.proxyUser, let password = settings.proxyPassword {
            try self.set(CURLOPT_PROXYUSERPWD, string: "\(user):\(password)")
        }
        if let cacert = settings.cacert { try self.set(CURLOPT_CAINFO, string: cacert) }
        try self.set(CURLOPT_SSL_VERIFYPEER, long: settings.verifyPeer ? 1 : 0)
        try self.set(CURLOPT_SSL_VERIFYHOST, long: settings.verifyHost ? 2 : 0)
        self.headerList = self.curl.curl_slist_append(nil, "Icy-Metadata: 1")
        try self.set(CURLOPT_HTTPHEADER, list: self.headerList)
        // As mpd: these fail only when libcurl was built without proxy support, which is ignored.
        try? self.set(CURLOPT_PROXY_SSL_VERIFYPEER, long: settings.verifyPeer ? 1 : 0)
        try? self.set(CURLOPT_PROXY_SSL_VERIFYHOST, long: settings.verifyHost ? 2 : 0)
        if offset > 0 { try self.set(CURLOPT_RANGE, string: "\(offset)-") }
        // Not mpd's: a request stopped while its name is being resolved does not wait for the resolver thread
        // (libcurl 7.87 and later), so stopping a stream never blocks.
        try? self.set(CURLOPT_QUICK_EXIT, long: 1)
    }

    private func check(_ code: CURLcode) throws(SetupError) {
        guard code == CURLE_OK else { throw SetupError(message: self.curl.text(of: code)) }
    }

    private func set(_ option: CURLoption, long value: Int) throws(SetupError) {
        try self.check(fermata_curl_setopt_long(self.curl, self.easy, option, value))
    }

    private func set(_ option: CURLoption, string value: String) throws(SetupError) {
        // libcurl copies string options.
        try self.check(fermata_curl_setopt_string(self.curl, self.easy, option, value))
    }

    private func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer) throws(SetupError) {
        try self.check(fermata_curl_setopt_pointer(self.curl, self.easy, option, value))
    }

    private func set(_ option: CURLoption, list value: UnsafeMutablePointer<curl_slist>?) throws(SetupError) {
        try self.check(fermata_curl_setopt_slist(self.curl, self.easy, option, value))
    }

    private func set(_ option: CURLoption, callback value: curl_write_callback) throws(SetupError) {
        try self.check(fermata_curl_setopt_callback(self.curl, self.easy, option, value))
    }

    private func free() {
        self.curl.curl_easy_cleanup(self.easy)
        _ = self.curl.curl_multi_cleanup(self.multi)
        self.curl.curl_slist_free_all(self.headerList)
        self.curl.curl_slist_free_all(self.aliasList)
        self.errorBuffer.deallocate()
    }

    /// Runs the transfer to its end, its failure, or until the buffer's generation moves on or the stream is
    /// cancelled; then frees the handles. The transfer thread's body.
    func run() {
        defer { self.free() }
        guard self.curl.curl_multi_add_handle(self.multi, self.easy) == CURLM_OK else {
            self.finish(CURLE_FAILED_INIT)
            return
        }
        defer { _ = self.curl.curl_multi_remove_handle(self.multi, self.easy) }
        var wait = curl_waitfd(fd: self.buffer.wake.rawValue, events: Int16(CURL_WAIT_POLLIN), revents: 0)
        while true {
            self.buffer.condition.lock()
            let stop = self.buffer.generation != self.generation || self.buffer.cancelled
            let resume = !stop && self.buffer.resumeRequested
            if resume {
                self.buffer.resumeRequested = false
                self.buffer.paused = false
            }
            self.buffer.condition.unlock()
            if stop { return }
            // May call the write callback at once with the data held back since the pause.
            if resume { _ = self.curl.curl_easy_pause(self.easy, fermata_curlpause_cont) }
            var running: Int32 = 0
            _ = self.curl.curl_multi_perform(self.multi, &running)
            var queued: Int32 = 0
            while let message = self.curl.curl_multi_info_read(self.multi, &queued) {
                if message.pointee.msg == CURLMSG_DONE {
                    self.finish(message.pointee.data.result)
                    return
                }
            }
            wait.revents = 0
            _ = self.curl.curl_multi_poll(self.multi, &wait, 1, 1000, nil)
            if wait.revents != 0 { EventFD.drain(self.buffer.wake) }
        }
    }

    /// The transfer is over (`mpd`'s `CurlResponseHandlerAdapter::Done`): an error, or the end after the
    /// headers (handed over now if no body byte came).
    private func finish(_ result: CURLcode) {
        self.buffer.condition.lock()
        defer { self.buffer.condition.unlock() }
        guard self.buffer.generation == self.generation else { return }
        if !self.failed {
            if result != CURLE_OK {
                var message = String(cString: self.errorBuffer)
                while let last = message.unicodeScalars.last, last.value <= 0x20 { message.unicodeScalars.removeLast() }
                if message.isEmpty { message = self.curl.text(of: result) }
                self.buffer.failure = .curl(message: message, uri: self.uri)
            } else {
                self.handOverHeaders()
            }
        }
        self.buffer.ended = true
        self.buffer.ready = true
        self.buffer.condition.broadcast()
    }

    /// This request set the stream's failure itself (a refused status, a block too large) and aborted: that
    /// error stands, not libcurl's for the abort.
    private var failed = false

    /// Hands the response's headers to the stream, with the buffer's mutex held (`mpd`'s `OnHeaders`, run when
    /// the headers' end, the first body byte or the transfer's end comes).
    ///
    /// - Returns: `false` when the status refuses the response (the failure is set; the transfer must stop).
    @discardableResult
    private func handOverHeaders() -> Bool {
        guard !self.headersDone else { return !self.failed }
        self.headersDone = true
        let status = self.headers.status
        guard status >= 200 && status < 300 else {
            self.failed = true
            self.buffer.failure = .httpStatus(status, uri: self.uri)
            self.buffer.ready = true
            self.buffer.condition.broadcast()
            return false
        }
        self.buffer.response = self.headers
        self.buffer.ready = true
        self.buffer.condition.broadcast()
        return true
    }

    /// One header line (the header callback).
    func header(_ line: UnsafeRawBufferPointer) -> Bool {
        guard !self.headersDone else { return true }
        guard self.headers.add(line) == .end else { return true }
        let status = self.headers.status
        // Not the last response: an interim one, or a redirect libcurl follows.
        if status < 200 || (status >= 300 && status < 400 && self.headers.value("location") != nil) { return true }
        // An error status: libcurl fails the transfer itself (CURLOPT_FAILONERROR), or it ends and the
        // status is refused then.
        if status >= 400 { return true }
        self.buffer.condition.lock()
        defer { self.buffer.condition.unlock() }
        guard self.buffer.generation == self.generation, !self.buffer.cancelled else { return false }
        return self.handOverHeaders()
    }

    /// A block of the body (the write callback): appended, or the transfer pauses when it does not fit.
    ///
    /// - Returns: the byte count taken, `CURL_WRITEFUNC_PAUSE`, or 0 to abort.
    func data(_ block: UnsafeRawBufferPointer) -> Int {
        self.buffer.condition.lock()
        defer { self.buffer.condition.unlock() }
        guard self.buffer.generation == self.generation, !self.buffer.cancelled else { return 0 }
        guard self.handOverHeaders() else { return 0 }
        guard block.count <= self.buffer.space else {
            // A block larger than the whole buffer could never fit: fail rather than pause for ever.
            guard block.count <= self.buffer.capacity else {
                self.failed = true
                self.buffer.failure = .curl(message: "received block larger than the buffer", uri: self.uri)
                return 0
            }
            self.buffer.paused = true
            return Int(CURL_WRITEFUNC_PAUSE)
        }
        let wasEmpty = self.buffer.count == 0
        self.buffer.append(block)
        if wasEmpty { self.buffer.condition.broadcast() }
        return block.count
    }
}
