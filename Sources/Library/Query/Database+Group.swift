// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// The grouping behind `count … group` and `list`: each level's values as numbers of its `TagColumn`, which
/// follow byte order, so sorting numbers sorts values as `mpd`'s `std::map`s do.
extension Database {
    /// Per value of `type` (with fallbacks) that some of `songs` has, in byte order: the songs and play time.
    func groupCounts(_ songs: [Int32], by type: TagType) -> [(value: String, count: SongCount)] {
        let column = self.column(type)
        var counts = [SongCount](repeating: SongCount(), count: column.values.count)
        let all = self.songs
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
        var result: [(value: String, count: SongCount)] = []
        for (id, count) in counts.enumerated() where count.songs > 0 { result.append((column.values[id], count)) }
        return result
    }

    /// The lines of `list` over `songs`, `types` outermost first.
    func tagList(_ songs: [Int32], types: [TagType]) -> TagList {
        let columns = types.map { self.column($0) }
        var lines: [(depth: Int, value: String)] = []
        if columns.count == 1 {
            let column = columns[0]
            var used = [Bool](repeating: false, count: column.values.count)
            used.withUnsafeMutableBufferPointer { used in
                column.withUnsafeIDs { offsets, ids in
                    for song in songs {
                        let index = Int(song)
                        for position in Int(offsets[index])..<Int(offsets[index + 1]) {
                            used[Int(ids[position])] = true
                        }
                    }
                }
            }
            for (id, value) in column.values.enumerated() where used[id] { lines.append((0, value)) }
        } else if columns.count == 2 {
            // The common case (`list album group albumartist`).
            var previous: Int32 = -1
            for (outer, inner) in Self.distinctPairs(songs, outer: columns[0], inner: columns[1]) {
                if outer != previous { lines.append((0, columns[0].values[Int(outer)])) }
                lines.append((1, columns[1].values[Int(inner)]))
                previous = outer
            }
        } else {
            let width = columns.count
            let (rows, order) = Self.distinctRows(songs, columns)
            var previous = -1
            for row in order {
                let start = row * width
                // A level is printed when it or an outer level changed: the nested output of mpd.
                var changed = previous < 0
                for depth in 0..<width {
                    let id = rows[start + depth]
                    if !changed && rows[previous * width + depth] != id { changed = true }
                    if changed { lines.append((depth, columns[depth].values[Int(id)])) }
                }
                previous = row
            }
        }
        return TagList(types: types, lines: lines)
    }

    /// The distinct (outer, inner) value-number pairs `songs` produce (every combination of a multi-valued
    /// song's values), sorted by outer then inner number: the rows of a two-level `list … group …`.
    ///
    /// A counting sort by outer number, then per outer value a duplicate-free, sorted run of inner numbers, so
    /// the cost is linear in the songs plus the sorting of each (small) run.
    static func distinctPairs(_ songs: [Int32], outer: TagColumn, inner: TagColumn) -> [(outer: Int32, inner: Int32)] {
        // Every pair, less the repeats of the one before: songs in walk order come album by album.
        var outers: [Int32] = []
        var inners: [Int32] = []
        outer.withUnsafeIDs { outerOffsets, outerIDs in
            inner.withUnsafeIDs { innerOffsets, innerIDs in
                var last: (Int32, Int32) = (-1, -1)
                for song in songs {
                    let song = Int(song)
                    for position in Int(outerOffsets[song])..<Int(outerOffsets[song + 1]) {
                        let outerID = outerIDs[position]
                        for innerPosition in Int(innerOffsets[song])..<Int(innerOffsets[song + 1]) {
                            let innerID = innerIDs[innerPosition]
                            if last != (outerID, innerID) {
                                last = (outerID, innerID)
                                outers.append(outerID)
                                inners.append(innerID)
                            }
                        }
                    }
                }
            }
        }
        // Grouped by outer number: starts[o]..<starts[o + 1] of `buckets` hold the inner numbers seen with outer
        // number o.
        let outerCount = outer.values.count
        let (starts, buckets) = countingSort(keys: outers, items: inners, keyCount: outerCount)
        var seen = [Int32](repeating: -1, count: inner.values.count)
        var run: [Int32] = []
        var pairs: [(outer: Int32, inner: Int32)] = []
        for id in 0..<outerCount where starts[id] < starts[id + 1] {
            run.removeAll(keepingCapacity: true)
            for position in Int(starts[id])..<Int(starts[id + 1]) {
                let innerID = buckets[position]
                if seen[Int(innerID)] != Int32(id) {
                    seen[Int(innerID)] = Int32(id)
                    run.append(innerID)
                }
            }
            run.sort()
            for innerID in run { pairs.append((Int32(id), innerID)) }
        }
        return pairs
    }

    /// The distinct tuples of value numbers the songs produce, one number per column (every combination of a
    /// multi-valued song's values), for three levels or more: `rows` holds them one after the other, the
    /// columns' count of numbers each, and `order` numbers them in sorted order, each distinct tuple once.
    private static func distinctRows(_ songs: [Int32], _ columns: [TagColumn]) -> (rows: [Int32], order: [Int]) {
        let width = columns.count
        var rows: [Int32] = []
        rows.reserveCapacity(songs.count * width)
        Self.withUnsafeIDs(of: columns[...], []) { columnIDs in
            var row = [Int32](repeating: 0, count: width)
            row.withUnsafeMutableBufferPointer { row in
                // Every combination of the song's values, depth by depth.
                func combine(_ song: Int, _ depth: Int) {
                    guard depth < width else {
                        // Less the repeats of the row before: songs in walk order come album by album.
                        if rows.count >= width {
                            var repeated = true
                            for level in 0..<width where rows[rows.count - width + level] != row[level] {
                                repeated = false
                                break
                            }
                            if repeated { return }
                        }
                        rows.append(contentsOf: row)
                        return
                    }
                    let (offsets, ids) = columnIDs[depth]
                    for position in Int(offsets[song])..<Int(offsets[song + 1]) {
                        row[depth] = ids[position]
                        combine(song, depth + 1)
                    }
                }
                for song in songs { combine(Int(song), 0) }
            }
        }
        if let sorted = Self.sortedByPackedKeys(rows, columns) { return (sorted, Array(0..<(sorted.count / width))) }
        func precedes(_ a: Int, _ b: Int) -> Bool {
            for depth in 0..<width where rows[a * width + depth] != rows[b * width + depth] {
                return rows[a * width + depth] < rows[b * width + depth]
            }
            return false
        }
        var order: [Int] = []
        var last = -1
        for row in (0..<(rows.count / width)).sorted(by: precedes) where last < 0 || precedes(last, row) {
            order.append(row)
            last = row
        }
        return (rows, order)
    }

    /// Calls `body` with every column's value numbers in place (`TagColumn.withUnsafeIDs(_:)`), in order.
    private static func withUnsafeIDs<Result>(
        of columns: ArraySlice<TagColumn>, _ outer: [(UnsafeBufferPointer<Int32>, UnsafeBufferPointer<Int32>)],
        _ body: ([(offsets: UnsafeBufferPointer<Int32>, ids: UnsafeBufferPointer<Int32>)]) -> Result
    ) -> Result {
        guard let column = columns.first else { return body(outer.map { (offsets: $0.0, ids: $0.1) }) }
        return column.withUnsafeIDs { offsets, ids in
            Self.withUnsafeIDs(of: columns.dropFirst(), outer + [(offsets, ids)], body)
        }
    }

    /// `rows` (tuples of `columns.count` value numbers) sorted and without repeats, each tuple packed into one
    /// mixed-radix number (the columns' value counts as radixes, so numeric order is tuple order); `nil` when
    /// the columns have too many values for 64 bits.
    private static func sortedByPackedKeys(_ rows: [Int32], _ columns: [TagColumn]) -> [Int32]? {
        let radixes = columns.map { UInt64(max($0.values.count, 1)) }
        var product: UInt64 = 1
        for radix in radixes {
            let (next, overflow) = product.multipliedReportingOverflow(by: radix)
            if overflow { return nil }
            product = next
        }
        let width = columns.count
        var keys: [UInt64] = []
        keys.reserveCapacity(rows.count / width)
        for start in stride(from: 0, to: rows.count, by: width) {
            var key: UInt64 = 0
            for depth in 0..<width { key = key * radixes[depth] + UInt64(rows[start + depth]) }
            keys.append(key)
        }
        keys.sort()
        var sorted: [Int32] = []
        var tuple = [Int32](repeating: 0, count: width)
        var previous: UInt64?
        for key in keys where key != previous {
            previous = key
            var rest = key
            for depth in stride(from: width - 1, through: 0, by: -1) {
                tuple[depth] = Int32(rest % radixes[depth])
                rest /= radixes[depth]
            }
            sorted.append(contentsOf: tuple)
        }
        return sorted
    }
}
