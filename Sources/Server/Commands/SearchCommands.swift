// SPDX-License-Identifier: GPL-3.0-or-later

import Library
import MPDProtocol
import Model
import PCRE

/// Querying the database: `find`, `search`, `count`, `list`. Each parses its arguments, asks the database's query
/// engine (`Database.select`, `count`, `list`) and prints the answer.
enum SearchCommands {
    static let all: [Command] = [
        Command("count", .read, 1, nil, count),
        Command("find", .read, 1, nil) { context throws(AckError) in try match(&context, foldCase: false) },
        Command("list", .read, 1, nil, list),
        Command("search", .read, 1, nil) { context throws(AckError) in try match(&context, foldCase: true) },
    ]

    /// The engine of `=~` and `!~` filters: PCRE2, as `mpd`'s.
    static let regex: any FilterRegularExpression.Type = RegularExpression.self

    /// The songs `query` selects (`Database.select(_:)`), with its failure as `mpd`'s ACK.
    ///
    /// - Throws: `No such directory` (50) for a base that is neither a directory nor a song.
    static func select(_ database: Database, _ query: SongQuery) throws(AckError) -> [Int32] {
        do throws(QueryError) { return try database.select(query) } catch { throw error.ack }
    }

    static func match(_ context: inout CommandContext, foldCase: Bool) throws(AckError) -> CommandResult {
        let selection = try FilterSelection.parse(
            arguments: context.arguments[...], foldCase: foldCase, regex: Self.regex)
        let database = try DatabaseCommands.database(context)
        let selected = try select(database, SongQuery(selection))
        let tags = DatabaseCommands.visibleTags(context)
        let sink = context.reply
        let sorted = selection.sort != nil
        let paths = database.directoryPathTable()
        // A selection of a third of the library or more, in table order, is read nearly in order, which the
        // processor foresees by itself: its memory is asked for ahead only when sparse or sorted.
        let scattered = sorted || selected.count * 3 < database.songs.count
        // Streamed: `search any ""` selects the whole library.
        return .stream(
            ReplyStream.chunked(count: selected.count, sink: sink) { range, reply in
                // Read once: each read of `Database.songs` retains and releases every column of the table.
                let songs = database.songs
                // mpd copies sorted results into "detached" songs, which do not carry the audio format, so a sorted
                // reply has no Format lines.
                SongPrinter.appendSongs(
                    selected, range, of: songs, visibleTags: tags, format: !sorted, paths: paths, prefetch: scattered,
                    to: &reply)
            })
    }

    static func count(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        var arguments = context.arguments[...]
        var group: TagType?
        if arguments.count >= 2 && arguments[arguments.endIndex - 2] == "group" {
            let name = arguments[arguments.endIndex - 1]
            guard let type = TagType(parsing: name) else { throw AckError(.arg, "Unknown tag type: \(name)") }
            group = type
            arguments.removeLast(2)
        }
        let filter =
            arguments.isEmpty
            ? SongFilter() : try FilterParser.parse(arguments: arguments, foldCase: false, regex: Self.regex)
        let database = try DatabaseCommands.database(context)
        guard let group else {
            let total: SongCount
            do throws(QueryError) { total = try database.count(filter) } catch { throw error.ack }
            context.write(raw: "songs: \(total.songs)\nplaytime: \(total.milliseconds / 1000)\n")
            return .ok
        }
        let groups: [(value: String, count: SongCount)]
        do throws(QueryError) { groups = try database.count(filter, groupedBy: group) } catch { throw error.ack }
        var reply = ReplyBuffer(capacity: groups.count * 64)
        for (value, count) in groups {
            reply.line(group.name, value)
            reply.line("songs", UInt64(count.songs))
            reply.line("playtime", count.milliseconds / 1000)
        }
        context.reply.write(bytes: reply.bytes)
        return .ok
    }

    static func list(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        var arguments = context.arguments[...]
        let name = arguments.removeFirst()
        let database = try DatabaseCommands.database(context)
        if name.lowercased() == "file" || name.lowercased() == "filename" {
            let filter =
                arguments.isEmpty
                ? SongFilter() : try FilterParser.parse(arguments: arguments, foldCase: false, regex: Self.regex)
            let selected = try select(database, SongQuery(filter: filter))
            let sink = context.reply
            let paths = database.directoryPathTable()
            // Every song (no filter, none hidden): the selection is the table in order, and each directory's songs
            // are the range its record holds.
            let whole = selected.count == database.songs.count
            // Streamed as `listall` is: a whole library's file lines are megabytes.
            return .stream(
                ReplyStream.chunked(count: selected.count, chunk: 256, sink: sink) { range, reply in
                    // Read once: each read of `Database.songs` retains and releases every column of the table.
                    let songs = database.songs
                    if whole {
                        SongPrinter.appendFileLines(
                            Int32(range.lowerBound)..<Int32(range.upperBound), of: database, songs: songs,
                            paths: paths, to: &reply)
                    } else {
                        SongPrinter.appendFileLines(selected[range], of: songs, paths: paths, to: &reply)
                    }
                })
        }
        guard let type = TagType(parsing: name) else { throw AckError(.arg, "Unknown tag type: \(name)") }
        var filter: SongFilter?
        if arguments.count == 1 && !arguments[arguments.startIndex].hasPrefix("(") {
            // `list album ARTIST`, from before mpd 0.12.
            guard type == .album else { throw AckError(.arg, "should be \"Album\" for 3 arguments") }
            filter = SongFilter([
                .tag(.artist, StringMatcher(arguments.removeFirst(), operation: .equals, foldCase: false))
            ])
        }
        // The last `group` is the outermost level.
        var groups: [TagType] = []
        while arguments.count >= 2 && arguments[arguments.endIndex - 2] == "group" {
            let groupName = arguments[arguments.endIndex - 1]
            guard let group = TagType(parsing: groupName) else {
                throw AckError(.arg, "Unknown tag type: \(groupName)")
            }
            if group == type || groups.contains(group) { throw AckError(.arg, "Conflicting group") }
            groups.append(group)
            arguments.removeLast(2)
        }
        if !arguments.isEmpty {
            filter = try FilterParser.parse(arguments: arguments, foldCase: false, regex: Self.regex)
        }

        let list: TagList
        do throws(QueryError) {
            list = try database.list(type, groupedBy: groups, filter: filter ?? SongFilter())
        } catch {
            throw error.ack
        }
        // Each level's `Key: `, then the lines copied in place, in one piece of the reply's size made straight in
        // the client's output. The keys are read from the printer's one buffer of keys (an array per key would be
        // retained per line).
        let keyBytes = SongPrinter.tagKeyBytes
        let keyStarts = SongPrinter.tagKeyStarts
        let rawTypes = list.types.map(\.rawValue)
        var size = 0
        list.forEachLine { depth, value in
            let raw = rawTypes[depth]
            size += keyStarts[raw + 1] - keyStarts[raw] + value.count + 1
        }
        context.reply.write(atMost: size) { writer in
            list.forEachLine { depth, value in
                let raw = rawTypes[depth]
                writer.put(bytes: keyBytes[keyStarts[raw]..<keyStarts[raw + 1]])
                writer.put(bytes: value)
                writer.put(byte: UInt8(ascii: "\n"))
            }
        }
        return .ok
    }
}
