// SPDX-License-Identifier: GPL-3.0-or-later

/// A parsed filter: items that must all match (`find`, `search`, `count`, `list`, `playlistfind`…).
///
/// Built the way `mpd` optimizes its filters: nested `AND`s are flattened into the top level, and `(!…)` around
/// a tag or URI comparison becomes that comparison's negation. Matching is pure; any thread may match
/// concurrently.
public struct SongFilter: Sendable {
    /// The items, all of which must match. Empty matches everything (`count` or `list` with no filter).
    public private(set) var items: [FilterItem]

    /// Creates a filter from items, flattening and simplifying them as `mpd` does.
    public init(_ items: [FilterItem] = []) {
        self.items = []
        for item in items { self.append(item) }
    }

    /// Adds an item (flattening an `AND`, simplifying a `NOT`).
    public mutating func append(_ item: FilterItem) {
        switch SongFilter.simplified(item) {
        case .and(let inner): self.items.append(contentsOf: inner)
        case let other: self.items.append(other)
        }
    }

    /// Whether there are no items.
    public var isEmpty: Bool { self.items.isEmpty }

    /// Whether `subject` satisfies every item.
    @inlinable
    public func matches<Subject: FilterSubject>(_ subject: Subject) -> Bool {
        for item in self.items where !item.matches(subject) { return false }
        return true
    }

    /// The first top-level `base` directory, which `mpd` also uses as the root of the database walk: a base that
    /// is neither a directory nor a song fails the command with `No such directory` (code 50).
    public var base: String? {
        for case .base(let directory) in self.items { return directory }
        return nil
    }

    /// Whether any item other than `base` is present (`mpd`'s `HasOtherThanBase`).
    public var hasOtherThanBase: Bool {
        self.items.contains { if case .base = $0 { false } else { true } }
    }

    private static func simplified(_ item: FilterItem) -> FilterItem {
        switch item {
        case .and(let inner):
            var flat: [FilterItem] = []
            for child in inner {
                switch simplified(child) {
                case .and(let grandchildren): flat.append(contentsOf: grandchildren)
                case let other: flat.append(other)
                }
            }
            return flat.count == 1 ? flat[0] : .and(flat)
        case .not(let inner):
            switch simplified(inner) {
            case .tag(let type, var matcher):
                matcher.negated.toggle()
                return .tag(type, matcher)
            case .anyTag(var matcher):
                matcher.negated.toggle()
                return .anyTag(matcher)
            case .uri(var matcher):
                matcher.negated.toggle()
                return .uri(matcher)
            case let other: return .not(other)
            }
        default: return item
        }
    }
}
