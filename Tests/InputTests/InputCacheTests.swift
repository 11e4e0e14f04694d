// SPDX-License-Identifier: GPL-3.0-or-later

import Dispatch
import Glibc
import Input
import Posix
import Synchronization
import Testing

@Suite struct InputCacheTests {
    /// A directory of its own for each test, removed at the end.
    final class Files {
        let directory: String
        private var paths: [String] = []

        init() throws {
            var template = Array("/tmp/fermata-input-cache-XXXXXX".utf8CString)
            guard let made = mkdtemp(&template) else { throw InputError.notAFile(uri: "mkdtemp") }
            self.directory = String(cString: made)
        }

        deinit {
            for path in self.paths { unlinkPath(path) }
            rmdir(self.directory)
        }

        /// Writes `count` bytes (a pattern seeded by `seed`) to `name`; returns its path and bytes.
        func write(_ name: String, count: Int, seed: UInt8 = 0) throws -> (path: String, bytes: [UInt8]) {
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(seed)) }
            let path = self.directory + "/" + name
            try writeFile(bytes, atPath: path)
            self.paths.append(path)
            return (path, bytes)
        }

        /// Writes a file of `count` bytes for each name.
        func write(_ names: [String], count: Int) throws -> [(path: String, bytes: [UInt8])] {
            try names.map { try self.write($0, count: count) }
        }
    }

    private func readAll(_ input: any InputStream) throws -> [UInt8] {
        try input.readToEnd(limit: 1 << 30)
    }

    @Test func aPrefetchedSongIsReadFromMemory() throws {
        let files = try Files()
        let song = try files.write("a.flac", count: 10_000)
        let cache = InputCache(capacity: 100_000, chunkSize: 1000)
        cache.prefetch(song.path)
        cache.waitUntilIdle()
        #expect(cache.filledBytes(song.path) == 10_000)
        #expect(cache.totalSize == 10_000)
        // The file changes in place (same inode, which the item holds open): the cache still has the old bytes.
        try writeFile([UInt8](repeating: 0xEE, count: 10_000), atPath: song.path)
        let input = try #require(cache.open(song.path))
        #expect(input.isFilled)
        #expect(input.size == 10_000)
        #expect(try self.readAll(input) == song.bytes)
        try input.seek(to: 9_990)
        #expect(try input.readBytes(10) == Array(song.bytes[9_990...]))
        #expect(throws: InputError.self) { try input.seek(to: 10_001) }
    }

    @Test func aPrefetchedSongOutlivesItsFile() throws {
        let files = try Files()
        let song = try files.write("a.ogg", count: 5_000)
        let cache = InputCache(capacity: 100_000)
        cache.prefetch(song.path)
        cache.waitUntilIdle()
        unlinkPath(song.path)
        let input = try #require(cache.open(song.path))
        #expect(try self.readAll(input) == song.bytes)
    }

    @Test func evictsTheLeastRecentlyUsedFirst() throws {
        let files = try Files()
        let songs = try files.write(["a", "b", "c"], count: 400)
        let (a, b, c) = (songs[0], songs[1], songs[2])
        let cache = InputCache(capacity: 1000)
        cache.prefetch(a.path)
        cache.prefetch(b.path)
        cache.waitUntilIdle()
        #expect(cache.paths == [a.path, b.path])
        #expect(cache.contains(a.path))  // a use: a is now the most recent
        #expect(cache.paths == [b.path, a.path])
        cache.prefetch(c.path)
        cache.waitUntilIdle()
        #expect(cache.paths == [a.path, c.path])
        #expect(cache.totalSize == 800)
        #expect(!cache.contains(b.path))
    }

    @Test func neverEvictsAnItemAStreamReads() throws {
        let files = try Files()
        let songs = try files.write(["a", "b", "c", "d"], count: 400)
        let (a, b, c, d) = (songs[0], songs[1], songs[2], songs[3])
        let cache = InputCache(capacity: 1000)
        var reading = cache.open(a.path)
        #expect(reading != nil)
        cache.prefetch(b.path)
        cache.prefetch(c.path)
        cache.waitUntilIdle()
        // a is the oldest but in use: b goes.
        #expect(cache.paths == [a.path, c.path])
        #expect(try self.readAll(try #require(reading)) == a.bytes)
        reading = nil
        cache.prefetch(d.path)
        cache.waitUntilIdle()
        #expect(cache.paths == [c.path, d.path])
    }

    @Test func theTotalStaysWithinTheCapacity() throws {
        let files = try Files()
        let cache = InputCache(capacity: 3000)
        for index in 0..<20 {
            cache.prefetch(try files.write("song\(index)", count: 700 + 37 * index).path)
        }
        cache.waitUntilIdle()
        #expect(cache.totalSize <= 3000)
        #expect(cache.totalSize > 1500)
    }

    @Test func aSongLargerThanHalfTheCacheIsNotCached() throws {
        let files = try Files()
        let half = try files.write("half", count: 500)
        let large = try files.write("large", count: 501)
        let empty = try files.write("empty", count: 0)
        let cache = InputCache(capacity: 1000)
        #expect(cache.open(large.path) == nil)
        cache.prefetch(large.path)
        cache.prefetch(empty.path)
        cache.prefetch(files.directory)
        cache.prefetch("/nonexistent/fermata.flac")
        cache.prefetch("relative/a.flac")
        cache.waitUntilIdle()
        #expect(cache.paths.isEmpty)
        #expect(cache.open(empty.path) == nil)
        #expect(cache.open("/nonexistent/fermata.flac") == nil)
        let input = try #require(cache.open(half.path))
        #expect(try self.readAll(input) == half.bytes)
        #expect(InputCache(capacity: 0).open(half.path) == nil)
    }

    @Test func aStreamOpenedWhileTheItemFillsReadsTheWholeFile() throws {
        let files = try Files()
        let song = try files.write("a.wav", count: 1000, seed: 3)
        let reached = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        let cache = InputCache(capacity: 10_000, chunkSize: 100) { _, filled in
            if filled == 100 {
                reached.signal()
                gate.wait()
            }
        }
        // However the test ends, the filler is let go before the cache joins its thread.
        defer { gate.signal() }
        let input = try #require(cache.open(song.path))
        reached.wait()
        // The filler holds after its first chunk: 100 bytes from memory, the rest from the file.
        #expect(cache.filledBytes(song.path) == 100)
        #expect(!input.isFilled)
        // A second stream shares the item.
        let second = try #require(cache.open(song.path))
        #expect(cache.totalSize == 1000)
        #expect(try self.readAll(input) == song.bytes)
        gate.signal()
        cache.waitUntilIdle()
        #expect(input.isFilled)
        #expect(try self.readAll(second) == song.bytes)
        try input.seek(to: 0)
        #expect(try self.readAll(input) == song.bytes)
    }

    @Test func concurrentOpensShareOneItem() throws {
        let files = try Files()
        let song = try files.write("a.mp3", count: 50_000, seed: 9)
        let cache = InputCache(capacity: 1_000_000, chunkSize: 4096)
        let results = Results()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let bytes = cache.open(song.path).flatMap { try? $0.readToEnd(limit: 1 << 20) }
            results.append(bytes == song.bytes)
        }
        cache.waitUntilIdle()
        #expect(results.values == [Bool](repeating: true, count: 8))
        #expect(cache.paths == [song.path])
        #expect(cache.totalSize == 50_000)
    }

    @Test func flushDropsWhatNoStreamReads() throws {
        let files = try Files()
        let a = try files.write("a", count: 100)
        let b = try files.write("b", count: 100)
        let cache = InputCache(capacity: 1000)
        let reading = try #require(cache.open(a.path))
        cache.prefetch(b.path)
        cache.waitUntilIdle()
        cache.flush()
        #expect(cache.paths == [a.path])
        #expect(try self.readAll(reading) == a.bytes)
    }
}

/// Results gathered from several threads.
private final class Results: Sendable {
    private let stored = Mutex<[Bool]>([])

    func append(_ value: Bool) { self.stored.withLock { $0.append(value) } }

    var values: [Bool] { self.stored.withLock { $0 } }
}
