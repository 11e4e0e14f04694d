// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Library
import MPDProtocol
import Model
import Network
import Playback
import Playlists
import StoredPlaylists

/// What the server needs from the configuration, with `mpd`'s defaults.
public struct ServerOptions: Sendable {
    /// Where to listen; empty means `any` on `port`.
    public var listenAddresses: [ListenAddress] = []
    /// The TCP port for addresses that name none.
    public var port: UInt16 = 6600
    /// Seconds of silence after which a client that is not idling is disconnected.
    public var connectionTimeoutSeconds: Double = 60
    /// Connections beyond this are closed on accept.
    public var maxConnections = 100
    /// The largest command list, in bytes (sum of line lengths plus one each).
    public var maxCommandListSize = 2048 * 1024
    /// The most output a client may have queued before a non-streamed reply drops it.
    public var maxOutputBufferSize = 8192 * 1024
    /// The tags the server knows (`metadata_to_use`).
    public var metadataToUse = TagMask.defaultMetadata
    /// Passwords and the permissions each grants.
    public var passwords: [String: Permission] = [:]
    /// Permissions of a TCP client that has sent no password.
    public var defaultPermissions = Permission.all
    /// Permissions of TCP clients by numeric host address (`host_permissions`), instead of the default.
    public var hostPermissions: [String: Permission] = [:]
    /// Permissions of a Unix-socket client that has sent no password.
    public var localPermissions = Permission.all
    /// The most songs the queue holds (`max_playlist_length`).
    public var maxPlaylistLength = 16384
    /// The ReplayGain mode at start-up (`replaygain`).
    public var replayGainMode = ReplayGainMode.off
    /// The music directory, absolute, if any.
    public var musicDirectory: String?
    /// How the music directory is scanned; `nil` without a music directory (no database).
    public var library: LibraryOptions?
    /// Makes the storage for a URI a storage plugin takes (`mount`, `listfiles URI`, mounts restored from the
    /// state file): `nil` when Fermata has no such storage (the daemon has one for each of `StoragePlugin.all`);
    /// throws when the storage cannot be made. There with or without a music directory, as `listfiles URI` is.
    public var storageOpener: @Sendable (String) throws -> (any Storage)? = { _ in nil }
    /// Reads the picture embedded in a song file (`readpicture`); `nil` when no format can.
    public var pictureReader: (@Sendable (String) throws -> Picture?)?
    /// The stored playlists (`playlist_directory`, `save_absolute_paths_in_playlists`); no directory
    /// disables them.
    public var playlists = PlaylistDirectory(path: nil, musicDirectory: nil)
    /// The sticker database file (`sticker_file`); `nil` disables stickers.
    public var stickerFile: String?
    /// The state file (`state_file`, `state_file_interval`, `restore_paused`); `nil` disables it.
    public var stateFile: StateFileOptions?
    /// The playlist plugins the `playlist_plugin` blocks enable (`load`, `listplaylist` of playlist files
    /// and URLs).
    public var playlistPlugins = PlaylistRegistry.standard
    /// Reads a song file's raw name/value pairs (`readcomments`); `nil` when no format can.
    public var commentReader: (@Sendable (String) throws -> [(name: String, value: String)])?
    /// The decoder plugins `decoders` lists: name, file suffixes and MIME types, in registry order.
    public var decoders: [(name: String, suffixes: [String], mimeTypes: [String])] = []
    /// The URL schemes the input plugins open (`http://`, `https://`…), sorted, as `urlhandlers` lists them
    /// after `file://`; `add` and `addid` queue URLs of these schemes (`mpd`'s `uri_supported_scheme`).
    public var remoteSchemes: [String] = []
    /// Opens a URL of one of `remoteSchemes` through its input plugin (curl), for remote playlists (`load`,
    /// `listplaylist`); `nil` when no input plugin is configured. It blocks: only called off the loop.
    public var remoteOpener: RemoteOpener?
    /// What the format plugins make of an opened remote stream (`lsinfo URL`, `mpd`'s `tag_stream_scan`).
    /// Blocks: only called off the loop.
    public var streamTagScanner: (@Sendable (any InputStream) -> StreamTagScan)?
    /// What the format plugins' scan of an opened remote stream reports as name/value pairs, then the generic
    /// tags' (`readcomments URL`, `mpd`'s `TagScanStream`). Blocks: only called off the loop.
    public var streamCommentReader:
        (@Sendable (any InputStream) throws(StreamReadError) -> [(name: String, value: String)])?
    /// The first picture the format plugins' scan of an opened remote stream reports, else the generic tags'
    /// (`readpicture URL`); `nil` when it has none. Blocks: only called off the loop.
    public var streamPictureReader: (@Sendable (any InputStream) throws(StreamReadError) -> Picture?)?

    /// Computes `getfingerprint`'s answer (libchromaprint over the song's decoded audio); `nil` when
    /// Fermata has none. Blocks: only called off the loop.
    public var fingerprinter: (@Sendable (FingerprintSource, InputCancellation) -> Result<String, FingerprintError>)?

    /// Default options.
    public init() {}
}

/// What `getfingerprint` decodes (`ServerOptions.fingerprinter`).
public enum FingerprintSource: Sendable, Equatable {
    /// A local file: its path, and the URI the client named it by (whose suffix chooses the plugins).
    case file(path: String, uri: String)
    /// A URL an input plugin opens.
    case stream(url: String)
}

/// What a scan of a remote stream found (`ServerOptions.streamTagScanner`).
public enum StreamTagScan: Sendable {
    /// A plugin took the stream: the tags it reports (maybe none).
    case tags([TagItem])
    /// No plugin takes the stream (`mpd`: "No such file").
    case notRecognized
    /// The plugin failed (`mpd` answers with its error).
    case failed(message: String)
}

/// Why reading a remote stream's comments or picture failed (`ServerOptions.streamCommentReader`).
public enum StreamReadError: Error, Sendable {
    /// No plugin's scan takes the stream (`mpd`: "Failed to load file").
    case notRecognized
    /// A plugin or the input failed: `mpd`'s words.
    case failed(message: String)
}

/// The database settings: the updater and where the database file lives.
public struct LibraryOptions: Sendable {
    /// Scans the music directory.
    public var updater: Updater
    /// The database file (`db_file`), if any.
    public var databaseFile: String?
    /// Whether the database file is written gzip-compressed (a `database` block's `compress`).
    public var compressDatabaseFile = true
    /// Whether the files cue sheets' tracks name are left out of listings (a `database` block's
    /// `hide_playlist_targets`).
    public var hidePlaylistTargets = true
    /// Watch the music directory with inotify and update what changes (`auto_update`).
    public var autoUpdate: Bool
    /// How deep below the music directory to watch (`auto_update_depth`; 0 is the music directory
    /// itself, `nil` is unlimited).
    public var autoUpdateDepth: Int?
    /// Where mounted storages' databases are kept (`cache_directory`); `nil`: `mount` is refused, as in `mpd`.
    public var cacheDirectory: String?

    /// Creates database settings.
    public init(updater: Updater, databaseFile: String?, autoUpdate: Bool = false, autoUpdateDepth: Int? = nil) {
        self.updater = updater
        self.databaseFile = databaseFile
        self.autoUpdate = autoUpdate
        self.autoUpdateDepth = autoUpdateDepth
    }
}
