// SPDX-License-Identifier: GPL-3.0-or-later

import CLinux
import Glibc

/// A file written unnamed and given its name when complete, as `mpd`'s output files (`FileOutputStream`): an
/// `O_TMPFILE` file in the target's directory, linked in over the target by ``commit(_:to:)``; where the file
/// system has no unnamed files, the target itself, created or truncated. Mode 0666 masked by the umask.
public enum UnnamedFile {
    /// Opens the file for writing.
    ///
    /// The corresponding C functions are `open(O_TMPFILE)` and `open(O_CREAT | O_TRUNC)`.
    /// - Returns: the descriptor, and whether it is unnamed (then ``commit(_:to:)`` names it).
    /// - Throws: `SystemCallError` when neither can be created.
    public static func create(_ path: String) throws(SystemCallError) -> (descriptor: Int32, unnamed: Bool) {
        let directory = AtomicFile.directory(of: path)
        let unnamed = try? FileSystemCharset.withFilePath(directory) { (file) throws(SystemCallError) in
            try syscall("open") { fermata_open_tmpfile(file, O_WRONLY | O_CLOEXEC, 0o666) }
        }
        if let unnamed { return (unnamed, true) }
        let named = try FileSystemCharset.withFilePath(path) { (file) throws(SystemCallError) in
            try syscall("open") { Glibc.open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666) }
        }
        return (named, false)
    }

    /// Names an unnamed file `path`, replacing what was there.
    ///
    /// The corresponding C functions are `unlink` and `linkat(AT_SYMLINK_FOLLOW)` on `/proc/self/fd/N`.
    /// - Throws: `SystemCallError` from `linkat`.
    public static func commit(_ descriptor: Int32, to path: String) throws(SystemCallError) {
        _ = try FileSystemCharset.withFilePath(path) { (target) throws(SystemCallError) in
            _ = Glibc.unlink(target)
            return try syscall("linkat") {
                Glibc.linkat(AT_FDCWD, "/proc/self/fd/\(descriptor)", AT_FDCWD, target, AT_SYMLINK_FOLLOW)
            }
        }
    }
}
