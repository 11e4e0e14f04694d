// SPDX-License-Identifier: GPL-3.0-or-later

/// A binary min-heap.
struct Heap<Element: Comparable> {
    private var storage: [Element] = []

    var isEmpty: Bool { self.storage.isEmpty }
    var count: Int { self.storage.count }
    var min: Element? { self.storage.first }

    mutating func insert(_ element: Element) {
        self.storage.append(element)
        var child = self.storage.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard self.storage[child] < self.storage[parent] else { break }
            self.storage.swapAt(child, parent)
            child = parent
        }
    }

    mutating func popMin() -> Element? {
        guard !self.storage.isEmpty else { return nil }
        self.storage.swapAt(0, self.storage.count - 1)
        let result = self.storage.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < self.storage.count && self.storage[left] < self.storage[smallest] { smallest = left }
            if right < self.storage.count && self.storage[right] < self.storage[smallest] { smallest = right }
            if smallest == parent { break }
            self.storage.swapAt(parent, smallest)
            parent = smallest
        }
        return result
    }
}
