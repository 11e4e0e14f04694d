// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// A song in the queue: what `playlistinfo` prints and what the player needs to find the file.
///
/// A copy taken from the library snapshot when the song was added (`mpd`'s "detached" song), so the queue
/// does not depend on the snapshot it came from.
public struct QueueSong: Sendable, Hashable {
    /// The URI relative to the music directory (or an absolute path or URL for songs from outside it).
    public var uri: String
    /// Modification time, seconds since the epoch, if known.
    public var modificationTime: Int64?
    /// Tags, duration, audio format and ReplayGain.
    public var info: SongInfo
    /// Where playback starts (`rangeid`), in milliseconds; 0 is the beginning.
    public var startMilliseconds: UInt64
    /// Where playback ends (`rangeid`), in milliseconds; 0 is the end of the file.
    public var endMilliseconds: UInt64
    /// The file played when it is not `uri` (`mpd`'s `real_uri`): for a track of a cue sheet's directory, the
    /// file the sheet names.
    public var realURI: String?

    /// Creates a queue song.
    public init(
        uri: String, modificationTime: Int64? = nil, info: SongInfo = SongInfo(), startMilliseconds: UInt64 = 0,
        endMilliseconds: UInt64 = 0, realURI: String? = nil
    ) {
        self.realURI = realURI
        self.uri = uri
        self.modificationTime = modificationTime
        self.info = info
        self.startMilliseconds = startMilliseconds
        self.endMilliseconds = endMilliseconds
    }

    /// The length heard: the range's length, or the rest of the file after the start; `nil` when unknown.
    public var durationMilliseconds: UInt64? {
        var end = self.endMilliseconds
        if end == 0 {
            guard let total = self.info.durationMilliseconds else { return nil }
            end = total
        }
        // mpd subtracts without a check; a start past the end cannot be set through `rangeid`.
        return end >= self.startMilliseconds ? end - self.startMilliseconds : 0
    }

    /// Whether the song is a URL an input plugin opens (a stream, a remote file).
    public var isRemote: Bool { URIScheme.hasScheme(self.uri) }

    /// Whether the song lives in the music directory (a relative URI), as opposed to an absolute path or URL.
    public var isInDatabase: Bool {
        !self.uri.hasPrefix("/") && !self.isRemote
    }
}

/// What a queue item holds: a song of the library's snapshot by number, sharing the snapshot's storage (no tag is
/// copied, as `mpd`'s queue shares its database songs' tags), or a song value of its own (streams, files outside
/// the music directory, cue tracks, songs whose range or tags were edited).
public enum QueueEntry: Sendable {
    /// Song `number` of `store`.
    case stored(any SongStore, Int32)
    /// A song of its own.
    case song(QueueSong)

    /// The song, built from the store when stored.
    public var song: QueueSong {
        switch self {
        case .stored(let store, let number): QueueEntry.song(number, of: store)
        case .song(let song): song
        }
    }

    /// Song `number` of `store` as a queue song: the whole file, its URI, time and info.
    static func song(_ number: Int32, of store: any SongStore) -> QueueSong {
        QueueSong(uri: store.uri(number), modificationTime: store.modificationTime(number), info: store.info(number))
    }
}
