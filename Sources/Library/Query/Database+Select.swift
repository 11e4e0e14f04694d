// SPDX-License-Identifier: GPL-3.0-or-later

import Model

extension Database {
    /// The songs `filter` selects, in walk order, starting at its `base` when it has one: the selection planner.
    ///
    /// An exact, case-sensitive tag item without fallbacks narrows the candidates to that value's postings; the
    /// other items are matched through a `PreparedFilter` on the candidates, on the whole table (a walk from the
    /// root visits the songs in index order) or along the walk of the base directory.
    ///
    /// - Throws: `QueryError.noSuchDirectory` for a base that is neither a directory nor a song.
    public func select(_ filter: SongFilter) throws(QueryError) -> [Int32] {
        let start: Int32
        if let base = filter.base, !base.isEmpty, base != "/" {
            if let directory = self.directory(at: base) {
                start = directory
            } else if let song = self.song(at: base), !base.contains("//") {
                let prepared = PreparedFilter(self, filter: filter)
                return withUnsafePointer(to: self.songs) { prepared.matches(song, in: $0) } ? [song] : []
            } else {
                throw .noSuchDirectory
            }
        } else {
            start = 0
        }
        if start == 0 && filter.isEmpty {
            return Array(0..<Int32(self.songs.count))
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
            candidates = self.candidates(type, equalTo: matcher.value)
            var rest = filter.items
            rest.remove(at: position)
            remaining = SongFilter(rest)
            break
        }
        let prepared = PreparedFilter(self, filter: remaining)
        if let candidates, prepared.isEmpty { return candidates }
        // Songs are matched in place, in the table.
        return withUnsafePointer(to: self.songs) { songs in
            if let candidates { return candidates.filter { prepared.matches($0, in: songs) } }
            var result: [Int32] = []
            if start == 0 {
                // The whole walk from the root visits the songs in index order.
                for index in 0..<Int32(songs.pointee.count) where prepared.matches(index, in: songs) {
                    result.append(index)
                }
                return result
            }
            self.walk(from: start, recursive: true) { index in
                if prepared.matches(index, in: songs) { result.append(index) }
            }
            return result
        }
    }

    /// The songs whose `type` has a value byte-equal to `value`, in ascending order.
    ///
    /// The postings are keyed by Swift strings, which compare canonically equivalent text as equal (a Kelvin sign
    /// and a K), where `mpd` compares bytes: candidates are compared (in place). A long list asks whether every
    /// list holds one value (worked out once, over the whole library), and then one candidate tells for all.
    private func candidates(_ type: TagType, equalTo value: String) -> [Int32] {
        let songs = self.songs
        func hasValue(_ index: Int32) -> Bool {
            var found = false
            songs.forEachValue(index, type) { number in
                if !found && songs.values.value(number, is: value) { found = true }
            }
            return found
        }
        let postings = self.songs(with: type, value: value)
        if postings.count > 1024, self.hasByteExactPostings(type), let first = postings.first {
            return hasValue(first) ? postings : []
        }
        return postings.filter(hasValue)
    }
}
