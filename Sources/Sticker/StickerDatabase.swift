// SPDX-License-Identifier: GPL-3.0-or-later

import CSQLite

/// The sticker database: name/value pairs attached to objects (songs), kept in an SQLite file with
/// `mpd`'s table (`sticker(type, uri, name, value)`, unique index `sticker_value`), so a sticker file
/// written by `mpd` keeps working here and the other way round.
///
/// The file is opened once, in WAL mode with full synchronisation, and every statement is prepared once.
/// Each change is its own SQLite transaction, committed (and so on disk) when the method returns.
///
/// Loop-confined: create it and call every method on one thread (the event loop).
public final class StickerDatabase {
    /// The statements, prepared once when the database opens.
    private enum Statement: Int, CaseIterable {
        case get, list, update, insert, delete, deleteValue, find, findEquals, findLess, findGreater

        /// The SQL text: the same queries as `mpd`, so that results come back in the same order.
        var sql: String {
            let find = "SELECT uri,value FROM sticker WHERE type=? AND uri LIKE (? || '%') AND name=?"
            switch self {
            case .get: return "SELECT value FROM sticker WHERE type=? AND uri=? AND name=?"
            case .list: return "SELECT name,value FROM sticker WHERE type=? AND uri=?"
            case .update: return "UPDATE sticker SET value=? WHERE type=? AND uri=? AND name=?"
            case .insert: return "INSERT INTO sticker(type,uri,name,value) VALUES(?, ?, ?, ?)"
            case .delete: return "DELETE FROM sticker WHERE type=? AND uri=?"
            case .deleteValue: return "DELETE FROM sticker WHERE type=? AND uri=? AND name=?"
            case .find: return find
            case .findEquals: return find + " AND value=?"
            case .findLess: return find + " AND value<?"
            case .findGreater: return find + " AND value>?"
            }
        }
    }

    /// `mpd`'s table and index, created when missing.
    private static let schema = """
        CREATE TABLE IF NOT EXISTS sticker(  type VARCHAR NOT NULL,   uri VARCHAR NOT NULL,   \
        name VARCHAR NOT NULL,   value VARCHAR NOT NULL);\
        CREATE UNIQUE INDEX IF NOT EXISTS sticker_value ON sticker(type, uri, name);
        """

    /// How long a statement waits for a lock another process holds (an `mpd` sharing the file).
    private static let busyTimeoutMilliseconds: Int32 = 5000

    /// `SQLITE_TRANSIENT`: SQLite copies bound text before the call returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    // Owned: closed in deinit; never leaves this class.
    private let handle: OpaquePointer
    // Owned: finalized in deinit, indexed by `Statement.rawValue`.
    private var statements: [OpaquePointer] = []

    /// Opens (creating when missing) the sticker database at `path`, creates `mpd`'s table and index if
    /// they are missing, switches to WAL mode and prepares every statement.
    ///
    /// - Throws: `StickerError` when the file cannot be opened or is not an SQLite database.
    public init(path: String) throws(StickerError) {
        var opened: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let result = sqlite3_open_v2(path, &opened, flags, nil)
        guard let opened else { throw StickerError(message: "Failed to open sqlite database '\(path)': out of memory") }
        guard result == SQLITE_OK else {
            let error = StickerError(opened, "Failed to open sqlite database '\(path)'")
            sqlite3_close_v2(opened)
            throw error
        }
        self.handle = opened
        sqlite3_busy_timeout(opened, Self.busyTimeoutMilliseconds)
        do throws(StickerError) {
            try self.execute(Self.schema, failure: "Failed to create sticker table")
            // WAL: a commit appends to the log; FULL: the log is synced at every commit, so a change is
            // durable when its statement returns.
            try self.execute("PRAGMA journal_mode=WAL", failure: "Failed to enable WAL mode")
            try self.execute("PRAGMA synchronous=FULL", failure: "Failed to set synchronous mode")
            for statement in Statement.allCases {
                var prepared: OpaquePointer?
                let code = sqlite3_prepare_v2(opened, statement.sql, -1, &prepared, nil)
                guard code == SQLITE_OK, let prepared else {
                    throw StickerError(opened, "sqlite3_prepare_v2() failed")
                }
                self.statements.append(prepared)
            }
        } catch {
            for statement in self.statements { sqlite3_finalize(statement) }
            sqlite3_close_v2(opened)
            throw error
        }
    }

    deinit {
        for statement in self.statements { sqlite3_finalize(statement) }
        sqlite3_close_v2(self.handle)
    }

    // MARK: - Queries

    /// The value of sticker `name` on `uri`, or `nil` when there is none. An empty name has no value, and
    /// an empty value reads as none, as in `mpd`.
    ///
    /// Loop thread only.
    /// - Throws: `StickerError` on an SQLite failure.
    public func value(type: String, uri: String, name: String) throws(StickerError) -> String? {
        guard !name.isEmpty else { return nil }
        var value: String?
        try self.run(.get, [type, uri, name]) { statement in value = Self.text(statement, 0) }
        return value.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Every sticker on `uri`, sorted by name byte-wise (`mpd` prints them from a `std::map`).
    ///
    /// Loop thread only.
    /// - Throws: `StickerError` on an SQLite failure.
    public func values(type: String, uri: String) throws(StickerError) -> [(name: String, value: String)] {
        var table: [String: String] = [:]
        try self.run(.list, [type, uri]) { statement in
            let name = Self.text(statement, 0)
            // std::map::emplace keeps the first of equal keys.
            if table[name] == nil { table[name] = Self.text(statement, 1) }
        }
        return table.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map { ($0.key, $0.value) }
    }

    /// Sets sticker `name` on `uri` to `value` (an update, or an insert when it is new). An empty name is
    /// ignored, as in `mpd`.
    ///
    /// Loop thread only.
    /// - Returns: whether the database changed (then idle `sticker` is due).
    /// - Throws: `StickerError` on an SQLite failure; nothing changed then.
    public func store(type: String, uri: String, name: String, value: String) throws(StickerError) -> Bool {
        guard !name.isEmpty else { return false }
        if try self.change(.update, [value, type, uri, name]) { return true }
        _ = try self.change(.insert, [type, uri, name, value])
        return true
    }

    /// Deletes every sticker on `uri`.
    ///
    /// Loop thread only.
    /// - Returns: whether there was one.
    /// - Throws: `StickerError` on an SQLite failure.
    public func delete(type: String, uri: String) throws(StickerError) -> Bool {
        try self.change(.delete, [type, uri])
    }

    /// Deletes sticker `name` on `uri`.
    ///
    /// Loop thread only.
    /// - Returns: whether there was one.
    /// - Throws: `StickerError` on an SQLite failure.
    public func delete(type: String, uri: String, name: String) throws(StickerError) -> Bool {
        try self.change(.deleteValue, [type, uri, name])
    }

    /// The stickers called `name` on objects whose URI starts with `prefix` (SQLite's `LIKE`, so the
    /// caller checks the prefix exactly), matching `comparison`, in the order SQLite returns them.
    ///
    /// Loop thread only.
    /// - Throws: `StickerError` on an SQLite failure.
    public func find(
        type: String, prefix: String, name: String, comparison: StickerComparison
    ) throws(StickerError) -> [(uri: String, value: String)] {
        let statement: Statement
        var arguments = [type, prefix, name]
        switch comparison {
        case .exists: statement = .find
        case .equals(let value): (statement, arguments) = (.findEquals, arguments + [value])
        case .lessThan(let value): (statement, arguments) = (.findLess, arguments + [value])
        case .greaterThan(let value): (statement, arguments) = (.findGreater, arguments + [value])
        }
        var found: [(uri: String, value: String)] = []
        try self.run(statement, arguments) { row in found.append((Self.text(row, 0), Self.text(row, 1))) }
        return found
    }

    // MARK: - SQLite calls

    private func execute(_ sql: String, failure: String) throws(StickerError) {
        let code = sqlite3_exec(self.handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw StickerError(self.handle, failure) }
    }

    /// Binds `arguments`, steps through every row calling `row`, then resets the statement.
    private func run(
        _ which: Statement, _ arguments: [String], row: (OpaquePointer) -> Void = { _ in }
    ) throws(StickerError) {
        let statement = self.statements[which.rawValue]
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (index, argument) in arguments.enumerated() {
            guard sqlite3_bind_text(statement, Int32(index + 1), argument, -1, Self.transient) == SQLITE_OK else {
                throw StickerError(self.handle, "sqlite3_bind_text() failed")
            }
        }
        while true {
            switch sqlite3_step(statement) {
            case SQLITE_ROW: row(statement)
            case SQLITE_DONE: return
            default: throw StickerError(self.handle, "sqlite3_step() failed")
            }
        }
    }

    /// Runs a statement that changes rows; returns whether it changed any.
    private func change(_ which: Statement, _ arguments: [String]) throws(StickerError) -> Bool {
        try self.run(which, arguments)
        return sqlite3_changes(self.handle) > 0
    }

    private static func text(_ statement: OpaquePointer, _ column: Int32) -> String {
        guard let text = sqlite3_column_text(statement, column) else { return "" }
        return String(cString: text)
    }
}

/// How `sticker find` compares the values it finds.
public enum StickerComparison: Sendable, Hashable {
    /// Any value.
    case exists
    /// `=`: the value equals this.
    case equals(String)
    /// `<`: the value sorts before this (SQLite's text comparison).
    case lessThan(String)
    /// `>`: the value sorts after this.
    case greaterThan(String)
}

/// A failure of the SQLite library: what was attempted and SQLite's message, worded as `mpd` words it.
public struct StickerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `what failed: SQLite's message`.
    public let message: String

    /// Wraps a message.
    public init(message: String) { self.message = message }

    init(_ handle: OpaquePointer, _ what: String) {
        self.message = "\(what): \(String(cString: sqlite3_errmsg(handle)))"
    }

    /// The message.
    public var description: String { self.message }
}
