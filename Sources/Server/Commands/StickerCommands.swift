// SPDX-License-Identifier: GPL-3.0-or-later

import Library
import MPDProtocol
import Model
import Sticker

/// `sticker get|set|delete|list|find`: name/value pairs on songs, in the sticker database.
enum StickerCommands {
    static let all: [Command] = [
        Command("sticker", .admin, 3, nil, sticker).available { $0.stickers != nil }
    ]

    /// The only sticker type `mpd` 0.23 knows.
    static let songType = "song"

    static func sticker(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        guard let stickers = context.services.stickers else {
            throw AckError(.unknown, "sticker database is disabled")
        }
        let arguments = context.arguments
        guard arguments[1] == Self.songType else { throw AckError(.arg, "unknown sticker domain") }
        let database = try DatabaseCommands.database(context)
        let uri = arguments[2]
        let services = context.services
        /// Runs a database call; an SQLite failure is logged and answered with code 5 and its message.
        func attempt<T>(_ body: () throws(StickerError) -> T) throws(AckError) -> T {
            do {
                return try body()
            } catch {
                services.logger.error("sticker database failed", ["error": error.message])
                throw AckError(.unknown, error.message)
            }
        }
        switch (arguments[0], arguments.count) {
        case ("get", 4):
            _ = try song(uri, in: database)
            let name = arguments[3]
            guard
                let value = try attempt({ () throws(StickerError) in
                    try stickers.value(type: Self.songType, uri: uri, name: name)
                })
            else { throw AckError(.noExist, "no such sticker") }
            context.write(raw: line(name, value))
        case ("list", 3):
            _ = try song(uri, in: database)
            let values = try attempt { () throws(StickerError) in try stickers.values(type: Self.songType, uri: uri) }
            context.write(raw: values.map { line($0.name, $0.value) }.joined())
        case ("set", 5):
            _ = try song(uri, in: database)
            let (name, value) = (arguments[3], arguments[4])
            if try attempt({ () throws(StickerError) in
                try stickers.store(type: Self.songType, uri: uri, name: name, value: value)
            }) {
                services.emit(.sticker)
            }
        case ("delete", 3), ("delete", 4):
            _ = try song(uri, in: database)
            let name = arguments.count == 4 ? arguments[3] : nil
            let deleted = try attempt { () throws(StickerError) in
                if let name { return try stickers.delete(type: Self.songType, uri: uri, name: name) }
                return try stickers.delete(type: Self.songType, uri: uri)
            }
            guard deleted else { throw AckError(.noExist, "no such sticker") }
            services.emit(.sticker)
        case ("find", 4), ("find", 6):
            let comparison = try Self.comparison(arguments)
            let prefix = uri.isEmpty ? "" : uri + "/"
            let found = try attempt { () throws(StickerError) in
                try stickers.find(type: Self.songType, prefix: prefix, name: arguments[3], comparison: comparison)
            }
            var text = ""
            // SQLite's LIKE ignores ASCII case and treats % and _ as wildcards: the prefix is checked exactly.
            // Stickers of songs no longer in the database are left out.
            for (uri, value) in found where uri.utf8.starts(with: prefix.utf8) && database.song(at: uri) != nil {
                text += "file: \(uri)\n" + line(arguments[3], value)
            }
            context.write(raw: text)
        default:
            throw AckError(.arg, "bad request")
        }
        return .ok
    }

    /// The comparison of `sticker find song BASE NAME [OP VALUE]`.
    private static func comparison(_ arguments: [String]) throws(AckError) -> StickerComparison {
        guard arguments.count == 6 else { return .exists }
        let value = arguments[5]
        switch arguments[4] {
        case "=": return .equals(value)
        case "<": return .lessThan(value)
        case ">": return .greaterThan(value)
        default: throw AckError(.arg, "bad operator")
        }
    }

    /// The database song at `uri`, or `No such song` (code 50).
    private static func song(_ uri: String, in database: Database) throws(AckError) -> Int32 {
        guard let song = database.song(at: uri) else { throw AckError(.noExist, "No such song") }
        return song
    }

    private static func line(_ name: String, _ value: String) -> String { "sticker: \(name)=\(value)\n" }
}
