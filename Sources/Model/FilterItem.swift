// SPDX-License-Identifier: GPL-3.0-or-later

/// One node of a filter expression.
public indirect enum FilterItem: Sendable {
    /// `(TAG op 'VALUE')` or a legacy `TAG VALUE` pair, with `mpd`'s tag fallbacks and empty-value rule.
    case tag(TagType, StringMatcher)
    /// `(any op 'VALUE')`: any value of any tag (not the URI).
    case anyTag(StringMatcher)
    /// `(file op 'VALUE')` (or `filename`): the song URI.
    case uri(StringMatcher)
    /// `(base 'DIR')`: the URI is DIR or lies below `DIR/` (byte-wise prefix).
    case base(String)
    /// `(modified-since 'T')`: the file's mtime is at or after T, in seconds since the epoch.
    ///
    /// Compared as `mpd` does, in nanoseconds with 64-bit wrap-around, so a time before 1677 or after 2262 wraps
    /// (e.g. `9999-01-01` matches every song).
    case modifiedSince(Int64)
    /// `(AudioFormat == 'R:B:C')` or `=~` with `*` fields; songs with an unknown format never match.
    case audioFormat(AudioFormatMask)
    /// `(!EXPR)`.
    case not(FilterItem)
    /// `(EXPR AND EXPR …)`.
    case and([FilterItem])
    /// A legacy `AudioFormat VALUE` pair: `mpd` 0.23 accepts it as a tag filter on a non-tag and it never matches.
    case never

    /// Whether `subject` satisfies this item.
    ///
    /// Inlinable so that callers' concrete subject types are specialized (no generic dispatch per song).
    @inlinable
    public func matches<Subject: FilterSubject>(_ subject: Subject) -> Bool {
        switch self {
        case .tag(let type, let matcher): return Self.matchTag(type, matcher, subject)
        case .anyTag(let matcher):
            let present = subject.presentTags
            for type in Self.allTagTypes where present.contains(type) {
                if Self.anyValueMatches(type, matcher, subject) == true { return !matcher.negated }
            }
            return matcher.negated
        case .uri(let matcher):
            if matcher.usesFoldedHaystack {
                return matcher.matchesIgnoringNegation(folded: subject.foldedURI) != matcher.negated
            }
            return matcher.matches(subject.uri)
        case .base(let directory):
            // As mpd, which drops a base equal to the mount point before asking the mounted database.
            if let mount = subject.mountPoint, mount == directory { return true }
            return Self.isSameOrBelow(subject.uri, directory)
        case .modifiedSince(let seconds):
            guard let modified = subject.lastModified else { return false }
            return modified &* 1_000_000_000 >= seconds &* 1_000_000_000
        case .audioFormat(let mask):
            guard let format = subject.audioFormat, format.sampleRate != 0 else { return false }
            return mask.matches(format)
        case .not(let inner): return !inner.matches(subject)
        case .and(let items): return items.allSatisfy { $0.matches(subject) }
        case .never: return false
        }
    }

    /// `mpd`'s tag rule: any value matching decides; an absent tag defers to the first present fallback; with
    /// neither, an empty operand matches.
    @inlinable
    static func matchTag<Subject: FilterSubject>(
        _ type: TagType, _ matcher: StringMatcher, _ subject: Subject
    ) -> Bool {
        if let found = anyValueMatches(type, matcher, subject) { return found != matcher.negated }
        for fallback in type.fallbackTags {
            if let found = anyValueMatches(fallback, matcher, subject) { return found != matcher.negated }
        }
        return matcher.isEmpty != matcher.negated
    }

    /// Whether some value of `type` matches (ignoring negation), or `nil` when the song has no such value.
    @inlinable
    static func anyValueMatches<Subject: FilterSubject>(
        _ type: TagType, _ matcher: StringMatcher, _ subject: Subject
    ) -> Bool? {
        var present = false
        if matcher.usesFoldedHaystack {
            for value in subject.foldedTagValues(type) {
                if matcher.matchesIgnoringNegation(folded: value) { return true }
                present = true
            }
        } else {
            for value in subject.tagValues(type) {
                if matcher.matchesIgnoringNegation(value) { return true }
                present = true
            }
        }
        return present ? false : nil
    }

    /// `TagType.allCases`, built once (the synthesized property builds a new array on every call).
    @usableFromInline
    static let allTagTypes = TagType.allCases

    /// `uri_is_child_or_same`: equal, or `parent` is a byte prefix ending at a `/` boundary (an empty parent
    /// contains every non-empty URI).
    @usableFromInline
    static func isSameOrBelow(_ uri: String, _ parent: String) -> Bool {
        UTF8Bytes.withBytes(uri) { child in
            UTF8Bytes.withBytes(parent) { parent in
                if UTF8Bytes.equal(child, parent) { return true }
                guard child.count > parent.count else { return false }
                for index in 0..<parent.count where child[index] != parent[index] { return false }
                let slash = UInt8(ascii: "/")
                return parent.isEmpty || parent[parent.count - 1] == slash || child[parent.count] == slash
            }
        }
    }
}
