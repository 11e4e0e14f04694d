// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Glibc
import Model
import Synchronization

/// Where log lines go: standard error, an appended file (reopened on SIGHUP, for logrotate), or syslog.
/// Safe from any thread.
final class LogSink: Sendable {
    private enum Target {
        case standardError
        case file(path: String, handle: FileHandle)
        case syslog
    }

    private let target: Mutex<Target>

    /// Logs to standard error.
    init() {
        self.target = Mutex(.standardError)
    }

    /// Logs to `path`, appending; creates the file if needed.
    ///
    /// - Throws: when the file cannot be opened for writing.
    init(path: String) throws {
        self.target = Mutex(.file(path: path, handle: try Self.open(path)))
    }

    /// Logs to the system log (`log_file "syslog"`), as `mpd`, with its identity `fermata`.
    static func syslog() -> LogSink {
        // openlog keeps the pointer: the identity must live as long as the process; a literal does.
        openlog("fermata", LOG_PID, LOG_DAEMON)
        let sink = LogSink()
        sink.target.withLock { $0 = .syslog }
        return sink
    }

    private static func open(_ path: String) throws -> FileHandle {
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil) else {
                throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
            }
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        return handle
    }

    /// Reopens the log file (after logrotate moved it away); nothing for standard error and syslog.
    ///
    /// - Throws: when the file cannot be opened again; the old one stays in use.
    func reopen() throws {
        try self.target.withLock { target in
            guard case .file(let path, let old) = target else { return }
            let handle = try Self.open(path)
            try? old.close()
            target = .file(path: path, handle: handle)
        }
    }

    /// Writes one line with a timestamp and the level (syslog adds its own time stamp and takes the level
    /// as the priority).
    func write(_ level: LogLevel, _ line: String) {
        self.target.withLock { target in
            switch target {
            case .syslog:
                let priority: Int32 =
                    switch level {
                    case .error: LOG_ERR
                    case .warning: LOG_WARNING
                    case .notice: LOG_NOTICE
                    case .info: LOG_INFO
                    case .debug: LOG_DEBUG
                    }
                line.withCString { text in withVaList([text]) { vsyslog(priority, "%s", $0) } }
            case .standardError:
                try? FileHandle.standardError.write(contentsOf: Data(Self.stamped(level, line).utf8))
            case .file(_, let handle):
                try? handle.write(contentsOf: Data(Self.stamped(level, line).utf8))
            }
        }
    }

    private static func stamped(_ level: LogLevel, _ line: String) -> String {
        let stamp = Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: false))
        return "\(stamp) \(level.name): \(line)\n"
    }
}
