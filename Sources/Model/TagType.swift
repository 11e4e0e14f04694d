// SPDX-License-Identifier: GPL-3.0-or-later

/// A song metadata tag type, in the order `mpd` 0.23 declares them.
///
/// The declaration order is the wire order: `tagtypes` lists tags in it, and masks iterate in it.
/// Names are parsed case-insensitively (ASCII) and always printed with the canonical spelling.
public enum TagType: Int, CaseIterable, Sendable, Hashable, Comparable {
    case artist, artistSort, album, albumSort, albumArtist, albumArtistSort, title, track, name, genre, date
    case originalDate, composer, composerSort, performer, conductor, work, movement, movementNumber, ensemble
    case location, grouping, comment, disc, label
    case musicBrainzArtistID, musicBrainzAlbumID, musicBrainzAlbumArtistID, musicBrainzTrackID
    case musicBrainzReleaseTrackID, musicBrainzWorkID

    /// The canonical spelling used on the wire, in the state file and in the database file.
    public var name: String {
        switch self {
        case .artist: "Artist"
        case .artistSort: "ArtistSort"
        case .album: "Album"
        case .albumSort: "AlbumSort"
        case .albumArtist: "AlbumArtist"
        case .albumArtistSort: "AlbumArtistSort"
        case .title: "Title"
        case .track: "Track"
        case .name: "Name"
        case .genre: "Genre"
        case .date: "Date"
        case .originalDate: "OriginalDate"
        case .composer: "Composer"
        case .composerSort: "ComposerSort"
        case .performer: "Performer"
        case .conductor: "Conductor"
        case .work: "Work"
        case .movement: "Movement"
        case .movementNumber: "MovementNumber"
        case .ensemble: "Ensemble"
        case .location: "Location"
        case .grouping: "Grouping"
        case .comment: "Comment"
        case .disc: "Disc"
        case .label: "Label"
        case .musicBrainzArtistID: "MUSICBRAINZ_ARTISTID"
        case .musicBrainzAlbumID: "MUSICBRAINZ_ALBUMID"
        case .musicBrainzAlbumArtistID: "MUSICBRAINZ_ALBUMARTISTID"
        case .musicBrainzTrackID: "MUSICBRAINZ_TRACKID"
        case .musicBrainzReleaseTrackID: "MUSICBRAINZ_RELEASETRACKID"
        case .musicBrainzWorkID: "MUSICBRAINZ_WORKID"
        }
    }

    /// Parses a tag name the way `mpd` does in commands and in `metadata_to_use`: ASCII case-insensitively.
    ///
    /// - Returns: `nil` for an unknown name.
    public init?(parsing text: some StringProtocol) {
        let lowered = text.lowercased()
        guard let found = TagType.byLowercasedName[lowered] else { return nil }
        self = found
    }

    /// Parses a tag name case-sensitively, as `mpd` does in its state and database files.
    public init?(exactName: some StringProtocol) {
        guard let found = TagType.allCases.first(where: { $0.name == exactName }) else { return nil }
        self = found
    }

    public static func < (lhs: TagType, rhs: TagType) -> Bool { lhs.rawValue < rhs.rawValue }

    private static let byLowercasedName: [String: TagType] = Dictionary(
        uniqueKeysWithValues: TagType.allCases.map { ($0.name.lowercased(), $0) })
}
