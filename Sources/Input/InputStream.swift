// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// A byte source that decoders and tag readers read through, as `mpd`'s `InputStream`: a local file today,
/// an HTTP stream later, so every format plugin reads both the same way.
///
/// Confined to one thread at a time (not `Sendable`): the decoder thread, or a scanner worker.
/// `read(into:)` and `seek(to:)` must not allocate, lock or log per call: the decoder thread calls them
/// for every chunk.
public protocol InputStream: AnyObject {
    /// What was opened: a file system path or a URL.
    var uri: String { get }
    /// The length in bytes, when known.
    var size: UInt64? { get }
    /// Whether `seek(to:)` can move to any offset.
    var isSeekable: Bool { get }
    /// The MIME type the transport announced (`Content-Type`), if any; `nil` for files.
    var mimeType: String? { get }
    /// The offset the next `read(into:)` starts at.
    var offset: UInt64 { get }

    /// Reads up to `buffer.count` bytes at `offset` and moves past them.
    ///
    /// - Returns: bytes read; 0 only at the end of the stream (or for an empty buffer).
    /// - Throws: `InputError` when reading fails.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int

    /// Moves to `offset`; the next `read(into:)` starts there.
    ///
    /// - Throws: `InputError.notSeekable`, or `.io` when the move fails.
    func seek(to offset: UInt64) throws(InputError)

    /// The tags the transport carries (ICY's `icy-name` as `Name`, `StreamTitle` as `Title`), when they
    /// changed since the last call (`mpd`'s `InputStream::ReadTag`); `nil` otherwise. The decoder thread
    /// asks once per chunk: cheap when nothing changed.
    func readTag() -> [TagItem]?
}

extension InputStream {
    /// Files carry no tags of their own transport.
    public func readTag() -> [TagItem]? { nil }

    /// Whether seeking is cheap (`mpd`'s `CheapSeeking`): a seekable input whose URI is not `http://`,
    /// `https://` or `qobuz://` (ASCII case-insensitively), where each seek is a new request, so `mpd` does not
    /// look for the end up front. A file, and an `smb://` or `nfs://` stream, seek cheaply.
    public var isCheapToSeek: Bool {
        self.isSeekable
            && !["http://", "https://", "qobuz://"].contains { URIScheme.hasPrefixIgnoringCase(self.uri.utf8, $0) }
    }

    /// Whether `offset` has reached `size` (never, when the size is unknown).
    public var isAtEnd: Bool { self.size.map { self.offset >= $0 } ?? false }

    /// Reads until `buffer` is full or the stream ends.
    ///
    /// - Returns: bytes read; fewer than `buffer.count` only at the end of the stream.
    public func readFully(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        var total = 0
        while total < buffer.count {
            let count = try self.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[total...]))
            if count == 0 { break }
            total += count
        }
        return total
    }

    /// Reads from `offset` until the stream ends or `limit` bytes were read. Allocates: for playlists and
    /// other small documents, not for the audio path.
    public func readToEnd(limit: Int) throws(InputError) -> [UInt8] {
        var bytes: [UInt8] = []
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 1)
        defer { chunk.deallocate() }
        while bytes.count < limit {
            let count = try self.read(into: chunk)
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<min(count, limit - bytes.count)])
        }
        return bytes
    }

    /// Reads exactly `count` bytes from `offset`, or `nil` when the stream ends first. Allocates: for
    /// headers and tags, not for the audio path.
    public func readBytes(_ count: Int) throws(InputError) -> [UInt8]? {
        guard count >= 0 else { return nil }
        if let size = self.size, UInt64(count) > size &- min(size, self.offset) { return nil }
        let bytes = try self.readUpTo(count)
        return bytes.count == count ? bytes : nil
    }

    /// Reads up to `count` bytes from `offset`: fewer only when the stream ends first. Allocates: for headers,
    /// tags and pictures, not for the audio path.
    public func readUpTo(_ count: Int) throws(InputError) -> [UInt8] {
        var failure: InputError?
        let bytes = [UInt8](unsafeUninitializedCapacity: max(0, count)) { buffer, initialized in
            do {
                initialized = try self.readFully(into: UnsafeMutableRawBufferPointer(buffer))
            } catch let error as InputError {
                failure = error
                initialized = 0
            } catch {
                preconditionFailure("readFully throws only InputError")
            }
        }
        if let failure { throw failure }
        return bytes
    }
}

/// Opens a URL through the input plugin for its scheme (curl for http(s)), waiting for its response; any thread
/// but the event loop's. The one opener the daemon builds: the player, `load` and `lsinfo` of URLs share it.
public typealias RemoteOpener =
    @Sendable (_ url: String, _ cancellation: InputCancellation) throws(InputError) -> any InputStream
