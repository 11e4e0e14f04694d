// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Model
import Posix
import Synchronization

/// Where log lines go: standard error, an appended file (reopened on SIGHUP, for logrotate), or syslog.
/// Safe from any thread.
final class LogSink: Sendable {
    private enum Target {
        case standardError
        case file(path: String, descriptor: FileDescriptor)
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
        self.target = Mutex(.file(path: path, descriptor: try FileDescriptor.openForAppending(path)))
    }

    /// Logs to the system log (`log_file "syslog"`), as `mpd`, with its identity `fermata`.
    static func syslog() -> LogSink {
        // openlog keeps the pointer: the identity must live as long as the process; a literal does.
        openlog("fermata", LOG_PID, LOG_DAEMON)
        let sink = LogSink()
        sink.target.withLock { $0 = .syslog }
        return sink
    }

    /// Reopens the log file (after logrotate moved it away); nothing for standard error and syslog.
    ///
    /// - Throws: when the file cannot be opened again; the old one stays in use.
    func reopen() throws {
        try self.target.withLock { target in
            guard case .file(let path, let old) = target else { return }
            let descriptor = try FileDescriptor.openForAppending(path)
            old.close()
            target = .file(path: path, descriptor: descriptor)
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
                try? FileDescriptor.standardError.writeAll(Self.stamped(level, line).utf8)
            case .file(_, let descriptor):
                try? descriptor.writeAll(Self.stamped(level, line).utf8)
            }
        }
    }

    private static func stamped(_ level: LogLevel, _ line: String) -> String {
        "\(Self.timestamp()) \(level.name): \(line)\n"
    }

    /// The current time in UTC as `2024-05-01T12:34:56`.
    ///
    /// The corresponding C functions are `time`, `gmtime_r` and `strftime`.
    static func timestamp() -> String {
        var now = time(nil)
        var fields = tm()
        gmtime_r(&now, &fields)
        var text = [CChar](repeating: 0, count: 32)
        let count = strftime(&text, text.count, "%Y-%m-%dT%H:%M:%S", &fields)
        return String(decoding: text[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
