// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Model
import Posix

/// An SMB stream's read-ahead buffer, whose helper answers the open with the file's size (a seek with `nil`),
/// or the failure of `smbc_open`, `smbc_fstat` or `smbc_lseek`; a read's failure is the buffer's own.
typealias SMBStreamBuffer = AsyncStreamBuffer<Result<UInt64?, InputError>>

/// What the helper thread reads: an open ``SMBFile``, or a test's stand-in.
protocol SMBReadableFile: AnyObject {
    /// The file's size.
    func fileSize() throws(SystemCallError) -> UInt64
    /// Reads up to `buffer.count` bytes; 0 at the end.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> Int
    /// Moves to `offset` bytes from the start.
    func seek(to offset: Int64) throws(SystemCallError)
}

/// The helper thread of an ``SMBInputStream`` (`mpd`'s smbclient plugin behind its buffering input stream): it
/// opens the file with a context of its own, then reads blocks into its stream's buffer while there is room, and
/// moves to where a seek asks. It is the only user of its context and file.
///
/// When its stream lets it go (a cancellation, a released stream; noticed after the call into libsmbclient under
/// way returns), it waits in its ``SMBReaderPool`` for the next stream of the same URL, which takes the open file
/// over (the player opens a song again for every seek), and frees the file and its context when nobody did.
///
/// `@unchecked Sendable`: ``handoff`` is guarded by the pool's lock; the rest is immutable.
final class SMBReader: @unchecked Sendable {
    let url: String
    let pool: SMBReaderPool
    /// Which stream it serves, and what the pool decided for it. Guarded by the pool's lock.
    var handoff: SMBHandoff
    private let openFile: @Sendable (String) throws(SystemCallError) -> any SMBReadableFile

    init(
        url: String, session: SMBSession, pool: SMBReaderPool,
        openFile: @escaping @Sendable (String) throws(SystemCallError) -> any SMBReadableFile
    ) {
        self.url = url
        self.pool = pool
        self.handoff = SMBHandoff(session: session)
        self.openFile = openFile
    }

    /// `mpd`'s `input_smbclient_open`: a new context, `smbc_open`, `smbc_fstat`.
    static func openFile(_ url: String) throws(SystemCallError) -> any SMBReadableFile {
        try SMBContext().open(url)
    }

    /// The thread's body: opens, then serves its stream, and each stream that takes it over, until nobody does.
    func run(first: SMBSession) {
        var session = first
        let file: any SMBReadableFile
        let size: UInt64
        do {
            file = try self.openFile(self.url)
            size = try file.fileSize()
        } catch {
            // To the stream that waits for the open: the first, or one that took the helper over meanwhile.
            let waiting = self.pool.endAfterFailedOpen(self)
            self.answer(waiting, waiting.openGeneration, .failure(.plugin(message: error.description, uri: self.url)))
            return
        }
        let block = UnsafeMutableRawBufferPointer.allocate(byteCount: SMBInputStream.blockSize, alignment: 16)
        defer { block.deallocate() }
        var isTakenOver = false
        while true {
            do throws(SystemCallError) {
                // A stream that took the file over starts at its beginning.
                if isTakenOver { try file.seek(to: 0) }
                self.answer(session, session.openGeneration, .success(size))
            } catch {
                self.pool.didFail(self)
                self.answer(
                    session, session.openGeneration, .failure(.plugin(message: error.description, uri: self.url)))
            }
            self.serve(session, file: file, block: block)
            guard let next = self.pool.waitForNextSession(self) else { return }
            session = next
            isTakenOver = true
        }
    }

    /// Reads and seeks for `session` until its stream lets the helper go.
    private func serve(_ session: SMBSession, file: any SMBReadableFile, block: UnsafeMutableRawBufferPointer) {
        var generation = session.openGeneration
        while true {
            guard let next = self.nextTask(session, &generation) else { return }
            switch next {
            case .seek(let offset):
                do {
                    try file.seek(to: Int64(offset))
                    self.answer(session, generation, .success(nil))
                } catch {
                    self.pool.didFail(self)
                    self.answer(session, generation, .failure(.plugin(message: error.description, uri: self.url)))
                }
            case .read:
                let result: Result<Int, SystemCallError>
                do throws(SystemCallError) {
                    result = .success(try file.read(into: block))
                } catch {
                    self.pool.didFail(self)
                    result = .failure(error)
                }
                self.deliver(session, generation, result, block)
            }
        }
    }

    private enum Task {
        case seek(UInt64)
        case read
    }

    /// Waits for something to do: a seek (a new generation), or a read once the buffer has room for a block;
    /// `nil` once the stream is cancelled.
    private func nextTask(_ session: SMBSession, _ generation: inout Int) -> Task? {
        let buffer = session.buffer
        buffer.condition.lock()
        defer { buffer.condition.unlock() }
        while true {
            if buffer.cancelled { return nil }
            if buffer.generation != generation {
                generation = buffer.generation
                return .seek(session.start)
            }
            if !buffer.ended && buffer.failure == nil {
                if buffer.space >= SMBInputStream.blockSize {
                    buffer.paused = false
                    buffer.resumeRequested = false
                    return .read
                }
                buffer.paused = true
            }
            buffer.condition.wait()
        }
    }

    /// Appends what a read gave, or records its end or failure, unless a seek or a cancellation came since.
    private func deliver(
        _ session: SMBSession, _ generation: Int, _ result: Result<Int, SystemCallError>,
        _ block: UnsafeMutableRawBufferPointer
    ) {
        let buffer = session.buffer
        buffer.condition.lock()
        defer { buffer.condition.unlock() }
        guard buffer.generation == generation, !buffer.cancelled else { return }
        switch result {
        case .success(0): buffer.ended = true
        case .success(let count): buffer.append(UnsafeRawBufferPointer(rebasing: block[0..<count]))
        case .failure(let error):
            buffer.failure = .plugin(message: error.description, uri: self.url)
            buffer.ended = true
        }
        buffer.condition.broadcast()
    }

    /// Answers the open (with the size) or a seek (`nil`), or their failure (then nothing is read until a seek
    /// asks again), unless a seek or a cancellation came since.
    private func answer(_ session: SMBSession, _ generation: Int, _ response: Result<UInt64?, InputError>) {
        let buffer = session.buffer
        buffer.condition.lock()
        defer { buffer.condition.unlock() }
        guard buffer.generation == generation, !buffer.cancelled else { return }
        if case .failure = response { buffer.ended = true }
        buffer.response = response
        buffer.ready = true
        buffer.condition.broadcast()
    }
}

extension SMBFile: SMBReadableFile {
    /// `smbc_fstat`'s size.
    func fileSize() throws(SystemCallError) -> UInt64 {
        UInt64(max(0, try self.status().size))
    }
}
