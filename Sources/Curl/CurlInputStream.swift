// SPDX-License-Identifier: GPL-3.0-or-later

import ICU
import Input
import Model
import Posix

/// An `http://` or `https://` stream through libcurl, as `mpd`'s curl input plugin (`CurlInputStream` in an
/// `IcyInputStream`): the request runs on a thread of its own that reads ahead into a bounded buffer, and the
/// ICY metadata blocks are taken out of what ``read(into:)`` returns.
///
/// - Opening sends the request and returns once the response's headers are in (or throws).
/// - The transfer thread buffers up to ``CurlSettings/bufferSize`` bytes (512 KiB), pausing the transfer when a
///   block does not fit and resuming it once the reader has brought the buffer below
///   ``CurlSettings/resumeAt`` (384 KiB).
/// - ``read(into:)`` waits for data, the end or an error; an error of the transfer is thrown by the next read
///   (before any bytes still buffered, as `mpd` does), once.
/// - ``seek(to:)``: first within the buffered bytes, else by a new request with `Range: N-`.
/// - ``cancellation``'s `cancel()` (any thread) ends every wait, the open's included, with
///   `InputError.cancelled`; every later call fails the same way.
///
/// The reading side is confined to one thread at a time (the decoder's). Reads take the buffer's mutex once
/// and never allocate; only seeks that leave the buffer start a new request (and thread).
public final class CurlInputStream: InputStream {
    /// The URL it was opened with.
    public let uri: String
    /// `Content-Length` (plus the offset a seek asked for), when the server sent it.
    public let size: UInt64?
    /// As `mpd` decides: the server sent `Accept-Ranges` (any value) and no ICY metadata interval.
    public let isSeekable: Bool
    /// `Content-Type`, as sent.
    public let mimeType: String?
    /// Where the next read starts; with ICY metadata, counting audio bytes only.
    public private(set) var offset: UInt64 = 0
    /// Cancels the stream from any thread: the one given at opening, or one of its own.
    public let cancellation: InputCancellation
    /// `icy-metaint`, or 0 without ICY metadata.
    public let metaInterval: Int

    private let settings: CurlSettings
    private let buffer: CurlStreamBuffer
    private var thread: NamedThread?
    private var icy: IcyMetaDataParser
    /// The tag of the response's headers (`icy-name`…) not yet handed out by ``readTag()``.
    private var pendingInputTag: [TagItem]?
    /// The last tags of each kind, merged for ``readTag()``.
    private var inputTag: [TagItem]?
    private var icyTag: [TagItem]?
    /// Where the transfer is, in the server's bytes (with ICY metadata, `offset` counts audio bytes only).
    private var rawOffset: UInt64 = 0

    /// Whether `mpd`'s curl plugin opens `uri`: it starts with `http://` or `https://` (any case).
    public static func canOpen(_ uri: String) -> Bool {
        URIScheme.hasPrefixIgnoringCase(uri.utf8, "http://") || URIScheme.hasPrefixIgnoringCase(uri.utf8, "https://")
    }

    /// Opens `url`: sends the request and waits for the response's headers.
    ///
    /// - Parameters:
    ///   - url: An `http://` or `https://` URL (see ``canOpen(_:)``).
    ///   - settings: The `input { plugin "curl" }` settings.
    ///   - cancellation: Cancels the open and the stream from another thread (its handler becomes this
    ///     stream's); a new one if `nil` (see ``cancellation``). Cancelled already: the open fails at once.
    /// - Throws: `InputError.curl` (libcurl's failure: refused connection, unknown host, TLS, an HTTP status of
    ///   400 or more, too many redirects), `.httpStatus` (another status outside 200–299), `.cancelled`, `.io`
    ///   when no eventfd can be made.
    public init(url: String, settings: CurlSettings = CurlSettings(), cancellation: InputCancellation? = nil)
        throws(InputError)
    {
        self.uri = url
        self.settings = settings
        self.cancellation = cancellation ?? InputCancellation()
        let buffer: CurlStreamBuffer
        do {
            buffer = try AsyncStreamBuffer(capacity: settings.bufferSize, resumeAt: settings.resumeAt)
        } catch {
            throw .io(error, uri: url)
        }
        self.buffer = buffer
        // Weakly: a cancellation kept after the stream does not keep its buffer.
        self.cancellation.onCancel { [weak buffer] in buffer?.cancel() }
        buffer.condition.lock()
        let generation = buffer.restart()
        buffer.condition.unlock()
        let thread = try Self.start(url, settings, buffer, offset: 0, generation: generation, isSeek: false)
        let headers: CurlResponseHeaders
        do {
            headers = try Self.waitReady(url, buffer)
        } catch {
            Self.stop(buffer, thread)
            throw error
        }
        self.thread = thread
        // mpd's CurlInputStream::OnHeaders.
        var seekable = headers.value("accept-ranges") != nil
        self.size = headers.value("content-length").map { CurlResponseHeaders.unsigned($0) }
        self.mimeType = headers.value("content-type")
        let converter = Self.charset(of: url).flatMap { CharsetConverter(charset: $0) }
        if let name = headers.bytes("icy-name") ?? headers.bytes("ice-name") ?? headers.bytes("x-audiocast-name") {
            // mpd converts the name too, and keeps it as it came when that fails.
            let bytes = converter?.utf8(name) ?? name
            self.pendingInputTag = bytes.isEmpty ? [] : [TagItem(.name, TagString.fixed(bytes))]
        }
        let interval = headers.value("icy-metaint").map { CurlResponseHeaders.unsigned($0) } ?? 0
        self.metaInterval = interval > 0 ? Int(clamping: interval) : 0
        if self.metaInterval > 0 { seekable = false }
        self.isSeekable = seekable
        self.icy = IcyMetaDataParser(metaInterval: self.metaInterval, convert: converter.map { c in { c.utf8($0) } })
    }

    /// The `charset` parameter of the URL's fragment (`http://host/stream#charset=ISO-8859-1`), raw, as `mpd`
    /// finds it (`UriFindRawQueryParameter`): `""` for a bare `charset`.
    static func charset(of url: String) -> String? {
        guard let hash = url.firstIndex(of: "#") else { return nil }
        for parameter in url[url.index(after: hash)...].split(separator: "&", omittingEmptySubsequences: false) {
            guard parameter.hasPrefix("charset") else { continue }
            let rest = parameter.dropFirst("charset".count)
            if rest.isEmpty { return "" }
            if rest.first == "=" { return String(rest.dropFirst()) }
        }
        return nil
    }

    /// Stops the transfer without waiting for its thread, which ends by itself at once: releasing a stream
    /// never blocks.
    deinit {
        guard let thread = self.thread else { return }
        Self.stop(self.buffer, thread, wait: false)
    }

    /// Reads up to `buffer.count` bytes, waiting until the transfer has some, ends or fails. With ICY metadata
    /// only audio bytes are returned (a read may wait for more when it got metadata only).
    ///
    /// - Returns: 0 only at the end: after the last byte of a transfer that ended, or at `size`.
    /// - Throws: the transfer's `InputError` (once), or `.cancelled`.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        guard !buffer.isEmpty else { return 0 }
        guard self.icy.isDefined else {
            let count = try self.readRaw(into: buffer)
            self.offset = self.rawOffset
            return count
        }
        while true {
            let count = try self.readRaw(into: buffer)
            if count == 0 { return 0 }
            let audio = self.icy.parseInPlace(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]))
            if audio > 0 {
                self.offset += UInt64(audio)
                return audio
            }
        }
    }

    /// The stream's tag when it changed (`mpd`'s `IcyInputStream::ReadTag`): the headers' `Name` at first, then
    /// after each ICY metadata block the block's `Title` merged with it (`Title` first). `nil` when nothing
    /// new came since the last call. Cheap: no lock; allocates only when a new tag is returned.
    public func readTag() -> [TagItem]? {
        let newInputTag = self.pendingInputTag
        self.pendingInputTag = nil
        guard self.icy.isDefined else { return newInputTag }
        if let newInputTag { self.inputTag = newInputTag }
        let newIcyTag = self.icy.readTag()
        if let newIcyTag { self.icyTag = newIcyTag }
        guard newInputTag != nil || newIcyTag != nil else { return nil }
        // mpd's Tag::Merge(input, icy): the ICY items, then the input items of types the ICY tag lacks.
        guard let icyTag = self.icyTag else { return self.inputTag }
        guard let inputTag = self.inputTag else { return icyTag }
        let present = Set(icyTag.map(\.type))
        return icyTag + inputTag.filter { !present.contains($0.type) }
    }

    /// Moves to `offset` (`mpd`'s `AsyncInputStream::Seek` and `CurlInputStream::SeekInternal`): within the
    /// buffered bytes by skipping them; at `size` without a request; else by a new request from there.
    ///
    /// - Throws: `InputError.notSeekable` when the stream is not seekable; the new request's error
    ///   (`.curl`, `.httpStatus`), or `.cancelled`.
    public func seek(to offset: UInt64) throws(InputError) {
        guard offset != self.offset else { return }
        guard self.isSeekable else { throw .notSeekable(uri: self.uri) }
        self.buffer.condition.lock()
        if offset > self.rawOffset {
            let skipped = Int(min(UInt64(self.buffer.count), offset - self.rawOffset))
            self.buffer.discard(skipped)
            self.rawOffset += UInt64(skipped)
        }
        self.buffer.condition.unlock()
        self.offset = self.rawOffset
        guard offset != self.rawOffset else { return }

        self.stop()
        self.buffer.condition.lock()
        let generation = self.buffer.restart()
        self.rawOffset = offset
        self.offset = offset
        if offset == self.size {
            // mpd: a seek to the end makes no request (that would answer 416).
            self.buffer.ready = true
            self.buffer.condition.unlock()
            return
        }
        self.buffer.condition.unlock()
        self.thread = try Self.start(
            self.uri, self.settings, self.buffer, offset: offset, generation: generation, isSeek: true)
        _ = try Self.waitReady(self.uri, self.buffer)
    }

    /// Starts a request of `uri` from `offset` on a new transfer thread.
    private static func start(
        _ uri: String, _ settings: CurlSettings, _ buffer: CurlStreamBuffer, offset: UInt64, generation: Int,
        isSeek: Bool
    ) throws(InputError) -> NamedThread {
        let request: CurlRequest
        do {
            request = try CurlRequest(
                uri: uri, settings: settings, offset: offset, buffer: buffer, generation: generation, isSeek: isSeek)
        } catch {
            throw .curl(message: error.message, uri: uri)
        }
        return NamedThread("curl") { request.run() }
    }

    /// Stops the current request, if any.
    private func stop() {
        if let thread = self.thread { Self.stop(self.buffer, thread) }
        self.thread = nil
    }

    /// Stops a request: moves the generation on, wakes the transfer thread, and waits for it to end (so that
    /// a seek's new request is the server's only one) or lets it end alone.
    private static func stop(_ buffer: CurlStreamBuffer, _ thread: NamedThread, wait: Bool = true) {
        buffer.condition.lock()
        buffer.generation += 1
        buffer.condition.unlock()
        EventFD.signal(buffer.wake)
        if wait { thread.join() } else { thread.detach() }
    }

    /// Waits until the current request's headers are in; returns them.
    private static func waitReady(
        _ uri: String, _ buffer: CurlStreamBuffer
    ) throws(InputError) -> CurlResponseHeaders {
        try buffer.waitReady(uri: uri) ?? CurlResponseHeaders()
    }

    /// Reads buffered bytes of the server's stream (`mpd`'s `AsyncInputStream::Read`).
    private func readRaw(into destination: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        let count = try self.buffer.read(into: destination, uri: self.uri) {
            self.size.map { self.rawOffset >= $0 } ?? false
        }
        self.rawOffset += UInt64(count)
        return count
    }
}
