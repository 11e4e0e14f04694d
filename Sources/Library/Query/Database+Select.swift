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
                let prepared = PreparedFilter(self, filter: filter, valueCache: false)
                return withUnsafePointer(to: self.songs) { prepared.matches(song, in: $0) } ? [song] : []
            } else {
                throw .noSuchDirectory
            }
        } else {
            start = 0
        }
        if start == 0 && filter.isEmpty {
            return self.visibleSongs()
        }
        // Below a base directory: the songs of its subtree, one contiguous run of song numbers, which are the
        // songs the `base` items naming that directory match (without mount points, under which a song's URI
        // is matched relative to its storage), so those items are answered by the range.
        var remaining = filter
        var subtree: Range<Int32>?
        if start != 0, !self.hasMountPoints, let base = filter.base, let songs = self.subtreeSongs(start) {
            subtree = songs
            remaining = SongFilter(
                filter.items.filter { item in
                    guard case .base(let directory) = item else { return true }
                    return !ByteString.sameBytes(directory, base)
                })
        }
        // An exact, case-sensitive tag comparison is a lookup: the candidates are that value's songs (for a tag
        // with fallbacks, also the songs that defer to a fallback with that value), in ascending order, which is
        // the walk order (a directory's subtree is one contiguous run of songs). Negated, it is the other songs
        // of the library, so only from the root.
        var candidates: [Int32]?
        if let position = self.lookupPosition(remaining.items, negatedToo: start == 0),
            case .tag(let type, let matcher) = remaining.items[position]
        {
            let matching = self.candidates(type, equalTo: matcher.value)
            candidates = matcher.negated ? self.complement(matching) : matching
            var rest = remaining.items
            rest.remove(at: position)
            remaining = SongFilter(rest)
        } else if let song = self.songWithURI(of: remaining.items) {
            // `(file == 'URI')`: at most that song. The item stays in the filter, which decides.
            candidates = [song]
        }
        if let subtree, let all = candidates {
            // The candidates are ascending: those of the subtree are one slice.
            candidates = Array(all[Self.slice(of: all, in: subtree)])
        }
        // Many songs to match: each distinct value is compared once; a few candidates are compared directly.
        let prepared = PreparedFilter(self, filter: remaining, valueCache: (candidates?.count ?? Int.max) > 1024)
        let visible = candidates.map { self.hasHiddenSongs ? $0.filter { !self.isHidden($0) } : $0 }
        if let visible, prepared.isEmpty { return visible }
        // Songs are matched in place, in the table.
        return withUnsafePointer(to: self.songs) { songs in
            if let visible { return prepared.filter(visible, in: songs) }
            if start == 0 || subtree != nil {
                // The whole walk from the root, or from a directory, visits the songs in index order.
                let range = subtree ?? 0..<Int32(songs.pointee.count)
                return prepared.filter(
                    self.hasHiddenSongs ? range.filter { !self.isHidden($0) } : Self.numbers(range), in: songs)
            }
            var walked: [Int32] = []
            self.walk(from: start, recursive: true) { walked.append($0) }
            return prepared.filter(walked, in: songs)
        }
    }

    /// The songs of directory `index` and of every directory below it, when they are one run of song numbers in
    /// walk order (a directory's own songs, then each child's subtree in turn), as a snapshot built by an update
    /// or read from a well-formed database file numbers them; `nil` otherwise.
    /// The ends of every directory's run are found in one walk, on first use (`QueryIndexes.subtreeEnds`).
    func subtreeSongs(_ index: Int32) -> Range<Int32>? {
        let end = self.queryIndexes.subtreeEnds(self.directories)[Int(index)]
        return end >= 0 ? self.directories[Int(index)].songs.lowerBound..<end : nil
    }

    /// The positions of `sorted` (ascending) whose songs lie in `range`.
    private static func slice(of sorted: [Int32], in range: Range<Int32>) -> Range<Int> {
        func firstPosition(notBelow bound: Int32) -> Int {
            var (low, high) = (0, sorted.count)
            while low < high {
                let middle = (low + high) / 2
                if sorted[middle] < bound { low = middle + 1 } else { high = middle }
            }
            return low
        }
        return firstPosition(notBelow: range.lowerBound)..<firstPosition(notBelow: range.upperBound)
    }

    /// The song whose URI is byte-equal to the operand of the first top-level exact, case-sensitive,
    /// not negated `file` comparison, if there is one and the URI lookup finds that song; `nil` otherwise (then
    /// every song is matched, as without the lookup). URIs are unique: no other song can match it.
    private func songWithURI(of items: [FilterItem]) -> Int32? {
        for item in items {
            guard case .uri(let matcher) = item, matcher.operation == .equals, !matcher.foldCase, !matcher.negated
            else { continue }
            guard let song = self.song(at: matcher.value),
                ByteString.sameBytes(self.songs.uri(song), matcher.value)
            else { return nil }
            return song
        }
        return nil
    }

    /// The position of the item to look up: of the exact, case-sensitive tag comparisons with an operand, the
    /// one with the fewest postings (the tag's and its fallbacks': the most selective), or with `negatedToo`,
    /// when there is none, the first such negated one.
    private func lookupPosition(_ items: [FilterItem], negatedToo: Bool) -> Int? {
        var negated: Int?
        var best: (position: Int, postings: Int)?
        for (position, item) in items.enumerated() {
            guard case .tag(let type, let matcher) = item, matcher.operation == .equals, !matcher.foldCase,
                !matcher.value.isEmpty
            else { continue }
            if matcher.negated {
                if negatedToo && negated == nil { negated = position }
                continue
            }
            let postings = ([type] + type.fallbackTags).reduce(0) {
                $0 + self.postings($1).count(with: matcher.value)
            }
            if best == nil || postings < best!.postings { best = (position, postings) }
        }
        return best?.position ?? negated
    }

    /// The songs `(type == value)` matches, in ascending order: those whose `type` has a value byte-equal to
    /// `value`, and for a tag with fallbacks (`FilterItem`'s rule: the first of the tag and its fallbacks that a
    /// song has decides) those without it whose deciding fallback has such a value.
    ///
    /// The postings are keyed by Swift strings, which compare canonically equivalent text as equal (a Kelvin sign
    /// and a K), where `mpd` compares bytes: candidates are compared (in place). A long list asks whether every
    /// list holds one value (worked out once, over the whole library), and then one candidate tells for all.
    private func candidates(_ type: TagType, equalTo value: String) -> [Int32] {
        let songs = self.songs
        func hasValue(_ index: Int32, _ type: TagType) -> Bool {
            var found = false
            songs.forEachValue(index, type) { number in
                if !found && songs.values.value(number, is: value) { found = true }
            }
            return found
        }
        let chain = [type] + type.fallbackTags
        var result: [Int32] = []
        for (depth, tag) in chain.enumerated() {
            let postings = self.songs(with: tag, value: value)
            guard let first = postings.first else { continue }
            let byteExact = postings.count > 1024 && self.hasByteExactPostings(tag)
            if byteExact && !hasValue(first, tag) { continue }
            let decided = chain[..<depth]
            if depth == 0 && byteExact {
                result = postings
                continue
            }
            for song in postings where byteExact || hasValue(song, tag) {
                // A song with an earlier tag of the chain is decided by that one.
                if decided.contains(where: { songs.forEachValue(song, $0) { _ in } }) { continue }
                result.append(song)
            }
        }
        // Each level's songs are ascending, and no song is in two: the first tag it has decides.
        if chain.count > 1 { result.sort() }
        return result
    }

    /// Every song but the hidden ones (`hide_playlist_targets`), in walk order.
    public func visibleSongs() -> [Int32] {
        guard self.hasHiddenSongs else { return Self.numbers(0..<Int32(self.songs.count)) }
        return (0..<Int32(self.songs.count)).filter { !self.isHidden($0) }
    }

    /// The numbers of `range`, in order, written in one loop (`Array(range)` goes through the generic iterator,
    /// which cost a fifth of a whole-library `search`).
    static func numbers(_ range: Range<Int32>) -> [Int32] {
        [Int32](unsafeUninitializedCapacity: range.count) { buffer, count in
            var number = range.lowerBound
            for position in 0..<range.count {
                buffer[position] = number
                number &+= 1
            }
            count = range.count
        }
    }

    /// The songs of the library that are not in `songs` (ascending), in ascending order.
    private func complement(_ songs: [Int32]) -> [Int32] {
        let total = self.songs.count
        // A merge with the ascending list, written in place.
        return songs.withUnsafeBufferPointer { excluded in
            [Int32](unsafeUninitializedCapacity: total) { buffer, count in
                var next = 0
                var written = 0
                for song in 0..<Int32(total) {
                    while next < excluded.count && excluded[next] < song { next += 1 }
                    if next < excluded.count && excluded[next] == song { continue }
                    buffer[written] = song
                    written += 1
                }
                count = written
            }
        }
    }
}
