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
/// opens the file with a context of its own, then reads blocks into the stream's buffer while there is room,
/// and moves to where a seek asks. It is the only user of its context and file, and frees both when it ends:
/// when the stream is cancelled or released (noticed after the call into libsmbclient under way returns).
///
/// `@unchecked Sendable`: ``start`` is guarded by the buffer's mutex; the rest is immutable.
final class SMBReader: @unchecked Sendable {
    let url: String
    let buffer: SMBStreamBuffer
    /// Where the current generation's reading starts (a seek's offset). Guarded by the buffer's mutex.
    var start: UInt64 = 0
    private let generation: Int
    private let openFile: @Sendable (String) throws(SystemCallError) -> any SMBReadableFile

    init(
        url: String, buffer: SMBStreamBuffer, generation: Int,
        openFile: @escaping @Sendable (String) throws(SystemCallError) -> any SMBReadableFile
    ) {
        self.url = url
        self.buffer = buffer
        self.generation = generation
        self.openFile = openFile
    }

    /// `mpd`'s `input_smbclient_open`: a new context, `smbc_open`, `smbc_fstat`.
    static func openFile(_ url: String) throws(SystemCallError) -> any SMBReadableFile {
        try SMBContext().open(url)
    }

    /// The thread's body: opens, then reads and seeks until the stream is cancelled or released.
    func run() {
        let file: any SMBReadableFile
        let size: UInt64
        do {
            file = try self.openFile(self.url)
            size = try file.fileSize()
        } catch {
            self.answer(self.generation, failure: error)
            return
        }
        self.answer(self.generation, size: size)
        let block = UnsafeMutableRawBufferPointer.allocate(byteCount: SMBInputStream.blockSize, alignment: 16)
        defer { block.deallocate() }
        var generation = self.generation
        while true {
            guard let next = self.nextTask(&generation) else { return }
            switch next {
            case .seek(let offset):
                do {
                    try file.seek(to: Int64(offset))
                    self.answer(generation, size: nil)
                } catch {
                    self.answer(generation, failure: error)
                }
            case .read:
                let result: Result<Int, SystemCallError>
                do throws(SystemCallError) {
                    result = .success(try file.read(into: block))
                } catch {
                    result = .failure(error)
                }
                self.deliver(generation, result, block)
            }
        }
    }

    private enum Task {
        case seek(UInt64)
        case read
    }

    /// Waits for something to do: a seek (a new generation), or a read once the buffer has room for a block;
    /// `nil` once the stream is cancelled.
    private func nextTask(_ generation: inout Int) -> Task? {
        let buffer = self.buffer
        buffer.condition.lock()
        defer { buffer.condition.unlock() }
        while true {
            if buffer.cancelled { return nil }
            if buffer.generation != generation {
                generation = buffer.generation
                return .seek(self.start)
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
        _ generation: Int, _ result: Result<Int, SystemCallError>, _ block: UnsafeMutableRawBufferPointer
    ) {
        let buffer = self.buffer
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

    /// Answers the open or a seek: ready, with the size or a failure.
    private func answer(_ generation: Int, size: UInt64?) {
        self.answer(generation, .success(size))
    }

    /// Answers with a failure: nothing is read until a seek asks again.
    private func answer(_ generation: Int, failure: SystemCallError) {
        self.answer(generation, .failure(.plugin(message: failure.description, uri: self.url)))
    }

    private func answer(_ generation: Int, _ response: Result<UInt64?, InputError>) {
        self.buffer.condition.lock()
        defer { self.buffer.condition.unlock() }
        guard self.buffer.generation == generation else { return }
        if case .failure = response { self.buffer.ended = true }
        self.buffer.response = response
        self.buffer.ready = true
        self.buffer.condition.broadcast()
    }
}

extension SMBFile: SMBReadableFile {
    /// `smbc_fstat`'s size.
    func fileSize() throws(SystemCallError) -> UInt64 {
        UInt64(max(0, try self.status().size))
    }
}
