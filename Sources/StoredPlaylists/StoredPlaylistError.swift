// SPDX-License-Identifier: GPL-3.0-or-later

/// Why a stored-playlist operation failed, with `mpd`'s wording.
public struct StoredPlaylistError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure; the server maps each to `mpd`'s ACK code.
    public enum Kind: Sendable, Hashable {
        /// No `playlist_directory` is configured.
        case disabled
        /// The name is empty or holds `/`, a newline or a carriage return.
        case badName
        /// There is no playlist of that name.
        case noSuchList
        /// The target name is taken.
        case exists
        /// A position or range outside the playlist.
        case badRange
        /// The playlist already holds `max_playlist_length` entries.
        case tooLarge
        /// The file system refused (read-only directory, full disk, …); the previous file is intact.
        case io
    }

    /// The kind.
    public let kind: Kind
    /// The text for the client.
    public let message: String

    /// Creates an error.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    static let disabled = StoredPlaylistError(.disabled, "Stored playlists are disabled")
    static let badName = StoredPlaylistError(.badName, "Bad playlist name")
    /// `No such playlist`.
    public static let noSuchList = StoredPlaylistError(.noSuchList, "No such playlist")

    /// The message.
    public var description: String { self.message }
}
