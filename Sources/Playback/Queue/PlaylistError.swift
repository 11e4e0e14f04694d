// SPDX-License-Identifier: GPL-3.0-or-later

/// Why a queue or playback command failed, with `mpd`'s text; the server maps `kind` to the `ACK` code.
public struct PlaylistError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `mpd`'s `PlaylistResult`.
    public enum Kind: Sendable, Equatable {
        /// A position or range outside the queue (`ACK` 2).
        case badRange
        /// No song with that id (`ACK` 50).
        case noSuchSong
        /// Not playing (`ACK` 55).
        case notPlaying
        /// The queue is full (`ACK` 51).
        case tooLarge
        /// Not allowed now (`ACK` 4).
        case denied
        /// The player failed (`ACK` 5).
        case player
    }

    /// The class of failure.
    public var kind: Kind
    /// The message, exactly as `mpd` words it.
    public var message: String

    /// Creates an error.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { self.message }

    /// `Bad song index`.
    public static let badSongIndex = PlaylistError(.badRange, "Bad song index")
    /// `No such song`.
    public static let noSuchSong = PlaylistError(.noSuchSong, "No such song")
    /// `Not playing`.
    public static let notPlaying = PlaylistError(.notPlaying, "Not playing")
    /// `Playlist is too large`.
    public static let tooLarge = PlaylistError(.tooLarge, "Playlist is too large")
}
