// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Posix

/// A file on an SMB share as an input stream (`mpd`'s smbclient input plugin): `smb://server[:port]/share/path`,
/// seekable, with the size the server gives when it is opened.
///
/// Each stream has a libsmbclient context of its own, as in `mpd`, so its lock is never contended; a read waits
/// on the network as an HTTP stream's does. Confined to one thread at a time.
public final class SMBInputStream: InputStream {
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
    private let file: SMBFile

    /// Whether this plugin opens `url`: the `smb://` scheme, in any case.
    public static func canOpen(_ url: String) -> Bool {
        url.utf8.count > 6 && url.prefix(6).lowercased() == "smb://"
    }

    /// Opens the file at `url` read-only.
    ///
    /// - Throws: `InputError.io` naming libsmbclient's call (`smbc_open`, `smbc_fstat`) and its `errno`;
    ///   `.notAFile` for a directory.
    public init(url: String) throws(InputError) {
        self.uri = url
        do {
            let context = try SMBContext()
            self.file = try context.open(url)
            let status = try self.file.status()
            guard status.kind == .regular else { throw InputError.notAFile(uri: url) }
            self.size = UInt64(max(0, status.size))
        } catch let error as SMBError {
            throw .io(SystemCallError(error.operation, Errno(rawValue: error.code)), uri: url)
        } catch let error as InputError {
            throw error
        } catch {
            throw .notAFile(uri: url)
        }
    }

    /// Reads at the current offset and moves past what was read.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        guard !buffer.isEmpty else { return 0 }
        do {
            let count = try self.file.read(into: buffer)
            self.offset += UInt64(count)
            return count
        } catch {
            throw .io(SystemCallError(error.operation, Errno(rawValue: error.code)), uri: self.uri)
        }
    }

    /// Moves to `offset`, which may be at most the size.
    ///
    /// - Throws: `InputError.notSeekable` past the end; `.io` when the server refuses.
    public func seek(to offset: UInt64) throws(InputError) {
        if let size = self.size, offset > size { throw .notSeekable(uri: self.uri) }
        do {
            try self.file.seek(to: Int64(offset))
        } catch {
            throw .io(SystemCallError(error.operation, Errno(rawValue: error.code)), uri: self.uri)
        }
        self.offset = offset
    }
}
