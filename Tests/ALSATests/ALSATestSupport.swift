// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Glibc
import Model
import Synchronization

@testable import ALSA

/// One logger for the whole test target: alsa-lib's error handler is process-wide, so every test shares it.
enum ALSATestLog {
    static let lines = Mutex<[String]>([])

    /// The logger every test gives alsa-lib (and the plugin, which installs it too).
    static let logger = Logger(label: "alsa", threshold: .debug) { _, line in
        ALSATestLog.lines.withLock { $0.append(line) }
    }

    static let installed: Void = ALSALog.install(Self.logger)

    /// Installs the handler (once) and returns how many lines were logged so far.
    static func start() -> Int {
        _ = Self.installed
        return Self.lines.withLock { $0.count }
    }

    /// Lines logged since `mark`.
    static func lines(since mark: Int) -> [String] { Self.lines.withLock { Array($0[mark...]) } }
}

/// A fresh temporary directory, removed by `remove()`.
struct ScratchDirectory {
    let path: String

    init() throws {
        self.path = FileManager.default.temporaryDirectory.appendingPathComponent("fermata-alsa-\(UUID())").path
        try FileManager.default.createDirectory(atPath: self.path, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(atPath: self.path) }

    func file(_ name: String) -> String { "\(self.path)/\(name)" }
}

/// Held while standard error is redirected, so that two suites never redirect it at once.
let standardErrorRedirection = Mutex<Void>(())

/// Runs `body` with file descriptor 2 pointed at a temporary file and returns what was written to it (including
/// whatever the test runner printed meanwhile: look for specific text, not for silence).
func capturingStandardError(_ body: () throws -> Void) rethrows -> String {
    try standardErrorRedirection.withLock { _ in try redirectingStandardError(body) }
}

private func redirectingStandardError(_ body: () throws -> Void) rethrows -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("fermata-stderr-\(UUID())").path
    let capture = open(path, O_CREAT | O_RDWR | O_TRUNC, 0o600)
    precondition(capture >= 0)
    let saved = dup(2)
    fflush(nil)
    dup2(capture, 2)
    defer {
        fflush(nil)
        dup2(saved, 2)
        close(saved)
        close(capture)
        unlink(path)
    }
    try body()
    fflush(nil)
    return (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
}

/// Interleaved 16-bit stereo test signal: a different, recognisable value in every sample.
func rampSamples(frames: Int) -> [Int16] {
    (0..<frames * 2).map { Int16(truncatingIfNeeded: $0 &* 7919 &+ ($0 & 1) &* 1000) }
}

/// Plays all of `bytes` through `output`, as an output thread does.
func playAll(_ output: ALSAOutput, _ bytes: [UInt8]) throws {
    try bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let consumed = try output.play(UnsafeRawBufferPointer(rebasing: buffer[offset...]))
            offset += consumed
        }
    }
}
