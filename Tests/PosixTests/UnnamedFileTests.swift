// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Testing

@testable import Posix

/// Files named only once complete (the recorder output's, as `mpd`'s `FileOutputStream`).
struct UnnamedFileTests {
    private func directory() throws -> String {
        var template = Array("/tmp/fermata-unnamed-XXXXXX".utf8CString)
        let made = try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) })
        return String(cString: made)
    }

    private func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    private func contents(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(descriptor, &buffer, buffer.count)
        return String(decoding: buffer.prefix(max(0, count)), as: UTF8.self)
    }

    @Test func theFileHasNoNameUntilCommittedThenReplacesTheTarget() throws {
        let root = try self.directory()
        let path = root + "/take.wav"
        let old = open(path, O_WRONLY | O_CREAT, 0o644)
        _ = write(old, "old", 3)
        close(old)
        let (descriptor, unnamed) = try UnnamedFile.create(path)
        #expect(unnamed)
        _ = write(descriptor, "new take", 8)
        // The old file is still there, whole; the new one has no name yet.
        #expect(self.contents(path) == "old")
        try UnnamedFile.commit(descriptor, to: path)
        close(descriptor)
        #expect(self.contents(path) == "new take")
        unlink(path)
        rmdir(root)
    }

    @Test func aMissingDirectoryFails() {
        #expect(throws: SystemCallError.self) { try UnnamedFile.create("/nonexistent/fermata/take.wav") }
        #expect(!self.exists("/nonexistent/fermata/take.wav"))
    }
}
