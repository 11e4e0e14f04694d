// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

/// Replacing files so that a crash at any moment leaves either the old or the new content, never a mix:
/// a temporary file beside the target is written and synced, renamed over the target, and the directory
/// is synced so the rename itself is durable.
public enum AtomicFile {
    /// Which step of a replacement failed.
    public enum Stage: Sendable, Hashable {
        /// Creating the temporary file.
        case create
        /// Writing or syncing it (a full disk shows here).
        case write
        /// Renaming it over the target or syncing the directory.
        case commit
    }

    /// A failed replacement; the target still holds its previous content.
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// The step that failed.
        public let stage: Stage
        /// The system call's error.
        public let error: SystemCallError

        /// `stage: call: strerror`.
        public var description: String { "\(self.stage): \(self.error)" }
    }

    /// Replaces the file at `path` with `bytes` atomically and durably. The new file gets mode 0666
    /// masked by the umask, as files `mpd` creates do.
    ///
    /// Any thread; blocks until the data is on disk.
    /// - Throws: `Failure`; the temporary file is removed and the target is untouched.
    public static func write(_ bytes: [UInt8], toPath path: String) throws(Failure) {
        let temporary = Self.temporaryPath(for: path)
        let fd: Int32
        do {
            fd = try FileSystemCharset.withFilePath(temporary) { (file) throws(SystemCallError) in
                try syscall("open") { Glibc.open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666) }
            }
        } catch {
            throw Failure(stage: .create, error: error)
        }
        do {
            try FileDescriptor(rawValue: fd).writeAll(bytes)
            _ = try syscall("fsync") { Glibc.fsync(fd) }
        } catch {
            _ = Glibc.close(fd)
            unlinkPath(temporary)
            throw Failure(stage: .write, error: error)
        }
        // A failing close after fsync loses nothing: the data is already on disk.
        _ = Glibc.close(fd)
        do {
            try Self.rename(temporary, to: path)
        } catch {
            unlinkPath(temporary)
            throw Failure(stage: .commit, error: error)
        }
        do {
            try Self.syncDirectory(containing: path)
        } catch {
            throw Failure(stage: .commit, error: error)
        }
    }

    /// Renames `from` to `to`, replacing `to` if it exists.
    ///
    /// The corresponding C function is `rename`.
    /// - Throws: `SystemCallError`.
    public static func rename(_ from: String, to: String) throws(SystemCallError) {
        _ = try FileSystemCharset.withFilePath(from) { (source) throws(SystemCallError) in
            try FileSystemCharset.withFilePath(to) { (target) throws(SystemCallError) in
                try syscall("rename") { Glibc.rename(source, target) }
            }
        }
    }

    /// Syncs the directory holding `path`, so that a rename, creation or removal in it survives a crash.
    ///
    /// The corresponding C functions are `open(O_DIRECTORY)`, `fsync` and `close`.
    /// - Throws: `SystemCallError`.
    public static func syncDirectory(containing path: String) throws(SystemCallError) {
        let directory = Self.directory(of: path)
        let fd = try FileSystemCharset.withFilePath(directory) { (file) throws(SystemCallError) in
            try syscall("open") { Glibc.open(file, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        }
        defer { _ = Glibc.close(fd) }
        _ = try syscall("fsync") { Glibc.fsync(fd) }
    }

    /// `dir/.name.tmp` beside `dir/name`: hidden, and without the target's suffix, so that a crash
    /// mid-write leaves nothing a directory listing mistakes for the file.
    static func temporaryPath(for path: String) -> String {
        let directory = Self.directory(of: path)
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
        return (directory == "/" ? "" : directory) + "/." + name + ".tmp"
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
