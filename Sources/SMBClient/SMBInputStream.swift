// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Model
import Posix

/// A file on an SMB share as an input stream (`mpd`'s smbclient input plugin): `smb://server[:port]/share/path`,
/// seekable, with the size the server gives when it is opened.
///
/// A helper thread (``SMBReader``) opens the file with a libsmbclient context of its own, as in `mpd`, and reads
/// ahead into a bounded buffer (``bufferSize``), as the curl input does; the reading side only waits on that
/// buffer. ``cancellation``'s `cancel()` (any thread) therefore ends every wait (the open's, a read's, a seek's)
/// at once with `InputError.cancelled`, even while the helper is stuck in `smbc_read` on a share gone silent.
///
/// The helper outlives its stream for a while (``SMBReaderPool``): the next stream of the same URL takes its open
/// file over, so that the player's new stream after a seek neither opens the file again nor, on a silent share,
/// starts one more helper that gets stuck too.
///
/// - ``seek(to:)``: forwards within the buffered bytes by skipping them; else the buffer is dropped and the
///   helper restarts reading at the offset (`smbc_lseek`).
/// - Releasing the stream never blocks either.
///
/// The reading side is confined to one thread at a time (the decoder's); reads never allocate.
public final class SMBInputStream: InputStream {
    /// The read-ahead buffer's size.
    public static let bufferSize = 512 * 1024
    /// How much the helper asks libsmbclient for at once.
    static let blockSize = 64 * 1024

    /// The URL it was opened with.
    public let uri: String
    /// The file's size when it was opened.
    public let size: UInt64?
    /// Always `true`.
    public var isSeekable: Bool { true }
    /// Always `nil`: SMB announces no type.
    public var mimeType: String? { nil }
    /// Where the next read starts.
    public private(set) var offset: UInt64 = 0
    /// Cancels the stream from any thread: the one given at opening, or one of its own.
    public let cancellation: InputCancellation
    private let reader: SMBReader
    private let session: SMBSession

    /// Whether this plugin opens `url`: the `smb://` scheme, in any case (as `mpd`, a bare `smb://` too).
    public static func canOpen(_ url: String) -> Bool {
        URIScheme.hasPrefixIgnoringCase(url.utf8, "smb://")
    }

    /// Opens the file at `url` read-only (`mpd`'s `input_smbclient_open`), waiting for the helper thread.
    ///
    /// - Parameters:
    ///   - url: An `smb://` URL.
    ///   - cancellation: Cancels the open and the stream from another thread (its handler becomes this
    ///     stream's); a new one if `nil`. Cancelled already: the open fails at once.
    /// - Throws: `InputError.plugin` with `mpd`'s words (`smbc_open() failed: No such file or directory`),
    ///   `.cancelled`, or `.io` when no eventfd can be made.
    public convenience init(url: String, cancellation: InputCancellation? = nil) throws(InputError) {
        try self.init(url: url, cancellation: cancellation, file: SMBReader.openFile)
    }

    /// Opens through `openFile`, which a new helper thread calls (tests give one that blocks), unless a helper of
    /// `pool` has the file open already.
    init(
        url: String, cancellation: InputCancellation?, pool: SMBReaderPool = .shared,
        file openFile: @escaping @Sendable (String) throws(SystemCallError) -> any SMBReadableFile
    ) throws(InputError) {
        self.uri = url
        self.cancellation = cancellation ?? InputCancellation()
        let buffer: SMBStreamBuffer
        do {
            buffer = try SMBStreamBuffer(capacity: Self.bufferSize, resumeAt: Self.bufferSize - Self.blockSize)
        } catch {
            throw .io(error, uri: url)
        }
        buffer.condition.lock()
        let generation = buffer.restart()
        buffer.condition.unlock()
        let session = SMBSession(buffer: buffer, openGeneration: generation)
        self.session = session
        let reader: SMBReader
        if let waiting = pool.adopt(url: url, session: session) {
            reader = waiting
        } else {
            reader = SMBReader(url: url, session: session, pool: pool, openFile: openFile)
            NamedThread.detach("smbclient") { reader.run(first: session) }
        }
        self.reader = reader
        // Weakly: a cancellation kept after the stream does not keep its buffer.
        self.cancellation.onCancel { [weak reader, weak session] in
            guard let reader, let session else { return }
            Self.letGo(reader, session)
        }
        do {
            self.size = try Self.answer(buffer, url)
        } catch {
            Self.letGo(reader, session)
            throw error
        }
    }

    /// Lets the helper thread go (at once, or when its call into libsmbclient returns) to the next stream.
    deinit { Self.letGo(self.reader, self.session) }

    /// Ends `session`'s waits and hands its helper to the pool.
    private static func letGo(_ reader: SMBReader, _ session: SMBSession) {
        session.buffer.cancel()
        reader.pool.abandon(reader, session: session)
    }

    /// Reads at the current offset and moves past what was read, waiting for the helper.
    ///
    /// - Returns: 0 only at the end (the size, or where the helper found the end).
    /// - Throws: `InputError.plugin` (`smbc_read() failed: …`, once), or `.cancelled`.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        guard !buffer.isEmpty else { return 0 }
        let count = try self.session.buffer.read(into: buffer, uri: self.uri) {
            self.size.map { self.offset >= $0 } ?? false
        }
        self.offset += UInt64(count)
        return count
    }

    /// Moves to `offset`, which may be at most the size: forwards within the buffered bytes by skipping
    /// them, else the helper restarts reading there.
    ///
    /// - Throws: `InputError.notSeekable` past the end; `.plugin` when `smbc_lseek` fails; `.cancelled`.
    public func seek(to offset: UInt64) throws(InputError) {
        if let size = self.size, offset > size { throw .notSeekable(uri: self.uri) }
        let buffer = self.session.buffer
        buffer.condition.lock()
        // Cancelled: even a seek within the buffered bytes fails, as the reads after it would.
        if buffer.cancelled {
            buffer.condition.unlock()
            throw .cancelled(uri: self.uri)
        }
        if offset >= self.offset && offset - self.offset <= UInt64(buffer.count) {
            buffer.discard(Int(offset - self.offset))
            buffer.condition.unlock()
            self.offset = offset
            return
        }
        _ = buffer.restart()
        self.session.start = offset
        buffer.condition.broadcast()
        buffer.condition.unlock()
        _ = try Self.answer(buffer, self.uri)
        self.offset = offset
    }

    /// Waits for the helper's answer to the open (the size) or a seek.
    private static func answer(_ buffer: SMBStreamBuffer, _ uri: String) throws(InputError) -> UInt64? {
        try buffer.waitResponse(uri: uri)?.get() ?? nil
    }
}
