// SPDX-License-Identifier: GPL-3.0-or-later

/// `items` grouped by their `keys` (each below `keyCount`), stably: a counting sort, linear in the items.
/// `items[offsets[k]..<offsets[k + 1]]` of the result are the items of key `k`, in their order in `items`.
public func countingSort(keys: [Int32], items: [Int32], keyCount: Int) -> (offsets: [Int32], items: [Int32]) {
    precondition(keys.count == items.count)
    var offsets = [Int32](repeating: 0, count: keyCount + 1)
    for key in keys { offsets[Int(key) + 1] += 1 }
    for index in offsets.indices.dropFirst() { offsets[index] += offsets[index - 1] }
    var next = offsets
    var sorted = [Int32](repeating: 0, count: items.count)
    for (key, item) in zip(keys, items) {
        sorted[Int(next[Int(key)])] = item
        next[Int(key)] += 1
    }
    return (offsets, sorted)
}
