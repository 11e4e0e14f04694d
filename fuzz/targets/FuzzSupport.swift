// SPDX-License-Identifier: GPL-3.0-or-later

// Helpers shared by the fuzz targets; compiled into each fuzz binary (see fuzz/build.sh). libFuzzer calls a
// target's entry points on its main thread only, one input at a time.

import Glibc

/// A scratch directory for one fuzzing process, `$TMPDIR/fermata-fuzz-PID` (or under /tmp), removed with
/// everything in it at exit. A process that crashed cannot remove its own, so each new one first removes
/// those of processes that are gone.
enum FuzzScratch {
    static let prefix = "fermata-fuzz-"
    static let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"

    /// The directory, created on first use.
    nonisolated(unsafe) static var directory: String = {  // reason: libFuzzer runs inputs on one thread
        removeAbandoned()
        let path = "\(base)/\(prefix)\(getpid())"
        removeTree(path)
        guard mkdir(path, 0o700) == 0 else { fatalError("cannot create \(path): \(errno)") }
        atexit { FuzzScratch.removeTree(FuzzScratch.directory) }
        return path
    }()

    /// Writes `bytes` to the file `name` in the scratch directory (replacing it) and returns its path.
    static func write(_ bytes: UnsafeRawBufferPointer, to name: String) -> String {
        let path = "\(directory)/\(name)"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { fatalError("cannot create \(path): \(errno)") }
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            guard written > 0 else { fatalError("cannot write \(path): \(errno)") }
            offset += written
        }
        close(fd)
        return path
    }

    private static let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!

    /// The names in the directory at `path`, with whether each is a directory (not following links).
    private static func entries(_ path: String) -> [(name: String, isDirectory: Bool)] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var result: [(name: String, isDirectory: Bool)] = []
        while let entry = readdir(dir) {
            // Read the name in place: the kernel's record may be shorter than `dirent`, so no copy of it.
            let name = String(cString: (UnsafeRawPointer(entry) + nameOffset).assumingMemoryBound(to: CChar.self))
            if name != "." && name != ".." { result.append((name, entry.pointee.d_type == UInt8(DT_DIR))) }
        }
        return result
    }

    /// Removes `path` and everything below it.
    static func removeTree(_ path: String) {
        for entry in entries(path) {
            let child = "\(path)/\(entry.name)"
            if entry.isDirectory { removeTree(child) } else { unlink(child) }
        }
        rmdir(path)
    }

    /// Removes the scratch directories of fuzzing processes that no longer run.
    private static func removeAbandoned() {
        for entry in entries(base) where entry.isDirectory && entry.name.hasPrefix(prefix) {
            guard let pid = pid_t(entry.name.dropFirst(prefix.count)), kill(pid, 0) != 0, errno == ESRCH else { continue }
            removeTree("\(base)/\(entry.name)")
        }
    }
}

/// The input as a buffer (libFuzzer passes a null pointer for the empty input).
func fuzzInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> UnsafeRawBufferPointer {
    guard let data, size > 0 else { return UnsafeRawBufferPointer(start: nil, count: 0) }
    return UnsafeRawBufferPointer(start: data, count: size)
}
