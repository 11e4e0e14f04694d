// SPDX-License-Identifier: GPL-3.0-or-later

/// Log levels, with `mpd`'s names, from the most to the least severe.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case error, warning, notice, info, debug

    /// The name used in `log_level` and in log lines.
    public var name: String {
        switch self {
        case .error: "error"
        case .warning: "warning"
        case .notice: "notice"
        case .info: "info"
        case .debug: "debug"
        }
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A logger value, passed in to the code that logs; it never creates its own destination.
///
/// Messages are constant text plus `key=value` metadata. Safe to use from any thread; the sink decides
/// how lines reach their destination.
public struct Logger: Sendable {
    /// Receives every line at or above `threshold`.
    public typealias Sink = @Sendable (LogLevel, String) -> Void

    /// The most verbose level written.
    public var threshold: LogLevel
    private let label: String
    private let sink: Sink

    /// Creates a logger writing lines labelled `label` to `sink`.
    public init(label: String, threshold: LogLevel = .notice, sink: @escaping Sink) {
        self.label = label
        self.threshold = threshold
        self.sink = sink
    }

    /// A logger that drops everything.
    public static let discarding = Logger(label: "", threshold: .error) { _, _ in }

    /// The same destination under another label.
    public func labelled(_ label: String) -> Logger {
        Logger(label: label, threshold: self.threshold, sink: self.sink)
    }

    /// Logs `message` with `metadata` at `level`.
    public func log(
        _ level: LogLevel, _ message: @autoclosure () -> String, _ metadata: KeyValuePairs<String, String> = [:]
    ) {
        guard level <= self.threshold else { return }
        var line = "\(self.label): \(message())"
        for (key, value) in metadata { line += " \(key)=\(value)" }
        self.sink(level, line)
    }

    /// Logs at `error`.
    public func error(_ message: @autoclosure () -> String, _ metadata: KeyValuePairs<String, String> = [:]) {
        self.log(.error, message(), metadata)
    }
    /// Logs at `warning`.
    public func warning(_ message: @autoclosure () -> String, _ metadata: KeyValuePairs<String, String> = [:]) {
        self.log(.warning, message(), metadata)
    }
    /// Logs at `notice`.
    public func notice(_ message: @autoclosure () -> String, _ metadata: KeyValuePairs<String, String> = [:]) {
        self.log(.notice, message(), metadata)
    }
    /// Logs at `info`.
    public func info(_ message: @autoclosure () -> String, _ metadata: KeyValuePairs<String, String> = [:]) {
        self.log(.info, message(), metadata)
    }
    /// Logs at `debug`.
    public func debug(_ message: @autoclosure () -> String, _ metadata: KeyValuePairs<String, String> = [:]) {
        self.log(.debug, message(), metadata)
    }
}
