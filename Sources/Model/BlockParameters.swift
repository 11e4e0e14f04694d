// SPDX-License-Identifier: GPL-3.0-or-later

import Synchronization

/// The `key "value"` lines of one configuration block (such as an `audio_output`), as the plugin that reads
/// them sees them: looking a key up marks it read, so that once the plugin is set up ``unread`` names the keys
/// it did not read, which `mpd` warns about (`option 'x' on line N was not recognized`).
///
/// Copies share what has been read (`mpd` marks the block's own lines). Read at start-up by one thread at a
/// time; a mutex makes that safe from any thread. Two values are equal when their lines are, whatever was read.
public struct BlockParameters: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    /// One line of the block.
    public struct Line: Sendable, Hashable {
        /// The key.
        public var name: String
        /// The value, unquoted.
        public var value: String
        /// The 1-based line number in its file; 0 when the value did not come from a file.
        public var line: Int

        /// Creates a line.
        public init(name: String, value: String, line: Int) {
            self.name = name
            self.value = value
            self.line = line
        }
    }

    /// The lines, in block order (keys are unique: the parser refuses a repeated one).
    public let lines: [Line]
    private let read = ReadKeys()

    /// Parameters of the lines `lines`, none read yet.
    public init(_ lines: [Line]) { self.lines = lines }

    /// Parameters without line numbers (tests, and outputs made without a file).
    public init(dictionaryLiteral elements: (String, String)...) {
        self.lines = elements.map { Line(name: $0.0, value: $0.1, line: 0) }
    }

    /// Parameters without line numbers, in key order.
    public init(_ values: [String: String]) {
        self.lines = values.sorted { $0.key < $1.key }.map { Line(name: $0.key, value: $0.value, line: 0) }
    }

    /// The value of `key`, marking it read; `nil` when the block has no such line.
    public subscript(key: String) -> String? { self.line(key)?.value }

    /// The line of `key`, marking it read (`mpd`'s `GetBlockParam`).
    public func line(_ key: String) -> Line? {
        guard let line = self.lines.first(where: { $0.name == key }) else { return nil }
        self.read.insert(key)
        return line
    }

    /// Whether the block has `key`, without marking it read.
    public func contains(_ key: String) -> Bool { self.lines.contains { $0.name == key } }

    /// The lines nobody has read, in block order.
    public var unread: [Line] {
        let read = self.read.keys
        return self.lines.filter { !read.contains($0.name) }
    }

    /// A yes/no value as `mpd` reads block booleans (`yes`/`true`/`1`, `no`/`false`/`0`, any case); `nil` when
    /// the block has no such line.
    ///
    /// - Throws: `Error in setting "key" on line N; Not a valid boolean ("yes" or "no"): "value"`.
    public func bool(_ key: String) throws(BlockValueError) -> Bool? {
        guard let line = self.line(key) else { return nil }
        switch line.value.lowercased() {
        case "yes", "true", "1": return true
        case "no", "false", "0": return false
        default: throw Self.settingError(line, "Not a valid boolean (\"yes\" or \"no\"): \"\(line.value)\"")
        }
    }

    /// A number above zero as `mpd`'s `GetPositiveValue` reads it (C `strtol`, nothing after the digits; the
    /// low 32 bits of a larger one); `nil` when the block has no such line.
    ///
    /// - Throws: `Error in setting "key" on line N; Failed to parse number` or `…; Value must be positive`.
    public func positive(_ key: String) throws(BlockValueError) -> UInt32? {
        guard let line = self.line(key) else { return nil }
        let number = try Self.long(line)
        guard number > 0 else { throw Self.settingError(line, "Value must be positive") }
        return UInt32(truncatingIfNeeded: number)
    }

    /// A number of zero or more as `mpd`'s `GetBlockValue(key, unsigned)` reads it; `nil` when the block has no
    /// such line.
    ///
    /// - Throws: `Error in setting "key" on line N; Failed to parse number` or `…; Value must not be negative`.
    public func unsigned(_ key: String) throws(BlockValueError) -> UInt32? {
        guard let line = self.line(key) else { return nil }
        let number = try Self.long(line)
        guard number >= 0 else { throw Self.settingError(line, "Value must not be negative") }
        return UInt32(truncatingIfNeeded: number)
    }

    /// `mpd`'s wrapping of a bad value: `Error in setting "key" on line N; reason`.
    public static func settingError(_ line: Line, _ reason: String) -> BlockValueError {
        BlockValueError("Error in setting \"\(line.name)\" on line \(line.line); \(reason)")
    }

    private static func long(_ line: Line) throws(BlockValueError) -> Int64 {
        let bytes = Array(line.value.utf8)
        let (number, end) = CNumbers.strtol(bytes, from: 0)
        guard end > 0, end == bytes.count else { throw Self.settingError(line, "Failed to parse number") }
        return number
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.lines == rhs.lines }

    public func hash(into hasher: inout Hasher) { hasher.combine(self.lines) }
}

/// A bad value in a block, in `mpd`'s words.
public struct BlockValueError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The message, such as `Error in setting "sync" on line 9; Not a valid boolean ("yes" or "no"): "x"`.
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    public var description: String { self.message }
}

/// The keys of a block read so far.
private final class ReadKeys: Sendable {
    private let storage = Mutex<Set<String>>([])

    func insert(_ key: String) { _ = self.storage.withLock { $0.insert(key) } }

    var keys: Set<String> { self.storage.withLock { $0 } }
}
