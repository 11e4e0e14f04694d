// SPDX-License-Identifier: GPL-3.0-or-later

import Library
import Model
import Posix
import RawText
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Reads `.mp3` files whose content is `Tag=value` lines; anything else throws. Counts reads.
public final class FakeReader: SongInfoReader {
    public init() {}

    /// How many files were read.
    public let reads = Atomic<Int>(0)
    /// How many times an update said it had read everything, and how many files had been read by then.
    public let finishedReading = Atomic<Int>(0)
    public let readsWhenFinished = Atomic<Int>(-1)
    /// How many updates read every file again (``startRereading()``: a `rescan`).
    public let rereadings = Atomic<Int>(0)

    public func startRereading() -> any SongInfoReader {
        self.rereadings.add(1, ordering: .relaxed)
        return self
    }

    public func readingFinished() {
        self.finishedReading.add(1, ordering: .relaxed)
        self.readsWhenFinished.store(self.reads.load(ordering: .relaxed), ordering: .relaxed)
    }

    public func supports(suffix: String) -> Bool { suffix.lowercased() == "mp3" }

    /// No streams: fake songs are local files.
    public func readInfo(uri: String) throws -> SongInfo { throw FakeReaderError.notAFakeSong }

    public func readInfo(path: String) throws -> SongInfo {
        self.reads.add(1, ordering: .relaxed)
        // Through Posix, so paths holding `RawText` escapes (names that are not UTF-8) open too.
        guard let bytes = try? readFile(atPath: path), case let text = String(decoding: bytes, as: UTF8.self),
            text.hasPrefix("#fake")
        else {
            throw FakeReaderError.notAFakeSong
        }
        var info = SongInfo(durationMilliseconds: 1044)
        for line in text.split(separator: "\n").dropFirst() {
            let parts = line.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let type = TagType(parsing: parts[0]) else { continue }
            info.tags.append(TagItem(type, String(parts[1])))
        }
        return info
    }
}

/// What `FakeReader` throws for a file that is not a fake song.
public enum FakeReaderError: Error { case notAFakeSong }

/// A fresh temporary music directory, removed at the end.
///
/// Plain Glibc rather than Foundation: a module importing Foundation and Library (through which ICU's C
/// headers arrive) fails to build with `'UErrorCode' has different definitions in different modules`.
public final class MusicDirectory {
    public let path: String

    public init() throws {
        let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array((base + "/fermata-library-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw Errno.current
        }
        self.path = String(cString: made)
    }

    deinit { Self.removeTree(self.path) }

    /// Writes a fake song at `relative` (parent directories made as needed), its modification time set to
    /// `mtime` seconds since the epoch when given.
    public func song(_ relative: String, _ tags: [String: String] = [:], mtime: Int? = nil) throws {
        let path = self.path + "/" + relative
        try Self.makeParents(of: path)
        let body = (["#fake"] + tags.sorted(by: { $0.key < $1.key }).map { "\($0)=\($1)" }).joined(separator: "\n")
        try writeFile(Array(body.utf8), atPath: path)
        if let mtime {
            var times = [timespec(tv_sec: mtime, tv_nsec: 0), timespec(tv_sec: mtime, tv_nsec: 0)]
            guard utimensat(AT_FDCWD, path, &times, 0) == 0 else { throw Errno.current }
        }
    }

    private static func makeParents(of path: String) throws {
        var prefix = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true).dropLast() {
            prefix += "/" + component
            guard mkdir(prefix, 0o755) == 0 || errno == EEXIST else { throw Errno.current }
        }
    }

    /// Removes `path` and everything under it, without following symbolic links.
    private static func removeTree(_ path: String) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            _ = unlink(path)
            return
        }
        if let directory = opendir(path) {
            var names: [String] = []
            while let entry = readdir(directory) {
                let name = withUnsafePointer(to: &entry.pointee.d_name) {
                    $0.withMemoryRebound(to: CChar.self, capacity: 1) { String(cString: $0) }
                }
                if name != "." && name != ".." { names.append(name) }
            }
            closedir(directory)
            for name in names { Self.removeTree(path + "/" + name) }
        }
        _ = rmdir(path)
    }
}
