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
        var depths: [UInt8] = []
        var numbers: [Int32] = []
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
            for (id, number) in column.tableNumbers.enumerated() where used[id] {
                depths.append(0)
                numbers.append(number)
            }
        } else {
            let width = columns.count
            let rows = Self.distinctRows(songs, columns)
            depths.reserveCapacity(rows.count)
            numbers.reserveCapacity(rows.count)
            for start in stride(from: 0, to: rows.count, by: width) {
                // A level is printed when it or an outer level changed: the nested output of mpd.
                var changed = start == 0
                for depth in 0..<width {
                    let id = rows[start + depth]
                    if !changed && rows[start - width + depth] != id { changed = true }
                    if changed {
                        depths.append(UInt8(depth))
                        numbers.append(columns[depth].tableNumbers[Int(id)])
                    }
                }
            }
        }
        return TagList(types: types, depths: depths, numbers: numbers, table: self.songs.values)
    }

    /// The distinct tuples of value numbers the songs produce, one number per column (every combination of a
    /// multi-valued song's values), sorted, one after the other, the columns' count of numbers each: the rows of
    /// a `list … group …` of two levels or more.
    ///
    /// Each tuple is packed into one 64-bit key (each column's numbers in as many bits as its largest needs, the
    /// outermost highest, so the keys' order is the tuples'), and the keys are sorted by radix; columns with too
    /// many values for `maxKeyBits` bits are compared tuple by tuple instead.
    static func distinctRows(_ songs: [Int32], _ columns: [TagColumn], maxKeyBits: Int = 64) -> [Int32] {
        let width = columns.count
        // Each column's bits and shift: the innermost lowest.
        let widths = columns.map {
            $0.values.count <= 1 ? 0 : UInt64.bitWidth - ($0.values.count - 1).leadingZeroBitCount
        }
        let keyBits = widths.reduce(0, +)
        guard keyBits <= min(maxKeyBits, UInt64.bitWidth) else { return Self.distinctRowsByComparison(songs, columns) }
        var shifts = [UInt64](repeating: 0, count: width)
        for depth in stride(from: width - 2, through: 0, by: -1) {
            shifts[depth] = shifts[depth + 1] + UInt64(widths[depth + 1])
        }
        var keys: [UInt64] = []
        keys.reserveCapacity(songs.count)
        Self.withUnsafeIDs(of: columns[...], []) { columnIDs in
            var last: UInt64?
            if columns.allSatisfy(\.isSingleValued) {
                // Every song's key at once, its numbers read by song (no offsets).
                for song in songs {
                    let song = Int(song)
                    var key: UInt64 = 0
                    for depth in 0..<width {
                        key |= UInt64(UInt32(bitPattern: columnIDs[depth].ids[song])) << shifts[depth]
                    }
                    // Less the repeats of the key before: songs in walk order come album by album.
                    if key != last {
                        keys.append(key)
                        last = key
                    }
                }
                return
            }
            var starts = [Int](repeating: 0, count: width)
            var positions = [Int](repeating: 0, count: width)
            for song in songs {
                let song = Int(song)
                // A song with one value of each: its key at once.
                var key: UInt64 = 0
                var single = true
                for depth in 0..<width {
                    let (offsets, ids) = columnIDs[depth]
                    let start = Int(offsets[song])
                    if Int(offsets[song + 1]) - start != 1 { single = false }
                    key |= UInt64(UInt32(bitPattern: ids[start])) << shifts[depth]
                }
                if single {
                    // Less the repeats of the key before: songs in walk order come album by album.
                    if key != last {
                        keys.append(key)
                        last = key
                    }
                    continue
                }
                // Every combination of its values: the positions counted like an odometer, innermost fastest.
                for depth in 0..<width {
                    starts[depth] = Int(columnIDs[depth].offsets[song])
                    positions[depth] = starts[depth]
                }
                while true {
                    key = 0
                    for depth in 0..<width {
                        key |= UInt64(UInt32(bitPattern: columnIDs[depth].ids[positions[depth]])) << shifts[depth]
                    }
                    if key != last {
                        keys.append(key)
                        last = key
                    }
                    var depth = width - 1
                    while depth >= 0 {
                        positions[depth] += 1
                        if positions[depth] < Int(columnIDs[depth].offsets[song + 1]) { break }
                        positions[depth] = starts[depth]
                        depth -= 1
                    }
                    if depth < 0 { break }
                }
            }
        }
        radixSort(&keys, bits: keyBits)
        var rows: [Int32] = []
        rows.reserveCapacity(keys.count * width)
        var previous: UInt64?
        for key in keys where key != previous {
            previous = key
            for depth in 0..<width {
                rows.append(Int32(truncatingIfNeeded: (key >> shifts[depth]) & ((1 << UInt64(widths[depth])) - 1)))
            }
        }
        return rows
    }

    /// `distinctRows(_:_:)` for columns whose numbers do not fit one 64-bit key: the rows compared number by
    /// number.
    private static func distinctRowsByComparison(_ songs: [Int32], _ columns: [TagColumn]) -> [Int32] {
        let width = columns.count
        var rows: [Int32] = []
        rows.reserveCapacity(songs.count * width)
        Self.withUnsafeIDs(of: columns[...], []) { columnIDs in
            var row = [Int32](repeating: 0, count: width)
            row.withUnsafeMutableBufferPointer { row in
                // Every combination of the song's values, depth by depth.
                func combine(_ song: Int, _ depth: Int) {
                    guard depth < width else {
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
        func precedes(_ a: Int, _ b: Int) -> Bool {
            for depth in 0..<width where rows[a * width + depth] != rows[b * width + depth] {
                return rows[a * width + depth] < rows[b * width + depth]
            }
            return false
        }
        var sorted: [Int32] = []
        var last = -1
        for row in (0..<(rows.count / width)).sorted(by: precedes) where last < 0 || precedes(last, row) {
            sorted.append(contentsOf: rows[(row * width)..<(row * width + width)])
            last = row
        }
        return sorted
    }

    /// Sorts `keys`, which are below 2^`bits`, ascending: a least-significant-digit radix sort, 11 bits a pass,
    /// a pass skipped when every key has the same digit there.
    static func radixSort(_ keys: inout [UInt64], bits: Int) {
        let count = keys.count
        guard count > 1, bits > 0 else { return }
        let digitBits = 11
        let radix = 1 << digitBits
        let mask = UInt64(radix - 1)
        let passes = (bits + digitBits - 1) / digitBits
        var counts = [Int](repeating: 0, count: passes * radix)
        var spare = [UInt64](repeating: 0, count: count)
        keys.withUnsafeMutableBufferPointer { keys in
            spare.withUnsafeMutableBufferPointer { spare in
                counts.withUnsafeMutableBufferPointer { counts in
                    for key in keys {
                        for pass in 0..<passes {
                            counts[pass * radix + Int((key >> UInt64(pass * digitBits)) & mask)] += 1
                        }
                    }
                    var (source, target) = (keys, spare)
                    for pass in 0..<passes {
                        let shift = UInt64(pass * digitBits)
                        let base = pass * radix
                        if counts[base + Int((source[0] >> shift) & mask)] == count { continue }
                        // Each digit's first place in `target`.
                        var next = 0
                        for digit in 0..<radix {
                            let digitCount = counts[base + digit]
                            counts[base + digit] = next
                            next += digitCount
                        }
                        for key in source {
                            let slot = base + Int((key >> shift) & mask)
                            target[counts[slot]] = key
                            counts[slot] += 1
                        }
                        swap(&source, &target)
                    }
                    if source.baseAddress != keys.baseAddress {
                        _ = keys.update(fromContentsOf: source)
                    }
                }
            }
        }
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
}
