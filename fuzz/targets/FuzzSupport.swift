// SPDX-License-Identifier: GPL-3.0-or-later

// Helpers shared by the fuzz targets; compiled into each fuzz binary (see fuzz/build.sh). libFuzzer calls a
// target's entry points on its main thread only, one input at a time.

import Glibc

/// A scratch directory for one fuzzing process, under `$TMPDIR` (or /tmp), removed with its files at exit.
enum FuzzScratch {
    /// The directory, created on first use.
    nonisolated(unsafe) static var directory: String = {  // reason: libFuzzer runs inputs on one thread
        let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array("\(base)/fermata-fuzz-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { fatalError("mkdtemp failed: \(errno)") }
        let path = String(cString: made)
        atexit { FuzzScratch.removeAll() }
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

    /// Removes the scratch directory and the plain files in it.
    static func removeAll() {
        guard let dir = opendir(directory) else { return }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if name != "." && name != ".." { unlink("\(directory)/\(name)") }
        }
        closedir(dir)
        rmdir(directory)
    }
}

/// The input as a buffer (libFuzzer passes a null pointer for the empty input).
func fuzzInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> UnsafeRawBufferPointer {
    guard let data, size > 0 else { return UnsafeRawBufferPointer(start: nil, count: 0) }
    return UnsafeRawBufferPointer(start: data, count: size)
}
