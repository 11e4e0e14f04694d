// SPDX-License-Identifier: GPL-3.0-or-later

import Library
import MPDProtocol
import Model

/// Querying the database: `find`, `search`, `count`, `list`.
enum SearchCommands {
    static let all: [Command] = [
        Command("count", .read, 1, nil, count),
        Command("find", .read, 1, nil) { context throws(AckError) in try match(&context, foldCase: false) },
        Command("list", .read, 1, nil, list),
        Command("search", .read, 1, nil) { context throws(AckError) in try match(&context, foldCase: true) },
    ]

    /// The songs a filter selects, in walk order, starting at its `base` when it has one.
    ///
    /// - Throws: `No such directory` (50) for a base that is neither a directory nor a song.
    static func select(_ database: Database, filter: SongFilter) throws(AckError) -> [Int32] {
        let start: Int32
        if let base = filter.base, !base.isEmpty, base != "/" {
            if let directory = database.directory(at: base) {
                start = directory
            } else if let song = database.song(at: base), !base.contains("//") {
                let prepared = PreparedFilter(database, filter: filter)
                return withUnsafePointer(to: database.songs) { prepared.matches(song, in: $0) } ? [song] : []
            } else {
                throw AckError(.noExist, "No such directory")
            }
        } else {
            start = 0
        }
        if start == 0 && filter.isEmpty {
            return Array(0..<Int32(database.songs.count))
        }
        // An exact, case-sensitive tag comparison without fallbacks is a lookup: the candidates are that
        // value's songs, in ascending order, which is the walk order (a directory's subtree is one contiguous
        // run of songs).
        var candidates: [Int32]?
        var remaining = filter
        for (position, item) in filter.items.enumerated() {
            guard case .tag(let type, let matcher) = item, matcher.operation == .equals, !matcher.foldCase,
                !matcher.negated, !matcher.value.isEmpty, type.fallbackTags.isEmpty
            else { continue }
            // The postings are keyed by Swift strings, which compare canonically equivalent text as equal (a
            // Kelvin sign and a K), where mpd compares bytes: candidates are compared (in place). A long list
            // asks whether every list holds one value (worked out once, over the whole library), and then one
            // candidate tells for all.
            let songs = database.songs
            func hasValue(_ index: Int32) -> Bool {
                var found = false
                songs.forEachValue(index, type) { value in
                    if !found && songs.values.value(value, is: matcher.value) { found = true }
                }
                return found
            }
            let postings = database.songs(with: type, value: matcher.value)
            if postings.count > 1024, database.hasByteExactPostings(type), let first = postings.first {
                candidates = hasValue(first) ? postings : []
            } else {
                candidates = postings.filter(hasValue)
            }
            var rest = filter.items
            rest.remove(at: position)
            remaining = SongFilter(rest)
            break
        }
        let prepared = PreparedFilter(database, filter: remaining)
        if let candidates, prepared.isEmpty { return candidates }
        // Songs are matched in place, in the table.
        return withUnsafePointer(to: database.songs) { songs in
            if let candidates { return candidates.filter { prepared.matches($0, in: songs) } }
            var result: [Int32] = []
            if start == 0 {
                // The whole walk from the root visits the songs in index order.
                for index in 0..<Int32(songs.pointee.count) where prepared.matches(index, in: songs) {
                    result.append(index)
                }
                return result
            }
            database.walk(from: start, recursive: true) { index in
                if prepared.matches(index, in: songs) { result.append(index) }
            }
            return result
        }
    }

    static func match(_ context: inout CommandContext, foldCase: Bool) throws(AckError) -> CommandResult {
        let selection = try FilterSelection.parse(arguments: context.arguments[...], foldCase: foldCase)
        let database = try DatabaseCommands.database(context)
        var songs = try select(database, filter: selection.filter)
        if let sort = selection.sort { songs = sorted(songs, in: database, by: sort) }
        let selected = Array(songs[selection.window.indices(count: songs.count)])
        let tags = DatabaseCommands.visibleTags(context)
        let client = context.client
        let sorted = selection.sort != nil
        // Streamed: `search any ""` selects the whole library.
        return .stream(
            ReplyStream.chunked(count: selected.count) { range in
                var reply = ReplyBuffer(capacity: range.count * 512)
                for index in selected[range] {
                    // mpd copies sorted results into "detached" songs, which do not carry the audio
                    // format, so a sorted reply has no Format lines.
                    SongPrinter.appendSong(index, of: database.songs, visibleTags: tags, format: !sorted, to: &reply)
                }
                client.write(bytes: reply.bytes)
            })
    }

    /// `mpd`'s stable sort of a selection: by `Last-Modified`, by Track/Disc as `strtol` numbers, or by
    /// the tag's sort value (with fallbacks) compared byte-wise; `-` swaps the operands.
    static func sorted(_ songs: [Int32], in database: Database, by order: SortOrder) -> [Int32] {
        let descending = order.descending
        switch order.key {
        case .lastModified:
            let keyed = songs.map { ($0, database.songs.modificationTime($0)) }
            return keyed.enumerated().sorted { a, b in
                let (x, y) = (a.element.1, b.element.1)
                if x != y { return descending ? x > y : x < y }
                return a.offset < b.offset
            }.map(\.element.0)
        case .tag(let type):
            let table = database.songs
            let keyed = songs.map { song in (song, SongInfo.sortValue(type) { table.firstValue(song, $0) }) }
            let numeric = type == .track || type == .disc
            return keyed.enumerated().sorted { a, b in
                var (x, y) = (a.element.1, b.element.1)
                if descending { swap(&x, &y) }
                let less: Bool
                let greater: Bool
                if numeric {
                    let (p, q) = (Database.leadingInteger(x), Database.leadingInteger(y))
                    (less, greater) = (p < q, q < p)
                } else {
                    (less, greater) = (x.utf8.lexicographicallyPrecedes(y.utf8), y.utf8.lexicographicallyPrecedes(x.utf8))
                }
                if less { return true }
                if greater { return false }
                return a.offset < b.offset
            }.map(\.element.0)
        }
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
        let filter = arguments.isEmpty ? SongFilter() : try FilterParser.parse(arguments: arguments, foldCase: false)
        let database = try DatabaseCommands.database(context)
        let songs = try select(database, filter: filter)
        func write(songs: Int, milliseconds: UInt64) {
            context.write(raw: "songs: \(songs)\nplaytime: \(milliseconds / 1000)\n")
        }
        guard let group else {
            let all = database.songs
            let total = songs.reduce(UInt64(0)) { $0 + (all.durationMilliseconds($1) ?? 0) }
            write(songs: songs.count, milliseconds: total)
            return .ok
        }
        let column = database.column(group)
        var counts = [(songs: Int, milliseconds: UInt64)](repeating: (0, 0), count: column.values.count)
        let all = database.songs
        column.withUnsafeIDs { offsets, ids in
            for song in songs {
                let index = Int(song)
                let milliseconds = all.durationMilliseconds(song) ?? 0
                for position in Int(offsets[index])..<Int(offsets[index + 1]) {
                    counts[Int(ids[position])].songs += 1
                    counts[Int(ids[position])].milliseconds += milliseconds
                }
            }
        }
        // Value numbers follow byte order, so this is the order mpd's std::map gives.
        var reply = ReplyBuffer(capacity: column.values.count * 64)
        for (id, count) in counts.enumerated() where count.songs > 0 {
            reply.line(group.name, column.values[id])
            reply.line("songs", UInt64(count.songs))
            reply.line("playtime", count.milliseconds / 1000)
        }
        context.client.write(bytes: reply.bytes)
        return .ok
    }

    static func list(_ context: inout CommandContext) throws(AckError) -> CommandResult {
        var arguments = context.arguments[...]
        let name = arguments.removeFirst()
        let database = try DatabaseCommands.database(context)
        if name.lowercased() == "file" || name.lowercased() == "filename" {
            let filter = arguments.isEmpty ? SongFilter() : try FilterParser.parse(arguments: arguments, foldCase: false)
            for index in try select(database, filter: filter) {
                context.write("file", database.songs.uri(index))
            }
            return .ok
        }
        guard let type = TagType(parsing: name) else { throw AckError(.arg, "Unknown tag type: \(name)") }
        var filter: SongFilter?
        if arguments.count == 1 && !arguments[arguments.startIndex].hasPrefix("(") {
            // `list album ARTIST`, from before mpd 0.12.
            guard type == .album else { throw AckError(.arg, "should be \"Album\" for 3 arguments") }
            filter = SongFilter([.tag(.artist, StringMatcher(arguments.removeFirst(), operation: .equals, foldCase: false))])
        }
        var types: [TagType] = []
        while arguments.count >= 2 && arguments[arguments.endIndex - 2] == "group" {
            let groupName = arguments[arguments.endIndex - 1]
            guard let group = TagType(parsing: groupName) else {
                throw AckError(.arg, "Unknown tag type: \(groupName)")
            }
            if group == type || types.contains(group) { throw AckError(.arg, "Conflicting group") }
            types.append(group)
            arguments.removeLast(2)
        }
        types.append(type)
        if !arguments.isEmpty { filter = try FilterParser.parse(arguments: arguments, foldCase: false) }

        let selected = try select(database, filter: filter ?? SongFilter())
        // Each level's values as numbers in byte order (see `TagColumn`): a result row is a tuple of
        // numbers, and sorting the tuples sorts the rows as mpd's nested maps do.
        let columns = types.map { database.column($0) }
        var reply = ReplyBuffer(capacity: columns[0].values.count * 32)
        if columns.count == 1 {
            let column = columns[0]
            var used = [Bool](repeating: false, count: column.values.count)
            for index in selected { for id in column.ids(of: index) { used[Int(id)] = true } }
            for (id, value) in column.values.enumerated() where used[id] { reply.line(type.name, value) }
        } else if columns.count == 2 {
            // The common case (`list album group albumartist`).
            var previous: Int32 = -1
            let (outerName, innerName) = (types[0].name, types[1].name)
            for (outer, inner) in Self.distinctPairs(selected, outer: columns[0], inner: columns[1]) {
                if outer != previous { reply.line(outerName, columns[0].values[Int(outer)]) }
                reply.line(innerName, columns[1].values[Int(inner)])
                previous = outer
            }
        } else {
            var rows = Self.distinctRows(selected, columns)
            rows.sort { $0.lexicographicallyPrecedes($1) }
            var previous: [Int32] = []
            for row in rows {
                // A level is printed when it or an outer level changed: the nested output of mpd.
                var changed = previous.isEmpty
                for (depth, id) in row.enumerated() {
                    if !changed && previous[depth] != id { changed = true }
                    if changed { reply.line(types[depth].name, columns[depth].values[Int(id)]) }
                }
                previous = row
            }
        }
        context.client.write(bytes: reply.bytes)
        return .ok
    }

    /// The distinct tuples of value numbers the songs produce, one number per column (every combination of
    /// a multi-valued song's values), for three levels or more.
    private static func distinctRows(_ songs: [Int32], _ columns: [TagColumn]) -> [[Int32]] {
        var rows = Set<[Int32]>()
        for index in songs {
            var row: [Int32] = []
            func combine(_ depth: Int) {
                guard depth < columns.count else {
                    rows.insert(row)
                    return
                }
                for id in columns[depth].ids(of: index) {
                    row.append(id)
                    combine(depth + 1)
                    row.removeLast()
                }
            }
            combine(0)
        }
        return Array(rows)
    }
}
