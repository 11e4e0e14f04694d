// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Input
import Posix
import Testing

@Suite struct InputStreamTests {
    @Test func fileReadsSeeksAndEnds() throws {
        let path = "/tmp/fermata-input-test-\(getpid())"
        try writeFile(Array(0..<200), atPath: path)
        defer { unlinkPath(path) }
        let input = try FileInputStream(path: path)
        #expect(input.size == 200)
        #expect(try input.readBytes(10) == Array(0..<10))
        #expect(input.offset == 10)
        try input.seek(to: 195)
        #expect(try input.readBytes(10) == nil)
        try input.seek(to: 195)
        var tail = [UInt8](repeating: 0, count: 10)
        let count = try tail.withUnsafeMutableBytes { buffer in try input.readFully(into: buffer) }
        #expect(count == 5)
        #expect(Array(tail.prefix(5)) == Array(195..<200))
        #expect(input.isAtEnd)
        #expect(throws: InputError.self) { try input.seek(to: 201) }
    }

    @Test func directoriesAndMissingFilesAreRefused() {
        #expect(throws: InputError.notAFile(uri: "/tmp")) { try FileInputStream(path: "/tmp") }
        #expect(throws: InputError.self) { try FileInputStream(path: "/nonexistent/fermata") }
    }

    /// mpd's `CheapSeeking`: seekable and not HTTP(S) or Qobuz, where each seek is a request. An HTTP stream's
    /// end is not looked for up front; an SMB or NFS stream's is, as a file's.
    @Test func seekableInputsButHTTPOnesSeekCheaply() {
        #expect(MemoryInputStream([1, 2, 3], uri: "/music/a.ogg").isCheapToSeek)
        #expect(MemoryInputStream([1, 2, 3], uri: "smb://host/share/a.ogg").isCheapToSeek)
        #expect(MemoryInputStream([1, 2, 3], uri: "nfs://host/export/a.ogg").isCheapToSeek)
        #expect(!MemoryInputStream([1, 2, 3], uri: "http://host/a.ogg").isCheapToSeek)
        #expect(!MemoryInputStream([1, 2, 3], uri: "HTTP://host/a.ogg").isCheapToSeek)
        #expect(!MemoryInputStream([1, 2, 3], uri: "qobuz://track/1").isCheapToSeek)
        #expect(!RewindInputStream(MemoryInputStream([1, 2, 3], uri: "https://host/a.ogg")).isCheapToSeek)
    }

    @Test func memoryStreamBehavesLikeAFile() throws {
        let input = MemoryInputStream([1, 2, 3, 4])
        #expect(try input.readBytes(3) == [1, 2, 3])
        #expect(try input.readBytes(2) == nil)
        try input.seek(to: 0)
        #expect(try input.readBytes(4) == [1, 2, 3, 4])
        #expect(input.isAtEnd)
    }
}
