// SPDX-License-Identifier: GPL-3.0-or-later

import CLinux
import Glibc
import RawText

/// What `stat` says about a file system entry.
public struct FileStatus: Sendable, Hashable {
    /// The kind of entry.
    public enum Kind: Sendable, Hashable {
        case regular, directory, symbolicLink, other
    }

    /// The kind.
    public var kind: Kind
    /// Size in bytes.
    public var size: Int64
    /// Modification time, seconds since the epoch.
    public var modificationTime: Int64
    /// Inode number.
    public var inode: UInt64
    /// Device number.
    public var device: UInt64
    /// Permission bits.
    public var mode: UInt32
    /// The owner's user id.
    public var owner: UInt32

    /// Describes `path`, following symbolic links unless `followLinks` is false.
    ///
    /// The corresponding C functions are `stat` and `lstat`.
    public init(path: String, followLinks: Bool = true) throws(SystemCallError) {
        var info = stat()
        try FileSystemCharset.withFilePath(path) { (file) throws(SystemCallError) in
            if followLinks {
                _ = try syscall("stat") { fermata_stat(file, &info) }
            } else {
                _ = try syscall("lstat") { fermata_lstat(file, &info) }
            }
        }
        self.init(info)
    }

    /// Sets the modification time of `path` (followed if it is a symbolic link) to `seconds` since the epoch,
    /// leaving its access time as it is.
    ///
    /// The corresponding C function is `utimensat`.
    public static func setModificationTime(_ seconds: Int64, ofPath path: String) throws(SystemCallError) {
        // UTIME_OMIT (glibc's macro, which Swift does not import): the access time stays.
        let omit = (1 << 30) - 2
        var times = (timespec(tv_sec: 0, tv_nsec: omit), timespec(tv_sec: Int(seconds), tv_nsec: 0))
        try FileSystemCharset.withFilePath(path) { (file) throws(SystemCallError) in
            _ = try withUnsafePointer(to: &times) { pair throws(SystemCallError) in
                try pair.withMemoryRebound(to: timespec.self, capacity: 2) { (times) throws(SystemCallError) in
                    try syscall("utimensat") { utimensat(AT_FDCWD, file, times, 0) }
                }
            }
        }
    }

    init(_ info: stat) {
        switch info.st_mode & S_IFMT {
        case S_IFREG: self.kind = .regular
        case S_IFDIR: self.kind = .directory
        case S_IFLNK: self.kind = .symbolicLink
        default: self.kind = .other
        }
        self.size = Int64(info.st_size)
        self.modificationTime = Int64(info.st_mtim.tv_sec)
        self.inode = UInt64(info.st_ino)
        self.device = UInt64(info.st_dev)
        self.mode = UInt32(info.st_mode)
        self.owner = UInt32(info.st_uid)
    }
}

/// Directory listing and links, named after their C functions.
public enum DirectoryEntries {
    /// The names in a directory, without `.` and `..`, in the order the file system returns them, decoded by
    /// `FileSystemCharset`: converted from `filesystem_charset`, or else names that are not valid UTF-8 keep
    /// their bytes as `RawText` escapes.
    ///
    /// The corresponding C functions are `opendir`, `readdir` and `closedir`.
    public static func names(in path: String) throws(SystemCallError) -> [String] {
        try OpenDirectory(path: path).names()
    }

    /// The names in a directory as `names(in:)` gives them, each with what `fstatat` says about the entry (links
    /// followed unless `followLinks` is false; `nil` when it fails). The entry is described by the bytes the
    /// kernel returned, so a name that `filesystem_charset` cannot convert back (`caf\u{FFFD}.mp3` under
    /// `UTF-8`) still has its status, as `mpd`'s local storage reader gives it.
    ///
    /// The corresponding C functions are `opendir`, `readdir`, `fstatat` and `closedir`.
    public static func statuses(
        in path: String, followLinks: Bool = true
    ) throws(SystemCallError) -> [(name: String, status: FileStatus?)] {
        let directory = try OpenDirectory(path: path)
        var entries: [(name: String, status: FileStatus?)] = []
        directory.forEachEntry { raw, name in
            entries.append((name, directory.status(ofRawName: raw, followLinks: followLinks)))
        }
        return entries
    }

    /// Creates the directory `path` and any missing parents (mode 0777 masked by the umask); an existing
    /// directory is fine, an existing file in the way is not.
    ///
    /// The corresponding C function is `mkdir`.
    /// - Throws: `SystemCallError` from the first `mkdir` that fails, unless it fails with `EEXIST` on a directory.
    public static func makeDirectories(atPath path: String) throws(SystemCallError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component
            let error = FileSystemCharset.withFilePath(prefix) { Glibc.mkdir($0, 0o777) == 0 ? nil : Errno.current }
            if let error, error != .fileExists || (try? FileStatus(path: prefix))?.kind != .directory {
                throw SystemCallError("mkdir", error)
            }
            prefix += "/"
        }
    }

    /// The target of a symbolic link, or `nil` if `path` is not one.
    ///
    /// The corresponding C function is `readlink`.
    public static func readLink(_ path: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { raw in
            FileSystemCharset.withFilePath(path) {
                Glibc.readlink($0, raw.baseAddress!.assumingMemoryBound(to: CChar.self), raw.count)
            }
        }
        guard count >= 0 else { return nil }
        return FileSystemCharset.decode(buffer[0..<count])
    }

    /// The canonical absolute path, with every link resolved.
    ///
    /// The corresponding C function is `realpath`.
    public static func realPath(_ path: String) -> String? {
        guard let resolved = FileSystemCharset.withFilePath(path, { Glibc.realpath($0, nil) }) else { return nil }
        defer { free(resolved) }
        return FileSystemCharset.decode(UnsafeRawBufferPointer(start: resolved, count: strlen(resolved)))
    }
}

/// A directory kept open to list it and describe its entries by name: `fstatat` relative to it resolves only the
/// name, where `stat` of a full path walks every component of it again (most of a library update's time in the
/// kernel when nothing changed).
///
/// Confined to one thread (the `DIR` stream is not thread-safe).
public final class OpenDirectory {
    private let directory: OpaquePointer

    /// Opens `path`.
    ///
    /// The corresponding C function is `opendir`.
    public init(path: String) throws(SystemCallError) {
        guard let directory = FileSystemCharset.withFilePath(path, { opendir($0) }) else {
            throw SystemCallError("opendir", .current)
        }
        self.directory = directory
    }

    /// Opens the entry `name` of the directory `parent` (encoded as `status(of:)` encodes it), itself a directory:
    /// what `init(path:)` opens for the parent's path + "/" + `name`, the kernel resolving `name` alone rather than
    /// every component again.
    ///
    /// The corresponding C functions are `openat` and `fdopendir`.
    ///
    /// - Parameter parent: the descriptor of the parent directory (``descriptor``), open for the call.
    public init(name: String, in parent: Int32) throws(SystemCallError) {
        let parentDescriptor = parent
        let descriptor = try FileSystemCharset.withFilePath(name) { (file) throws(SystemCallError) in
            try syscall("openat") {
                openat(parentDescriptor, file, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_DIRECTORY)
            }
        }
        guard let directory = fdopendir(descriptor) else {
            let error = SystemCallError("fdopendir", .current)
            close(descriptor)
            throw error
        }
        self.directory = directory
    }

    deinit { closedir(self.directory) }

    /// The directory's descriptor, valid while this is open: for ``init(name:in:)`` of its sub-directories, from any
    /// thread (`openat` relative to it; the stream itself stays confined).
    public var descriptor: Int32 { dirfd(self.directory) }

    /// The names in the directory as `DirectoryEntries.names(in:)` gives them. Once per opening.
    ///
    /// The corresponding C function is `readdir`.
    public func names() -> [String] {
        var names: [String] = []
        self.forEachEntry { _, name in names.append(name) }
        return names
    }

    /// Calls `body` with each entry's name as the kernel returned it and decoded by `FileSystemCharset`, without
    /// `.` and `..`. Once per opening.
    ///
    /// The corresponding C function is `readdir`.
    func forEachEntry(_ body: (UnsafePointer<CChar>, String) -> Void) {
        while let entry = readdir(self.directory) {
            // Read the name in place: `readdir` may hand out an entry shorter than `struct dirent` (only
            // `d_reclen` bytes), so copying the whole `d_name` array would read past it.
            let start = UnsafeRawPointer(entry) + MemoryLayout<dirent>.offset(of: \dirent.d_name)!
            let raw = start.assumingMemoryBound(to: CChar.self)
            let bytes = start.assumingMemoryBound(to: UInt8.self)
            // `.` and `..` by their bytes, as mpd skips them, before any name is made.
            if bytes[0] == UInt8(ascii: "."), bytes[1] == 0 || (bytes[1] == UInt8(ascii: ".") && bytes[2] == 0) {
                continue
            }
            body(raw, FileSystemCharset.decode(UnsafeBufferPointer(start: bytes, count: strlen(raw))))
        }
    }

    /// What `fstatat` says about the entry whose name has the bytes `raw` (as `readdir` gave them), or `nil`.
    func status(ofRawName raw: UnsafePointer<CChar>, followLinks: Bool) -> FileStatus? {
        var info = stat()
        let described =
            fermata_fstatat(dirfd(self.directory), raw, &info, followLinks ? 0 : AT_SYMLINK_NOFOLLOW) == 0
        return described ? FileStatus(info) : nil
    }

    /// Describes the entry `name` (encoded as `FileStatus(path:)` encodes a path), following symbolic links unless
    /// `followLinks` is false: what `FileStatus(path:)` says of the directory's path + "/" + `name`.
    ///
    /// The corresponding C function is `fstatat`.
    public func status(of name: String, followLinks: Bool = true) throws(SystemCallError) -> FileStatus {
        var info = stat()
        let fd = dirfd(self.directory)
        try FileSystemCharset.withFilePath(name) { (file) throws(SystemCallError) in
            _ = try syscall("fstatat") { fermata_fstatat(fd, file, &info, followLinks ? 0 : AT_SYMLINK_NOFOLLOW) }
        }
        return FileStatus(info)
    }
}
