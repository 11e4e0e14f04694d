// SPDX-License-Identifier: GPL-3.0-or-later

/// Something a `SongFilter` can test without copying it: a library song, a queue entry, a playlist entry.
///
/// Conformers hand out views of what they store. `foldedTagValues(_:)` and `foldedURI` have defaults that fold
/// on every call; a library index that keeps pre-folded values (`FoldedText`) overrides them so case-insensitive
/// searches fold only the needle.
public protocol FilterSubject {
    /// The values of one tag, in stored order.
    associatedtype TagValues: Sequence<String>
    /// The same values, folded with `FilterCaseFold.fold(_:)`.
    associatedtype FoldedTagValues: Sequence<FoldedText> = LazyMapSequence<TagValues, FoldedText>

    /// The song URI as `file:` prints it: relative to the music directory, or a remote URL.
    var uri: String { get }

    /// `uri`, folded with `FilterCaseFold.fold(_:)`.
    var foldedURI: FoldedText { get }

    /// Every value the song has for `type` (empty when the tag is absent).
    func tagValues(_ type: TagType) -> TagValues

    /// `tagValues(type)`, each folded with `FilterCaseFold.fold(_:)`.
    func foldedTagValues(_ type: TagType) -> FoldedTagValues

    /// The file's modification time in seconds since the UNIX epoch, or `nil` when unknown (never matches
    /// `modified-since`).
    var lastModified: Int64? { get }

    /// The decoded audio format, or `nil` when unknown (never matches `AudioFormat`).
    var audioFormat: AudioFormat? { get }

    /// The tag types the song may have values for (a superset is fine): `any` looks only at these. Defaults to
    /// every tag type.
    var presentTags: TagMask { get }

    /// For a song of a storage mounted into the database, its mount point: `uri` is then relative to the storage,
    /// as `mpd`'s mounted database matches its songs (a `base` equal to the mount point matches them all).
    /// Defaults to `nil`.
    var mountPoint: String? { get }
}

extension FilterSubject {
    /// Every tag type.
    @inlinable
    public var presentTags: TagMask { .all }

    /// Folds `uri` on every call.
    @inlinable
    public var foldedURI: FoldedText { FoldedText(folding: self.uri) }

    /// No mount point.
    @inlinable
    public var mountPoint: String? { nil }
}

extension FilterSubject where FoldedTagValues == LazyMapSequence<TagValues, FoldedText> {
    /// Folds each value of `tagValues(type)` lazily, as it is compared.
    @inlinable
    public func foldedTagValues(_ type: TagType) -> FoldedTagValues {
        self.tagValues(type).lazy.map(FoldedText.init(folding:))
    }
}
