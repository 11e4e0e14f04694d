// SPDX-License-Identifier: GPL-3.0-or-later

import Library

extension SearchCommands {
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
}
