// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import PCRE
import Testing

@testable import MPDProtocol

/// Replays the commands recorded from mpd 0.23.12 (`FilterProbes`) through `FilterSelection.parse` and
/// `SongFilter.matches` over the same library, and expects the same files or the same ACK text.
struct FilterDifferentialTests {
    @Test(arguments: FilterProbes.expressions)
    func expressions(probe: FilterProbe) { Self.replay(probe) }

    @Test(arguments: FilterProbes.legacyAndSelection)
    func legacyPairsSortAndWindow(probe: FilterProbe) { Self.replay(probe) }

    @Test(arguments: FilterProbes.caseFolding)
    func caseFoldingSearch(probe: FilterProbe) { Self.replay(probe) }

    static func replay(_ probe: FilterProbe) {
        let library = FilterTestSong.library
        let expected: FilterProbe.Expected
        switch probe.expected {
        case .all: expected = .files(library.map(\.uri))
        case .allExcept(let excluded): expected = .files(library.map(\.uri).filter { !excluded.contains($0) })
        case let other: expected = other
        }
        let actual: FilterProbe.Expected
        do {
            let selection = try FilterSelection.parse(
                arguments: probe.arguments[...], foldCase: probe.command == "search", regex: RegularExpression.self)
            var songs = library.filter { selection.filter.matches($0) }
            if let sort = selection.sort { songs = Self.sorted(songs, by: sort) }
            actual = .files(songs[selection.window.indices(count: songs.count)].map(\.uri))
        } catch {
            #expect(error.code == .arg)
            actual = .ack(error.message)
        }
        #expect(actual == expected)
    }

    /// mpd's sort, enough for the recorded probes: first value byte-wise (no fallbacks needed here), stable.
    private static func sorted(_ songs: [FilterTestSong], by order: SortOrder) -> [FilterTestSong] {
        func less(_ a: FilterTestSong, _ b: FilterTestSong) -> Bool {
            switch order.key {
            case .lastModified: return a.lastModified! < b.lastModified!
            case .tag(let tag):
                let left = Array((a.tagValues(tag).first ?? "").utf8)
                let right = Array((b.tagValues(tag).first ?? "").utf8)
                return left.lexicographicallyPrecedes(right)
            }
        }
        let indexed = songs.enumerated().sorted { lhs, rhs in
            let before = order.descending ? less(rhs.element, lhs.element) : less(lhs.element, rhs.element)
            let after = order.descending ? less(lhs.element, rhs.element) : less(rhs.element, lhs.element)
            return before || (!after && lhs.offset < rhs.offset)
        }
        return indexed.map(\.element)
    }
}
