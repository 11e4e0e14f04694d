// SPDX-License-Identifier: GPL-3.0-or-later

extension TagType {
    /// The tags `mpd` 0.23 consults, in order, when a song lacks this one, for filters, `list` and `count group`.
    ///
    /// AlbumArtist→Artist; ArtistSort→Artist; AlbumSort→Album; AlbumArtistSort→AlbumArtist→Artist (ArtistSort is
    /// *not* tried for AlbumArtistSort). The first fallback the song has decides; later ones are not consulted.
    /// Sorting uses different rules (see `SortKey`).
    public var fallbackTags: [TagType] {
        switch self {
        case .albumArtistSort: TagType.albumArtistSortFallbacks
        case .albumArtist, .artistSort: TagType.artistFallback
        case .albumSort: TagType.albumFallback
        default: TagType.noFallbacks
        }
    }

    private static let albumArtistSortFallbacks: [TagType] = [.albumArtist, .artist]
    private static let artistFallback: [TagType] = [.artist]
    private static let albumFallback: [TagType] = [.album]
    private static let noFallbacks: [TagType] = []
}
