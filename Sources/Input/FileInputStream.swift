// SPDX-License-Identifier: GPL-3.0-or-later

import Posix

/// A local file as an input stream (`mpd`'s file input plugin): positional reads, always seekable; closes
/// itself.
///
/// Confined to one thread at a time. Reads never allocate.
public final class FileInputStream: InputStream {
    /// The path it was opened with.
    public let uri: String
    /// The file's size when it was opened.
    public let size: UInt64?
    /// Always `true`.
    public var isSeekable: Bool { true }
    /// Always `nil`: files announce no type.
    public var mimeType: String? { nil }
    /// Where the next read starts.
    public private(set) var offset: UInt64 = 0
    private let descriptor: FileDescriptor
    private let length: UInt64

    /// Opens the regular file at `path` read-only.
    ///
    /// - Throws: `InputError.io` from `open` or `fstat`; `.notAFile` for a directory, device or pipe.
    public init(path: String) throws(InputError) {
        self.uri = path
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.openForReading(path)
        } catch {
            throw .io(error, uri: path)
        }
        let status: FileStatus
        do {
            status = try descriptor.status()
        } catch {
            descriptor.close()
            throw .io(error, uri: path)
        }
        guard status.kind == .regular else {
            descriptor.close()
            throw .notAFile(uri: path)
        }
        self.descriptor = descriptor
        self.length = UInt64(max(0, status.size))
        self.size = self.length
    }

    deinit { self.descriptor.close() }

    /// Reads at the current offset (`pread`) and moves past what was read.
    ///
    /// Does not allocate.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        guard !buffer.isEmpty, self.offset < self.length else { return 0 }
        do {
            let count = try self.descriptor.read(into: buffer, at: Int64(self.offset))
            self.offset += UInt64(count)
            return count
        } catch {
            throw .io(error, uri: self.uri)
        }
    }

    /// Moves to `offset`, which may be at most the size.
    ///
    /// - Throws: `InputError.notSeekable` past the end.
    public func seek(to offset: UInt64) throws(InputError) {
        guard offset <= self.length else { throw .notSeekable(uri: self.uri) }
        self.offset = offset
    }
}
