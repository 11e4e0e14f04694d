// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Model
import RawText

/// One audio format, as one of `mpd`'s decoder plugins: a tag/info reader for the library and a decoder
/// factory for playback.
///
/// Plugins are stateless values registered in `FormatRegistry` (in `mpd`'s order); adding a format means
/// adding a plugin folder under `Sources/Formats` and one line there, without touching the scanner or the
/// player. `FormatRegistry` applies what every plugin shares: trying the next plugin for the suffix when one
/// fails, and `mpd`'s generic tag scan (APE, then ID3) on top of the plugin's own. All methods may be called
/// from any thread, concurrently.
public protocol FormatPlugin: Sendable {
    /// The plugin's name, as `mpd` names its decoder plugins (`mad`, `flac`…): `decoders` prints it.
    var name: String { get }
    /// File name suffixes handled, lower case without the dot; matched ASCII case-insensitively.
    var suffixes: [String] { get }
    /// MIME types handled.
    var mimeTypes: [String] { get }
    /// Whether the plugin itself already applies `mpd`'s generic APE/ID3 scan (so the registry must not
    /// apply it again). `false` by default.
    var readsGenericTags: Bool { get }
    /// Whether a stream scan (`lsinfo URL`) reports the tags the plugin's decoder reads in the stream.
    var scansStreamTags: Bool { get }
    /// Whether `mpd`'s plugin scans streams at all (has a `scan_stream`): `readcomments URL` and `readpicture URL`
    /// pass over one that does not, and a remote song is no song for it. `true` by default; `false` for a
    /// ``FileScanFormatPlugin``.
    var scansStreams: Bool { get }
    /// Whether the plugin decodes a local file by its path, with a library that opens the file itself (`mpd`'s
    /// `file_decode` plugins): the input cache cannot serve it. `false` by default.
    var decodesByPath: Bool { get }

    /// Reads what the database stores about a file: tags, duration, format.
    ///
    /// - Throws: `FormatError.notRecognized` when this plugin would not add the file (the registry then
    ///   asks the next plugin for the suffix); `.io` when it cannot be read.
    func readInfo(path: String) throws(FormatError) -> SongInfo

    /// Reads what the database stores about a song of a storage without local files, as `mpd`'s plugin scans
    /// its stream (`scan_stream`): through `input` from its start. Only asked of plugins that scan streams
    /// (``scansStreams``); a plugin without one is a ``FileScanFormatPlugin``.
    ///
    /// - Throws: `FormatError.notRecognized` when this plugin's scan does not take the stream (the registry
    ///   tries the next); `.input` when the stream cannot be read.
    func readInfo(input: any InputStream) throws(FormatError) -> SongInfo

    /// Reads the picture `readpicture` returns for the file from the format's own metadata.
    ///
    /// - Returns: `nil` when the format's own metadata has none (the registry then looks at the generic
    ///   tags).
    /// - Throws: `FormatError.notRecognized` when this plugin cannot read the file.
    func readPicture(path: String) throws(FormatError) -> Picture?

    /// Reads the name/value pairs `readcomments` prints from the format's own metadata (Vorbis comments,
    /// MP4 metadata…), in the order `mpd`'s plugin reports them; the registry appends the generic tags'.
    /// Names and values are `RawText`-decoded, so bytes that are not UTF-8 reach the client unchanged, as
    /// `mpd` sends them.
    ///
    /// - Throws: `FormatError.notRecognized` when this plugin cannot read the file.
    func readComments(path: String) throws(FormatError) -> [(name: String, value: String)]

    /// The pairs `readcomments` prints for a remote stream, from what `mpd`'s plugin reports while scanning
    /// it (`scan_stream`); the registry appends the generic tags'. Reads through `input` from its start.
    ///
    /// - Throws: `FormatError.notRecognized` when this plugin's scan does not take the stream (the registry
    ///   tries the next); any other error ends the scan with it, as an exception from `mpd`'s plugin does.
    func readComments(input: any InputStream) throws(FormatError) -> [(name: String, value: String)]

    /// The picture `readpicture` sends for a remote stream from the format's own metadata, `nil` when it has
    /// none (the registry then looks at the generic tags). Reads through `input` from its start.
    ///
    /// - Throws: as `readComments(input:)`.
    func readPicture(input: any InputStream) throws(FormatError) -> Picture?

    /// Opens a decoder that reads through `input` from its current offset (the start of the stream). Call
    /// it on the thread that will decode; the decoder keeps `input`.
    ///
    /// - Throws: `FormatError` when the stream cannot be decoded by this plugin.
    func makeDecoder(input: any InputStream) throws(FormatError) -> any Decoder

    /// Opens a decoder over the local file at `path` (`mpd`'s `file_decode`). The default opens a
    /// `FileInputStream` and calls `makeDecoder(input:)`; a container plugin also accepts the virtual paths
    /// of the songs `containerSongs(path:)` lists (`file.nsf/tune_002.nsf`). Decoder thread.
    ///
    /// - Throws: `FormatError.input` when the file cannot be opened; what `makeDecoder(input:)` throws.
    func makeDecoder(path: String) throws(FormatError) -> any Decoder

    /// The songs inside a container file (`mpd`'s `container_scan`), each with its name relative to the
    /// file and what the database stores about it: the scanner lists the file as a directory of these.
    /// `nil` (the default) when the plugin has no containers or the file holds fewer than two songs (it is
    /// then an ordinary song). Any thread.
    ///
    /// - Throws: `FormatError` when the file cannot be read (the scanner then treats it as a song).
    func containerSongs(path: String) throws(FormatError) -> [ContainerSong]?

    /// Whether the plugin opens URLs of some schemes itself, with no input plugin (`mpd`'s `uri_decode`: its
    /// ffmpeg plugin for `rtsp://`). `false` by default.
    var decodesURLs: Bool { get }

    /// Opens a decoder that reads `url` itself (`mpd`'s `uri_decode`); a blocking open or read returns once
    /// `cancellation` fires. Decoder thread. The default throws `FormatError.notRecognized`.
    ///
    /// - Throws: `FormatError` when the URL cannot be opened or decoded.
    func makeDecoder(url: String, cancellation: InputCancellation) throws(FormatError) -> any Decoder

    /// The settings of its `decoder` block that build this plugin again in a scan worker (`fermata
    /// --scan-worker`), where a database update then reads its local files (`readInfo(path:)`), so that the
    /// libraries it loads for them stay out of the daemon and a file that crashes them kills the worker only;
    /// `nil` (the default) when the plugin reads them in the daemon. The worker builds it from
    /// `FormatRegistry.catalogue`'s entry of its `name`.
    var scanWorkerSettings: [ScanWorkerProtocol.Setting]? { get }

    /// Gives back what the plugin holds only while it reads files, now that a database update has read every
    /// file (the ffmpeg plugin closes FFmpeg's libraries unless a decoder still uses them). No-op by default.
    /// Any thread.
    func releaseIdleResources()
}

/// A format whose `mpd` plugin scans only files (has no `scan_stream`): a song of a storage without local files
/// is no song for it, and `readcomments` and `readpicture` of a URL pass over it.
public protocol FileScanFormatPlugin: FormatPlugin {}

extension FileScanFormatPlugin {
    /// `mpd`'s plugin has no stream scan.
    public var scansStreams: Bool { false }

    /// Never asked (the registry passes over plugins that scan no streams); declines.
    ///
    /// - Throws: `FormatError.notRecognized`.
    public func readInfo(input: any InputStream) throws(FormatError) -> SongInfo {
        throw .notRecognized(path: input.uri)
    }
}

/// One song inside a container file (a subtune of a chiptune), as `containerSongs(path:)` lists it.
public struct ContainerSong: Sendable, Hashable {
    /// Its name below the container (`tune_001.nsf`): its URI is the container's URI, `/`, and this.
    public var name: String
    /// What the database stores about it.
    public var info: SongInfo

    /// Creates a song.
    public init(name: String, info: SongInfo) {
        self.name = name
        self.info = info
    }
}

extension FormatPlugin {
    /// The plugin does not apply the generic scan itself.
    public var readsGenericTags: Bool { false }

    /// Whether `mpd`'s scan of a stream by this plugin (`lsinfo URL`) reports the tags its decoder reads.
    public var scansStreamTags: Bool { true }

    /// `mpd`'s plugin scans streams.
    public var scansStreams: Bool { true }
    /// The plugin decodes through an input stream.
    public var decodesByPath: Bool { false }

    /// Nothing to give back.
    public func releaseIdleResources() {}

    /// Reads its local files in the daemon.
    public var scanWorkerSettings: [ScanWorkerProtocol.Setting]? { nil }

    /// A format with no pictures of its own: the file must still be one the plugin reads (`mpd` runs the
    /// plugin's scan first); the registry then looks at the generic tags.
    ///
    /// - Throws: what `readInfo(path:)` throws.
    public func readPicture(path: String) throws(FormatError) -> Picture? {
        _ = try self.readInfo(path: path)
        return nil
    }

    /// A format with no name/value pairs of its own: the file must still be one the plugin reads; the
    /// registry appends the generic tags' pairs.
    ///
    /// - Throws: what `readInfo(path:)` throws.
    public func readComments(path: String) throws(FormatError) -> [(name: String, value: String)] {
        _ = try self.readInfo(path: path)
        return []
    }

    /// A format whose stream scan reports no pairs: the stream must still be one the plugin decodes.
    ///
    /// - Throws: `FormatError.notRecognized` when `makeDecoder(input:)` fails but for its input (a stream
    ///   the plugin does not take); the input's error.
    public func readComments(input: any InputStream) throws(FormatError) -> [(name: String, value: String)] {
        try self.requireDecodable(input)
        return []
    }

    /// A format whose stream scan reports no picture: the stream must still be one the plugin decodes.
    ///
    /// - Throws: as `readComments(input:)`.
    public func readPicture(input: any InputStream) throws(FormatError) -> Picture? {
        try self.requireDecodable(input)
        return nil
    }

    /// Whether the plugin decodes `input`: its decoder opens. A failure of the plugin is "not this plugin".
    private func requireDecodable(_ input: any InputStream) throws(FormatError) {
        do {
            _ = try self.makeDecoder(input: input)
        } catch {
            if case .input = error { throw error }
            throw .notRecognized(path: input.uri)
        }
    }

    /// Opens a `FileInputStream` over `path` and a decoder over it.
    ///
    /// - Throws: `FormatError.input` when the file cannot be opened; what `makeDecoder(input:)` throws.
    public func makeDecoder(path: String) throws(FormatError) -> any Decoder {
        try self.makeDecoder(input: try LocalFile.input(path))
    }

    /// No containers.
    public func containerSongs(path: String) throws(FormatError) -> [ContainerSong]? { nil }

    /// No URLs of its own.
    public var decodesURLs: Bool { false }

    /// Declines: the plugin reads only through input plugins.
    public func makeDecoder(url: String, cancellation: InputCancellation) throws(FormatError) -> any Decoder {
        throw .notRecognized(path: url)
    }
}
