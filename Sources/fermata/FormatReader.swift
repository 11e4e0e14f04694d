// SPDX-License-Identifier: GPL-3.0-or-later

import Formats
import Input
import Library
import Model
import Playlists
import Posix

/// Reads songs for the library through the format plugins: the composition root's bridge between the
/// scanner and the formats it should know.
struct FormatReader: SongInfoReader {
    /// The plugins, looked up by file suffix.
    let registry: FormatRegistry
    /// The tag types kept (`metadata_to_use`): only these count when `mpd` decides on its generic tag scan.
    let metadata: TagMask
    /// The playlist plugins the configuration enables.
    let playlists: PlaylistRegistry
    /// Opens the songs of mounted storages (the daemon's input plugins), `nil` when it has none.
    let openRemote: RemoteOpener?
    /// The scan workers that updates and clients' reading sessions (`add` of files outside the music directory)
    /// share, `nil` when every file is read in this process.
    private let scanWorkerPool: ScanWorkerPool?
    /// The scan workers of the update this reader serves (``startReading()``), `nil` outside one: files read for a
    /// client's command (`add` of a local file) are read in this process.
    private var scanWorkers: ScanWorkerPool? = nil
    /// How long the workers outlive the update that started them, for the next update to use them.
    static let scanWorkersKept = 3.0

    /// A reader through `registry`; with `scanWorkerLogger`, updates read the files plugins want read out of the
    /// process in scan workers that log there.
    init(
        registry: FormatRegistry, metadata: TagMask, playlists: PlaylistRegistry, openRemote: RemoteOpener?,
        scanWorkerLogger: Logger? = nil
    ) {
        self.registry = registry
        self.metadata = metadata
        self.playlists = playlists
        self.openRemote = openRemote
        self.scanWorkerPool = scanWorkerLogger.map { ScanWorkerPool(logger: $0) }
    }

    func supports(suffix: String) -> Bool { self.registry.handles(suffix: suffix) }

    func readInfo(path: String) throws -> SongInfo {
        try self.registry.readInfo(path: path, enabledTags: self.metadata, scanner: self.scanWorkers)
    }

    /// Opens `uri` through the input plugins and scans the stream as `mpd`'s `tag_stream_scan` (rewinding it
    /// between plugins even when it cannot seek).
    func readInfo(uri: String) throws -> SongInfo {
        guard let openRemote else { throw InputError.plugin(message: "Unrecognized URI", uri: uri) }
        let input = try openRemote(uri, InputCancellation())
        return try self.registry.readInfo(input: RewindInputStream(input), enabledTags: self.metadata)
    }

    func containerSongs(path: String) -> [(name: String, info: SongInfo)]? {
        self.registry.containerSongs(path: path).map { songs in songs.map { ($0.name, $0.info) } }
    }

    /// The enabled playlist plugins whose `as_directory` is on (by default cue's alone).
    func listsPlaylistAsDirectory(suffix: String) -> Bool { self.playlists.listsAsDirectory(suffix: suffix) }

    func listsPlaylist(suffix: String) -> Bool { self.playlists.listsAsPlaylist(suffix: suffix) }

    func playlistDirectorySongs(path: String, suffix: String) -> [PlaylistDirectoryEntry]? {
        guard self.listsPlaylistAsDirectory(suffix: suffix) else { return nil }
        guard let bytes = try? readFile(atPath: path),
            let entries = try? self.playlists.directoryEntries(bytes, suffix: suffix)
        else { return [] }
        return entries.map { entry in
            PlaylistDirectoryEntry(
                uri: entry.uri, info: SongInfo(tags: entry.tags, durationMilliseconds: entry.durationMilliseconds),
                startMilliseconds: entry.startMilliseconds, endMilliseconds: entry.endMilliseconds)
        }
    }

    /// This reader with the scan workers (the first file a plugin wants read out of the process starts one, unless
    /// the last update left one).
    func startReading() -> any SongInfoReader {
        guard let scanWorkerPool else { return self }
        var reader = self
        reader.scanWorkers = scanWorkerPool
        return reader
    }

    /// ``startReading()``, with the scan workers' verdicts on files they could not read forgotten (`rescan`).
    func startRereading() -> any SongInfoReader {
        self.scanWorkerPool?.forgetVerdicts()
        return self.startReading()
    }

    /// Ends the scan workers once ``scanWorkersKept`` seconds pass with no file read, and closes the libraries loaded
    /// for reading that nothing uses.
    func readingFinished() {
        self.scanWorkers?.finish(afterIdle: Self.scanWorkersKept)
        self.registry.releaseIdleResources()
    }
}
