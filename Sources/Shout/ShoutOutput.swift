// SPDX-License-Identifier: GPL-3.0-or-later

import CShout
import DynamicLibrary
import Encoders
import Model
import Playback
import Posix
import Synchronization

/// libshout, loaded when a shout output is first enabled and kept loaded.
///
/// The `fermata` binary does not link libshout: with the libraries it needs (libtheora, libspeex, GnuTLS's
/// stack…) it cost every server ~2.6 MiB of resident memory at start-up, used only by shout outputs. The first
/// enabled output opens it (`dlopen`, Debian's soname), resolves every function the wrapper calls into a table
/// and calls `shout_init` (once: the library is never closed, as `mpd` never shuts libshout down while it
/// has a shout output).
///
/// When it cannot be loaded (not installed, a missing function), enabling any shout output fails as
/// `shout_new` failing would, and the reason is reported once, on stderr.
public final class ShoutLibrary: Sendable {
    /// The process's library: Debian's soname, `libshout.so.3`.
    public static let shared = ShoutLibrary(soname: ShoutLibrary.headerSoname)

    /// The soname Debian's development package links.
    public static let headerSoname = FERMATA_SHOUT_SONAME

    private let library: DynamicLibraries<fermata_shout_functions>

    /// The library loaded from `soname` (any name or path `dlopen` takes) on first use.
    ///
    /// - Parameter reportFailure: Told once why the library cannot be loaded (stderr by default).
    public init(soname: String, reportFailure: (@Sendable (String) -> Void)? = nil) {
        self.library = DynamicLibraries(
            names: [soname], what: soname, prefix: "shout: output unavailable: ",
            fill: { table, handles in fermata_shout_resolve(table, handles[0]) },
            // libshout's global set-up (its TLS and thread state), once per load.
            configure: { functions in functions.shout_init() }, reportFailure: reportFailure)
    }

    /// Whether the library is loaded now.
    public var isLoaded: Bool { self.library.isLoaded }
    /// How many enabled outputs use it now.
    public var users: Int { self.library.users }
    /// How many times it was loaded.
    public var loadCount: Int { self.library.loadCount }

    fileprivate func acquire() throws(DynamicLibraryError) -> fermata_shout_functions { try self.library.acquire() }

    fileprivate func release() { self.library.release() }
}

/// What a `shout` block sets on the connection (`mpd`'s keys).
struct ShoutSettings: Sendable {
    var host: String
    var port: UInt16
    var mount: String
    var user: String
    var password: String
    var name: String
    var genre: String?
    var description: String?
    var url: String?
    var quality: String?
    var bitrate: String?
    var isPublic: Bool
    /// libshout's `SHOUT_FORMAT_*`, `SHOUT_PROTOCOL_*` and `SHOUT_TLS_*`.
    var format: UInt32
    var protocolNumber: UInt32
    var tls: Int32
}

/// `type "shout"`: streams to an Icecast (or SHOUTcast) server through libshout, as `mpd`'s shout output: the
/// encoder's stream goes to `mount` as the source; a new song changes the stream title (Ogg: a chained
/// stream carrying the tags; MP3: libshout's metadata update, `artist - title`). Connects when a stream
/// opens and disconnects when it closes; paced in real time, on the output thread (connecting and sending
/// block there, never on the event loop).
///
/// Used on its output thread, except `interrupt()` (any thread). `@unchecked Sendable`: the libshout handle,
/// the encoder and the timer are confined to the output thread; `interrupted` and the wake-up are
/// thread-safe. Unsafe: the `shout_t` pointer never leaves this class. An enabled output holds one use of its
/// `ShoutLibrary` (loading it if it is the first), until it is disabled.
final class ShoutOutput: AudioOutput, @unchecked Sendable {
    let plugin = "shout"

    private let prepared: any PreparedEncoder
    private let settings: ShoutSettings
    private let library: ShoutLibrary
    /// libshout's functions while enabled.
    private var api: fermata_shout_functions?
    /// The handle while enabled (only with `api`).
    private var shout: OpaquePointer?
    private var encoder: (any Encoder)?
    private var timer = OutputTimer()
    private let interrupted = Atomic<Bool>(false)
    private let wakeup = PlayerWakeup()
    private var silence: [UInt8] = []

    /// Where a refused metadata update is logged (`shout_output`, as `mpd`'s).
    private let logger: Logger

    init(prepared: any PreparedEncoder, settings: ShoutSettings, library: ShoutLibrary, logger: Logger) {
        self.prepared = prepared
        self.settings = settings
        self.library = library
        self.logger = logger
    }

    deinit { self.disable() }

    private var errorText: String {
        guard let api = self.api, let shout = self.shout else { return "" }
        return api.shout_get_error(shout).map { String(cString: $0) } ?? ""
    }

    /// Makes the libshout handle and sets the connection up (nothing is sent yet), loading libshout first if
    /// this is the first output enabled.
    ///
    /// - Throws: `OutputError` "shout_new() failed" when libshout cannot be loaded (the reason reported once by
    ///   the library) or make a handle; libshout's error for a setting it refuses.
    func enable() throws(OutputError) {
        self.disable()
        let api: fermata_shout_functions
        do {
            api = try self.library.acquire()
        } catch {
            throw OutputError("shout_new() failed")
        }
        guard let shout = api.shout_new() else {
            self.library.release()
            throw OutputError("shout_new() failed")
        }
        self.api = api
        self.shout = shout
        let settings = self.settings
        var ok =
            api.shout_set_host(shout, settings.host) == SHOUTERR_SUCCESS
            && api.shout_set_port(shout, settings.port) == SHOUTERR_SUCCESS
            && api.shout_set_password(shout, settings.password) == SHOUTERR_SUCCESS
            && api.shout_set_mount(shout, settings.mount) == SHOUTERR_SUCCESS
            && api.shout_set_user(shout, settings.user) == SHOUTERR_SUCCESS
            && api.shout_set_public(shout, settings.isPublic ? 1 : 0) == SHOUTERR_SUCCESS
        ok =
            ok
            && api.shout_set_content_format(shout, settings.format, UInt32(SHOUT_USAGE_AUDIO), nil) == SHOUTERR_SUCCESS
            && api.shout_set_protocol(shout, settings.protocolNumber) == SHOUTERR_SUCCESS
            && api.shout_set_tls(shout, settings.tls) == SHOUTERR_SUCCESS
            && api.shout_set_agent(shout, "MPD") == SHOUTERR_SUCCESS
            && api.shout_set_meta(shout, SHOUT_META_NAME, settings.name) == SHOUTERR_SUCCESS
        for (key, value) in [
            (SHOUT_META_GENRE, settings.genre), (SHOUT_META_DESCRIPTION, settings.description),
            (SHOUT_META_URL, settings.url),
        ] {
            if let value { ok = ok && api.shout_set_meta(shout, key, value) == SHOUTERR_SUCCESS }
        }
        guard ok else {
            let message = self.errorText
            self.disable()
            throw OutputError(message)
        }
        if let quality = settings.quality { _ = api.shout_set_audio_info(shout, SHOUT_AI_QUALITY, quality) }
        if let bitrate = settings.bitrate { _ = api.shout_set_audio_info(shout, SHOUT_AI_BITRATE, bitrate) }
    }

    func disable() {
        guard let api = self.api else { return }
        if let shout { _ = api.shout_free(shout) }
        self.shout = nil
        self.api = nil
        self.library.release()
    }

    func open(_ format: AudioFormat) throws(OutputError) -> AudioFormat {
        guard let api = self.api, let shout = self.shout else { throw OutputError("shout output not enabled") }
        let opened: (encoder: any Encoder, format: AudioFormat)
        do throws(EncoderError) {
            opened = try self.prepared.open(format)
        } catch {
            throw OutputError(error.message)
        }
        _ = api.shout_set_audio_info(shout, SHOUT_AI_CHANNELS, "\(opened.format.channels)")
        _ = api.shout_set_audio_info(shout, SHOUT_AI_SAMPLERATE, "\(opened.format.sampleRate)")
        let status = api.shout_open(shout)
        guard status == SHOUTERR_SUCCESS || status == SHOUTERR_CONNECTED else {
            throw OutputError(
                "problem opening connection to shout server \(self.settings.host):\(self.settings.port): "
                    + self.errorText)
        }
        self.encoder = opened.encoder
        self.silence = [UInt8](repeating: 0, count: max(1, 1020 / opened.format.frameSize) * opened.format.frameSize)
        self.timer.open(opened.format)
        do throws(OutputError) {
            try self.writePage()
        } catch {
            self.close()
            throw error
        }
        return opened.format
    }

    func close() {
        if let encoder {
            try? encoder.end()
            try? self.writePage()
        }
        self.encoder = nil
        self.timer.reset()
        if let api, let shout, api.shout_get_connected(shout) != SHOUTERR_UNCONNECTED,
            api.shout_close(shout) != SHOUTERR_SUCCESS
        {
            // Nothing to undo: the next open connects again.
            _ = api.shout_get_error(shout)
        }
    }

    /// Sends what the encoder has ready.
    private func writePage() throws(OutputError) {
        guard let api = self.api, let shout = self.shout, let encoder = self.encoder else { return }
        var status = SHOUTERR_SUCCESS
        encoder.read { bytes in
            guard status == SHOUTERR_SUCCESS, let base = bytes.baseAddress else { return }
            status = api.shout_send(shout, base.assumingMemoryBound(to: UInt8.self), bytes.count)
        }
        switch status {
        case SHOUTERR_SUCCESS: return
        case SHOUTERR_UNCONNECTED, SHOUTERR_SOCKET:
            throw OutputError(
                "Lost shout connection to \(self.settings.host):\(self.settings.port): \(self.errorText)")
        default:
            throw OutputError("connection to \(self.settings.host):\(self.settings.port) error: \(self.errorText)")
        }
    }

    func play(_ data: UnsafeRawBufferPointer) throws(OutputError) -> Int {
        guard let encoder = self.encoder else { throw OutputError("shout output not open") }
        do throws(EncoderError) {
            try encoder.write(data)
        } catch {
            throw OutputError(error.message)
        }
        try self.writePage()
        self.timer.wait(thenAdd: data.count, wakeup: self.wakeup, interrupted: self.interrupted)
        self.interrupted.store(false, ordering: .releasing)
        return data.count
    }

    var delayFrames: Int { self.timer.delayFrames }

    func drain() throws(OutputError) -> Bool {
        self.timer.drain(wakeup: self.wakeup, interrupted: self.interrupted)
    }

    func cancel() { self.timer.reset() }

    var hasPauseMode: Bool { true }
    /// Keeps the connection with silence in real time, as `mpd` does; `false` when the server is gone (the
    /// stream is then reopened on resume).
    func pause() -> Bool {
        let silence = self.silence
        let failed = silence.withUnsafeBytes { bytes in (try? self.play(bytes)) == nil }
        return !failed
    }

    func interrupt() {
        self.interrupted.store(true, ordering: .releasing)
        self.wakeup.signal()
    }

    /// A new song: a chained Ogg stream carrying the tags, or libshout's metadata update (`artist - title`).
    func sendTag(_ tags: [TagItem]) {
        guard let api = self.api, let shout = self.shout, let encoder = self.encoder else { return }
        if encoder.implementsTag {
            try? encoder.preTag()
            try? self.writePage()
            try? encoder.sendTag(tags)
        } else if let metadata = api.shout_metadata_new() {
            let artist = tags.first { $0.type == .artist }?.value ?? ""
            let title = tags.first { $0.type == .title }?.value ?? ""
            // As mpd: a warning once per song when libshout refuses it (a source the server dropped, say).
            if api.shout_metadata_add(metadata, "song", Self.metadataSong(artist: artist, title: title))
                != SHOUTERR_SUCCESS || api.shout_set_metadata_utf8(shout, metadata) != SHOUTERR_SUCCESS
            {
                self.logger.warning("error setting shout metadata")
            }
            api.shout_metadata_free(metadata)
        }
        try? self.writePage()
    }
}

extension ShoutOutput {
    /// The `song` metadata `mpd` sends for an encoder without stream tags: `artist - title` in its fixed buffer,
    /// so at most 1023 bytes, cut wherever the limit falls (even inside a UTF-8 sequence), and ending at the first
    /// NUL as a C string does. NUL-terminated.
    static func metadataSong(artist: String, title: String) -> [CChar] {
        var song: [CChar] = []
        song.reserveCapacity(Self.metadataLimit + 1)
        for byte in "\(artist) - \(title)".utf8.prefix(Self.metadataLimit) {
            guard byte != 0 else { break }
            song.append(CChar(bitPattern: byte))
        }
        song.append(0)
        return song
    }

    /// The bytes of `mpd`'s metadata buffer, less its NUL.
    static let metadataLimit = 1023
}

/// The `shout` output plugin, with `mpd`'s keys: `host`, `port`, `mount`, `password` and `name` required;
/// `user` (default `source`), `genre`, `description`, `url`, `public`, `protocol` (`icecast2`, `icecast1`,
/// `shoutcast`), `tls` (`disabled`, `auto`, `auto_no_plain`, `rfc2818`, `rfc2817`), and the encoder's
/// (`encoder` or the older `encoding`: `ogg`, `mp3`). No hardware mixer.
public struct ShoutOutputPlugin: OutputPlugin {
    public let name = "shout"
    /// As `mpd`'s (`FLAG_NEED_FULLY_DEFINED_AUDIO_FORMAT`): the block's `format` must fix everything.
    public let needsFullyDefinedFormat = true
    private let library: ShoutLibrary
    private let logger: Logger

    /// Creates the plugin; its outputs load `library` when they are first enabled, and log to `logger`.
    public init(library: ShoutLibrary = .shared, logger: Logger = .discarding) {
        self.library = library
        self.logger = logger.labelled("shout_output")
    }

    public func makeOutput(_ configuration: OutputConfiguration) throws(OutputError) -> any AudioOutput {
        let parameters = configuration.parameters
        let prepared: any PreparedEncoder
        do throws(EncoderError) {
            prepared = try EncoderPlugins.configured(parameters, shoutLegacy: true)
        } catch {
            throw OutputError(error.message)
        }
        func required(_ key: String) throws(OutputError) -> String {
            guard let value = parameters[key] else {
                throw OutputError("no \"\(key)\" defined for shout device defined at line \(configuration.line)")
            }
            return value
        }
        // As mpd's ShoutConfig, in its order: host, mount, user, password, name, the optional texts, port, the
        // format the encoder's MIME type gives, protocol, tls, public; then the port's check.
        let host = try required("host")
        let mount = try required("mount")
        let user = parameters["user"] ?? "source"
        let password = try required("password")
        let name = try required("name")
        let (genre, description, url) = (parameters["genre"], parameters["description"], parameters["url"])
        let (quality, bitrate) = (parameters["quality"], parameters["bitrate"])
        // As mpd: an unsigned number, given to libshout's `unsigned short`.
        let port = UInt16(truncatingIfNeeded: try configuration.unsigned("port", default: 0))
        let mime = prepared.mimeType ?? ""
        let format = UInt32(mime == "audio/mpeg" ? SHOUT_FORMAT_MP3 : SHOUT_FORMAT_OGG)
        let protocolNumber: UInt32
        switch parameters["protocol"] {
        case nil, "icecast2": protocolNumber = UInt32(SHOUT_PROTOCOL_HTTP)
        case "icecast1": protocolNumber = UInt32(SHOUT_PROTOCOL_XAUDIOCAST)
        case "shoutcast":
            guard mime == "audio/mpeg" else { throw OutputError("you cannot stream \"\(mime)\" to shoutcast, use mp3") }
            protocolNumber = UInt32(SHOUT_PROTOCOL_ICY)
        case let value?:
            throw OutputError("shout protocol \"\(value)\" is not \"shoutcast\" or \"icecast1\"or \"icecast2\"")
        }
        let tls: Int32
        switch parameters["tls"] {
        case nil, "disabled": tls = SHOUT_TLS_DISABLED
        case "auto": tls = SHOUT_TLS_AUTO
        case "auto_no_plain": tls = SHOUT_TLS_AUTO_NO_PLAIN
        case "rfc2818": tls = SHOUT_TLS_RFC2818
        case "rfc2817": tls = SHOUT_TLS_RFC2817
        case let value?: throw OutputError("invalid shout TLS option \"\(value)\"")
        }
        let isPublic = try configuration.bool("public", default: false)
        guard port > 0 else { throw OutputError("shout port must be configured") }
        let settings = ShoutSettings(
            host: host, port: port, mount: mount, user: user, password: password, name: name, genre: genre,
            description: description, url: url, quality: quality, bitrate: bitrate, isPublic: isPublic,
            format: format, protocolNumber: protocolNumber, tls: tls)
        return ShoutOutput(prepared: prepared, settings: settings, library: self.library, logger: self.logger)
    }

    public func makeHardwareMixer(
        _ configuration: OutputConfiguration, onChange: @escaping @Sendable () -> Void
    ) throws(OutputError) -> (any Mixer)? { nil }
}
