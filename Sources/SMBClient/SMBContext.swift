// SPDX-License-Identifier: GPL-3.0-or-later

import CSMBClient
import DynamicLibrary
import Glibc
import Model
import Posix
import Synchronization

/// libsmbclient, loaded by the first SMB context and kept loaded.
///
/// The `fermata` binary does not link libsmbclient: its ~80 Samba libraries cost every server ~7 MiB of
/// resident memory at start-up, used only by `smb://` storage and inputs. The first `SMBContext` opens it
/// (`dlopen`) and resolves every function the wrapper calls into a table. It is never closed: libsmbclient
/// keeps process-wide state beyond its contexts (Samba's talloc stack, its configuration, the client's
/// connection cache), which `dlclose` would leave dangling or leak on every reload.
///
/// When it cannot be loaded (not installed, a missing function), every context fails to be made and the
/// reason is reported once, on stderr.
public final class SMBLibrary: Sendable {
    /// The process's library: Debian's soname, `libsmbclient.so.0`.
    public static let shared = SMBLibrary(soname: SMBLibrary.headerSoname)

    /// The soname Debian's development package links.
    public static let headerSoname = FERMATA_SMBCLIENT_SONAME

    private let library: DynamicLibraries<fermata_smbclient_functions>

    /// The library loaded from `soname` (any name or path `dlopen` takes) on first use.
    ///
    /// - Parameter reportFailure: Told once why the library cannot be loaded (stderr by default).
    public init(soname: String, reportFailure: (@Sendable (String) -> Void)? = nil) {
        self.library = DynamicLibraries(
            names: [soname], what: soname, prefix: "smbclient: smb:// unavailable: ",
            fill: { table, handles in fermata_smbclient_resolve(table, handles[0]) }, reportFailure: reportFailure)
    }

    /// Whether the library is loaded now.
    public var isLoaded: Bool { self.library.isLoaded }
    /// How many contexts use it now.
    public var users: Int { self.library.users }
    /// How many times it was loaded.
    public var loadCount: Int { self.library.loadCount }

    fileprivate func acquire() throws(DynamicLibraryError) -> fermata_smbclient_functions {
        try self.library.acquire()
    }

    fileprivate func release() { self.library.release() }
}

/// One libsmbclient context, as `mpd`'s smbclient storage and input plugins keep one each: anonymous (workgroup
/// `WORKGROUP`, no user, no password), without debug output.
///
/// libsmbclient is not thread-safe, not even across contexts: every call pushes a frame on Samba's talloc
/// stack, which is one process-wide stack unless `smbc_thread_posix()` installed per-thread ones, and Debian's
/// libsmbclient (4.17) does not export that function. Two calls at once on different threads would free each
/// other's frames (four threads reading through contexts of their own, locked as `mpd` locks them, only while
/// creating and freeing contexts, crash within seconds: talloc's "Freed frame" errors, then SIGSEGV). So every
/// call into it, from any context, holds one process-wide lock, and contexts may be used from any thread.
/// No thread that must answer promptly waits on that lock: ``SMBInputStream``'s reads happen on a helper thread
/// of its own, and its reader waits on its buffer, which a cancellation wakes. URLs are
/// `smb://server[:port]/share/path`.
public final class SMBContext: Sendable {
    /// The context pointer; used only under `library`.
    private let context: ContextPointer

    /// `SMBCCTX *`, which only this module sees.
    struct ContextPointer: @unchecked Sendable {
        let pointer: UnsafeMutablePointer<SMBCCTX>
    }

    /// The lock every call into libsmbclient holds.
    private static let lock = Mutex(())
    /// The library's functions, and the library this context holds one use of.
    private let smb: fermata_smbclient_functions
    private let library: SMBLibrary

    /// Creates an anonymous context, loading libsmbclient first if it is the first context.
    ///
    /// - Throws: `SystemCallError` "smbc_new_context() failed" (`ELIBACC` when the library cannot be loaded,
    ///   the reason reported once by `library`), or "smbc_init_context() failed".
    public init(library: SMBLibrary = .shared) throws(SystemCallError) {
        let smb: fermata_smbclient_functions
        do {
            smb = try library.acquire()
        } catch {
            throw SystemCallError("smbc_new_context() failed", Errno(rawValue: ELIBACC))
        }
        let created: Result<UnsafeMutablePointer<SMBCCTX>, SystemCallError> = Self.lock.withLock { _ in
            guard let fresh = smb.smbc_new_context() else {
                return .failure(SystemCallError("smbc_new_context() failed", Errno(rawValue: errno)))
            }
            smb.smbc_setDebug(fresh, 0)
            smb.smbc_setFunctionAuthData(fresh, smbAnonymousAuthentication)
            guard let initialised = smb.smbc_init_context(fresh) else {
                let code = errno
                _ = smb.smbc_free_context(fresh, 1)
                return .failure(SystemCallError("smbc_init_context() failed", Errno(rawValue: code)))
            }
            return .success(initialised)
        }
        switch created {
        case .success(let pointer):
            self.context = ContextPointer(pointer: pointer)
            self.smb = smb
            self.library = library
        case .failure(let error):
            library.release()
            throw error
        }
    }

    deinit {
        let smb = self.smb
        Self.lock.withLock { _ in _ = smb.smbc_free_context(self.context.pointer, 1) }
        self.library.release()
    }

    /// The status of the file or directory at `url`.
    public func status(_ url: String) throws(SystemCallError) -> StorageFileStatus {
        let result: Result<StorageFileStatus, SystemCallError> = Self.lock.withLock { _ in
            let context = self.context
            var st = stat()
            guard let function = self.smb.smbc_getFunctionStat(context.pointer),
                function(context.pointer, url, &st) == 0
            else {
                return .failure(SystemCallError("Failed to access file", Errno(rawValue: errno)))
            }
            return .success(Self.fileStatus(st))
        }
        return try result.get()
    }

    /// The names in the directory at `url`, in the server's order, without `.` and `..`.
    public func names(in url: String) throws(SystemCallError) -> [String] {
        do throws(Errno) {
            return try self.entries(of: url) { entry in
                // `name` is the start of a NUL-terminated string that runs past the struct's one-byte array.
                let start = UnsafeRawPointer(entry) + MemoryLayout<smbc_dirent>.offset(of: \.name)!
                let name = String(cString: start.assumingMemoryBound(to: CChar.self))
                return name != "." && name != ".." ? name : nil
            }
        } catch {
            throw SystemCallError("Failed to open directory", error)
        }
    }

    /// An entry of a browse listing (`smb://`, `smb://WORKGROUP`): a workgroup, a server, or another kind.
    public struct BrowseEntry: Sendable, Equatable {
        public enum Kind: Sendable, Equatable { case workgroup, server, other }
        public var kind: Kind
        public var name: String
        public var comment: String

        public init(kind: Kind, name: String, comment: String) {
            (self.kind, self.name, self.comment) = (kind, name, comment)
        }
    }

    /// The entries of `url`, a browse listing, in the server's order; throws the `errno` of a failed
    /// `smbc_opendir`.
    public func browse(_ url: String) throws(Errno) -> [BrowseEntry] {
        try self.entries(of: url) { entry in
            let start = UnsafeRawPointer(entry) + MemoryLayout<smbc_dirent>.offset(of: \.name)!
            let name = Self.text(start.assumingMemoryBound(to: UInt8.self), count: Int(entry.pointee.namelen))
            let comment =
                entry.pointee.comment.map {
                    Self.text(
                        UnsafeRawPointer($0).assumingMemoryBound(to: UInt8.self), count: Int(entry.pointee.commentlen))
                } ?? ""
            let kind: BrowseEntry.Kind =
                switch entry.pointee.smbc_type {
                case UInt32(SMBC_WORKGROUP): .workgroup
                case UInt32(SMBC_SERVER): .server
                default: .other
                }
            return BrowseEntry(kind: kind, name: name, comment: comment)
        }
    }

    /// What `read` makes of each entry of the directory at `url` (`nil`: left out), in the server's order; throws
    /// the `errno` of a failed `smbc_opendir`.
    private func entries<Entry>(of url: String, _ read: (UnsafeMutablePointer<smbc_dirent>) -> Entry?) throws(Errno)
        -> [Entry]
    {
        let result: Result<[Entry], Errno> = Self.lock.withLock { _ in
            let context = self.context
            guard let open = self.smb.smbc_getFunctionOpendir(context.pointer),
                let next = self.smb.smbc_getFunctionReaddir(context.pointer),
                let close = self.smb.smbc_getFunctionClosedir(context.pointer), let handle = open(context.pointer, url)
            else { return .failure(Errno(rawValue: errno)) }
            defer { _ = close(context.pointer, handle) }
            var entries: [Entry] = []
            while let entry = next(context.pointer, handle) {
                if let made = read(entry) { entries.append(made) }
            }
            return .success(entries)
        }
        return try result.get()
    }

    /// `count` bytes at `start`, up to a NUL if one comes first.
    private static func text(_ start: UnsafePointer<UInt8>, count: Int) -> String {
        let bytes = UnsafeBufferPointer(start: start, count: count)
        return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
    }

    /// Opens the file at `url` for reading.
    public func open(_ url: String) throws(SystemCallError) -> SMBFile {
        let result: Result<OpaquePointer, SystemCallError> = Self.lock.withLock { _ in
            let context = self.context
            guard let open = self.smb.smbc_getFunctionOpen(context.pointer),
                let handle = open(context.pointer, url, O_RDONLY, 0)
            else { return .failure(SystemCallError("smbc_open() failed", Errno(rawValue: errno))) }
            return .success(handle)
        }
        return SMBFile(context: self, handle: try result.get())
    }

    /// Reads up to `buffer.count` bytes of `handle`; 0 at its end.
    func read(_ handle: OpaquePointer, into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> Int {
        let result: Result<Int, SystemCallError> = Self.lock.withLock { _ in
            let context = self.context
            guard let read = self.smb.smbc_getFunctionRead(context.pointer) else {
                return .failure(SystemCallError("smbc_read() failed", Errno(rawValue: ENOSYS)))
            }
            let count = read(context.pointer, handle, buffer.baseAddress, buffer.count)
            return count < 0 ? .failure(SystemCallError("smbc_read() failed", Errno(rawValue: errno))) : .success(count)
        }
        return try result.get()
    }

    /// Moves `handle` to `offset` bytes from its start.
    func seek(_ handle: OpaquePointer, to offset: Int64) throws(SystemCallError) {
        let result: Result<Void, SystemCallError> = Self.lock.withLock { _ in
            let context = self.context
            guard let seek = self.smb.smbc_getFunctionLseek(context.pointer),
                seek(context.pointer, handle, off_t(offset), SEEK_SET) >= 0
            else { return .failure(SystemCallError("smbc_lseek() failed", Errno(rawValue: errno))) }
            return .success(())
        }
        try result.get()
    }

    /// The status of the open `handle`.
    func status(_ handle: OpaquePointer) throws(SystemCallError) -> StorageFileStatus {
        let result: Result<StorageFileStatus, SystemCallError> = Self.lock.withLock { _ in
            let context = self.context
            var st = stat()
            guard let function = self.smb.smbc_getFunctionFstat(context.pointer),
                function(context.pointer, handle, &st) == 0
            else { return .failure(SystemCallError("smbc_fstat() failed", Errno(rawValue: errno))) }
            return .success(Self.fileStatus(st))
        }
        return try result.get()
    }

    private static func fileStatus(_ st: stat) -> StorageFileStatus {
        let kind: StorageFileStatus.Kind =
            switch st.st_mode & S_IFMT {
            case S_IFREG: .regular
            case S_IFDIR: .directory
            default: .other
            }
        return StorageFileStatus(kind: kind, size: Int64(st.st_size), modificationTime: Int64(st.st_mtim.tv_sec))
    }

    /// Closes `handle`.
    func close(_ handle: OpaquePointer) {
        Self.lock.withLock { _ in
            let context = self.context
            if let close = self.smb.smbc_getFunctionClose(context.pointer) { _ = close(context.pointer, handle) }
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
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> Int {
        try self.context.read(self.handle, into: buffer)
    }

    /// Moves to `offset` bytes from the start.
    public func seek(to offset: Int64) throws(SystemCallError) {
        try self.context.seek(self.handle, to: offset)
    }

    /// The open file's status.
    public func status() throws(SystemCallError) -> StorageFileStatus {
        try self.context.status(self.handle)
    }
}
