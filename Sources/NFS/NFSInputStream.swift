// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Model

/// A file on an NFS export as an input stream (`mpd`'s nfs input plugin): `nfs://server/export/file`, seekable,
/// with the size the server gives when it is opened. Streams of the same server and export share one connection
/// (``NFSConnectionPool``), so the next song opens without mounting again.
///
/// Every wait on the server ends as soon as the ``InputCancellation`` fires, which leaves the shared connection
/// usable by the other streams. Confined to one thread at a time.
public final class NFSInputStream: InputStream {
    /// The URL it was opened with.
    public let uri: String
    /// The file's size when it was opened.
    public let size: UInt64?
    /// Always `true`.
    public var isSeekable: Bool { true }
    /// Always `nil`: NFS announces no type.
    public var mimeType: String? { nil }
    /// Where the next read starts.
    public private(set) var offset: UInt64 = 0
    private let lease: NFSConnectionLease<NFSConnection>
    private var connection: NFSConnection { self.lease.connection }
    private let waiter: NFSWaiter
    private let handle: OpaquePointer
    private let readMaximum: Int

    /// Whether this plugin opens `url`: the `nfs://` scheme, in any case.
    public static func canOpen(_ url: String) -> Bool { NFSLocation.hasScheme(url) }

    /// Opens the file read-only, on the connection to its export (mounted first when it is new).
    ///
    /// - Throws: `InputError.plugin` with `mpd`'s text (`Malformed nfs:// URI`, `nfs_mount_async() failed: …`,
    ///   libnfs's text for a failed open, `Not a regular file`); `.cancelled` when `cancellation` fires first.
    public init(url: String, cancellation: InputCancellation) throws(InputError) {
        self.uri = url
        do throws(NFSError) {
            let location = try NFSLocation(url)
            self.lease = try NFSConnection.pool.lease(server: location.server, export: location.export)
            self.waiter = NFSWaiter(cancellation: cancellation)
            self.handle = try self.lease.connection.open(location.path, waiter: self.waiter)
            let status: StorageFileStatus
            do throws(NFSError) {
                status = try self.lease.connection.status(self.handle, waiter: self.waiter)
            } catch {
                self.lease.connection.close(self.handle)
                throw error
            }
            guard status.kind == .regular else {
                self.lease.connection.close(self.handle)
                throw .failed("Not a regular file")
            }
            self.size = UInt64(status.size)
            self.readMaximum = max(1, self.lease.connection.readMaximum)
        } catch {
            throw Self.inputError(error, uri: url)
        }
    }

    deinit {
        self.connection.close(self.handle)
    }

    /// Reads at the current offset and moves past what was read; one call to the server.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        guard !buffer.isEmpty, !self.isAtEnd else { return 0 }
        let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer[..<min(buffer.count, self.readMaximum)])
        do throws(NFSError) {
            let count = try self.connection.read(self.handle, at: self.offset, into: chunk, waiter: self.waiter)
            self.offset += UInt64(count)
            return count
        } catch {
            throw Self.inputError(error, uri: self.uri)
        }
    }

    /// Moves to `offset`, which may be at most the size; the next read asks the server there.
    ///
    /// - Throws: `InputError.notSeekable` past the end.
    public func seek(to offset: UInt64) throws(InputError) {
        if let size = self.size, offset > size { throw .notSeekable(uri: self.uri) }
        self.offset = offset
    }

    private static func inputError(_ error: NFSError, uri: String) -> InputError {
        switch error {
        case .failed(let message): .plugin(message: message, uri: uri)
        case .cancelled: .cancelled(uri: uri)
        }
    }
}
