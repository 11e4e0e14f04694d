// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Model
import Synchronization

/// Where log lines go: standard error or an appended file. Safe from any thread.
final class LogSink: Sendable {
    private let handle: Mutex<FileHandle>

    /// Logs to standard error.
    init() {
        self.handle = Mutex(FileHandle.standardError)
    }

    /// Logs to `path`, appending; creates the file if needed.
    ///
    /// - Throws: when the file cannot be opened for writing.
    init(path: String) throws {
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
            }
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        self.handle = Mutex(handle)
    }

    /// Writes one line with a timestamp and the level.
    func write(_ level: LogLevel, _ line: String) {
        let stamp = Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: false))
        let text = "\(stamp) \(level.name): \(line)\n"
        self.handle.withLock { try? $0.write(contentsOf: Data(text.utf8)) }
    }
}
