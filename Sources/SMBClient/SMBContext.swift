// SPDX-License-Identifier: GPL-3.0-or-later

import CSMBClient
import Glibc
import Synchronization

/// A failure of libsmbclient: what was tried, and the `errno` it left.
public struct SMBError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What failed, as `mpd` words it ("Failed to open directory").
    public var operation: String
    /// The `errno` value.
    public var code: Int32

    /// Creates an error.
    public init(_ operation: String, code: Int32) {
        self.operation = operation
        self.code = code
    }

    public var description: String { "\(self.operation): \(String(cString: strerror(self.code)))" }
}

/// What `stat` tells of a file on a share.
public struct SMBFileStatus: Sendable, Hashable {
    /// The kind of a file.
    public enum Kind: Sendable, Hashable {
        case regular, directory, other
    }

    /// Regular file, directory, or anything else.
    public var kind: Kind
    /// Size in bytes.
    public var size: Int64
    /// Modification time, seconds since the epoch.
    public var modificationTime: Int64
}

/// One libsmbclient context, as `mpd`'s smbclient storage and input plugins keep one each: anonymous (workgroup
/// `WORKGROUP`, no user, no password), without debug output.
///
/// libsmbclient is not thread-safe, not even across contexts (they share its event and memory pools): every call
/// into it, from any context, holds one process-wide lock, so contexts may be used from any thread. URLs are
/// `smb://server[:port]/share/path`.
public final class SMBContext: Sendable {
    /// The context pointer; used only under `library`.
    private let context: ContextPointer

    /// `SMBCCTX *`, which only this module sees.
    struct ContextPointer: @unchecked Sendable {
        let pointer: UnsafeMutablePointer<SMBCCTX>
    }

    /// The lock every call into libsmbclient holds.
    private static let library = Mutex(())

    /// Creates an anonymous context.
    public init() throws(SMBError) {
        let created: Result<UnsafeMutablePointer<SMBCCTX>, SMBError> = Self.library.withLock { _ in
            guard let fresh = smbc_new_context() else {
                return .failure(SMBError("smbc_new_context() failed", code: errno))
            }
            smbc_setDebug(fresh, 0)
            smbc_setFunctionAuthData(fresh, smbAnonymousAuthentication)
            guard let initialised = smbc_init_context(fresh) else {
                let code = errno
                smbc_free_context(fresh, 1)
                return .failure(SMBError("smbc_init_context() failed", code: code))
            }
            return .success(initialised)
        }
        self.context = ContextPointer(pointer: try created.get())
    }

    deinit {
        Self.library.withLock { _ in _ = smbc_free_context(self.context.pointer, 1) }
    }

    /// The status of the file or directory at `url`.
    public func status(_ url: String) throws(SMBError) -> SMBFileStatus {
        let result: Result<SMBFileStatus, SMBError> = Self.library.withLock { _ in
            let context = self.context
            var st = stat()
            guard let function = smbc_getFunctionStat(context.pointer), function(context.pointer, url, &st) == 0 else {
                return .failure(SMBError("Failed to access file", code: errno))
            }
            return .success(Self.fileStatus(st))
        }
        return try result.get()
    }

    /// The names in the directory at `url`, in the server's order, without `.` and `..`.
    public func names(in url: String) throws(SMBError) -> [String] {
        let result: Result<[String], SMBError> = Self.library.withLock { _ in
            let context = self.context
            guard let open = smbc_getFunctionOpendir(context.pointer),
                let read = smbc_getFunctionReaddir(context.pointer),
                let close = smbc_getFunctionClosedir(context.pointer), let handle = open(context.pointer, url)
            else { return .failure(SMBError("Failed to open directory", code: errno)) }
            defer { _ = close(context.pointer, handle) }
            var names: [String] = []
            while let entry = read(context.pointer, handle) {
                // `name` is the start of a NUL-terminated string that runs past the struct's one-byte array.
                let start = UnsafeRawPointer(entry) + MemoryLayout<smbc_dirent>.offset(of: \.name)!
                let name = String(cString: start.assumingMemoryBound(to: CChar.self))
                if name != "." && name != ".." { names.append(name) }
            }
            return .success(names)
        }
        return try result.get()
    }

    /// Opens the file at `url` for reading.
    public func open(_ url: String) throws(SMBError) -> SMBFile {
        let result: Result<OpaquePointer, SMBError> = Self.library.withLock { _ in
            let context = self.context
            guard let open = smbc_getFunctionOpen(context.pointer), let handle = open(context.pointer, url, O_RDONLY, 0)
            else { return .failure(SMBError("smbc_open() failed", code: errno)) }
            return .success(handle)
        }
        return SMBFile(context: self, handle: try result.get())
    }

    /// Reads up to `buffer.count` bytes of `handle`; 0 at its end.
    func read(_ handle: OpaquePointer, into buffer: UnsafeMutableRawBufferPointer) throws(SMBError) -> Int {
        let result: Result<Int, SMBError> = Self.library.withLock { _ in
            let context = self.context
            guard let read = smbc_getFunctionRead(context.pointer) else {
                return .failure(SMBError("smbc_read() failed", code: ENOSYS))
            }
            let count = read(context.pointer, handle, buffer.baseAddress, buffer.count)
            return count < 0 ? .failure(SMBError("smbc_read() failed", code: errno)) : .success(count)
        }
        return try result.get()
    }

    /// Moves `handle` to `offset` bytes from its start.
    func seek(_ handle: OpaquePointer, to offset: Int64) throws(SMBError) {
        let result: Result<Void, SMBError> = Self.library.withLock { _ in
            let context = self.context
            guard let seek = smbc_getFunctionLseek(context.pointer),
                seek(context.pointer, handle, off_t(offset), SEEK_SET) >= 0
            else { return .failure(SMBError("smbc_lseek() failed", code: errno)) }
            return .success(())
        }
        try result.get()
    }

    /// The status of the open `handle`.
    func status(_ handle: OpaquePointer) throws(SMBError) -> SMBFileStatus {
        let result: Result<SMBFileStatus, SMBError> = Self.library.withLock { _ in
            let context = self.context
            var st = stat()
            guard let function = smbc_getFunctionFstat(context.pointer), function(context.pointer, handle, &st) == 0
            else { return .failure(SMBError("smbc_fstat() failed", code: errno)) }
            return .success(Self.fileStatus(st))
        }
        return try result.get()
    }

    private static func fileStatus(_ st: stat) -> SMBFileStatus {
        let kind: SMBFileStatus.Kind =
            switch st.st_mode & S_IFMT {
            case S_IFREG: .regular
            case S_IFDIR: .directory
            default: .other
            }
        return SMBFileStatus(kind: kind, size: Int64(st.st_size), modificationTime: Int64(st.st_mtim.tv_sec))
    }

    /// Closes `handle`.
    func close(_ handle: OpaquePointer) {
        Self.library.withLock { _ in
            let context = self.context
            if let close = smbc_getFunctionClose(context.pointer) { _ = close(context.pointer, handle) }
        }
    }
}

/// `mpd`'s credentials: workgroup `WORKGROUP`, no user name, no password (an anonymous or guest session).
private func smbAnonymousAuthentication(
    server: UnsafePointer<CChar>?, share: UnsafePointer<CChar>?, workgroup: UnsafeMutablePointer<CChar>?,
    workgroupLength: Int32, user: UnsafeMutablePointer<CChar>?, userLength: Int32,
    password: UnsafeMutablePointer<CChar>?, passwordLength: Int32
) {
    if let workgroup, workgroupLength > 9 { strcpy(workgroup, "WORKGROUP") }
    if let user, userLength > 0 { user[0] = 0 }
    if let password, passwordLength > 0 { password[0] = 0 }
}

/// An open file on a share; closed when released.
public final class SMBFile: @unchecked Sendable {
    private let context: SMBContext
    private let handle: OpaquePointer

    init(context: SMBContext, handle: OpaquePointer) {
        self.context = context
        self.handle = handle
    }

    deinit { self.context.close(self.handle) }

    /// Reads up to `buffer.count` bytes; 0 at the end of the file.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SMBError) -> Int {
        try self.context.read(self.handle, into: buffer)
    }

    /// Moves to `offset` bytes from the start.
    public func seek(to offset: Int64) throws(SMBError) {
        try self.context.seek(self.handle, to: offset)
    }

    /// The open file's status.
    public func status() throws(SMBError) -> SMBFileStatus {
        try self.context.status(self.handle)
    }
}
