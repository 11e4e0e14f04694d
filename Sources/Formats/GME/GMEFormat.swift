// SPDX-License-Identifier: GPL-3.0-or-later

import GME
import ID3Tag
import Input
import Model

/// Video game music (NSF, SPC, VGM, GBS…) through libgme, as Debian's `mpd` 0.23.12 `gme` plugin (built
/// with libgme 0.6.3) reads it.
///
/// - A file with two or more tracks is a container: the scanner lists it as a directory of songs named
///   `tune_001.<suffix>`, `tune_002.<suffix>`… (the file's own suffix), whose paths
///   (`game.nsf/tune_002.nsf`) this plugin opens as track 2 of `game.nsf`. Any path whose last component is
///   `tune_<n>.<anything>` with n ≥ 1 means track n of its parent, as in `mpd`.
/// - An M3U playlist next to the file (`game.m3u` for `game.nsf`) adds libgme's track names and times.
/// - Tags: `Track` (only for files of several tracks), `Title` from the track name (with " (n/count)" for
///   files of several tracks), `Artist` from the author, `Album` from the game, `Comment`, and `Date` from the
///   copyright text. No format line, no picture, no comments.
/// - Duration: libgme's play length (the file's length, else intro + 2 loops, else 2:30). While playing, the
///   decoder's length is longer by the `default_fade` setting (8 s by default; libgme 0.6 itself always fades
///   out over 8 s, as in `mpd` built with it).
/// - Settings (`decoder { plugin "gme" … }`): ``Options``.
/// - Decoding: 44100 Hz, 16-bit, stereo, in chunks of 2048 frames until libgme reports the track ended.
///
/// Any thread.
public struct GMEFormat: FileScanFormatPlugin {
    /// What `mpd`'s `decoder { plugin "gme" }` block sets, with its defaults.
    public struct Options: Sendable, Hashable {
        /// `accuracy`: libgme's accurate emulation on or off while playing; `nil` (not set): libgme's default.
        public var accuracy: Bool?
        /// `default_fade` in milliseconds (the block gives seconds): added to a track's play length for the
        /// decoder's length. Default 8000.
        public var defaultFadeMilliseconds: Int

        /// Options; the defaults are `mpd`'s.
        public init(accuracy: Bool? = nil, defaultFadeMilliseconds: Int = GMEFormat.defaultFade) {
            self.accuracy = accuracy
            self.defaultFadeMilliseconds = defaultFadeMilliseconds
        }
    }

    /// The options in effect.
    public let options: Options

    /// `gme`.
    public var name: String { "gme" }
    /// `mpd`'s list.
    public var suffixes: [String] {
        ["ay", "gbs", "gym", "hes", "kss", "nsf", "nsfe", "rsn", "sap", "spc", "vgm", "vgz"]
    }
    /// None.
    public var mimeTypes: [String] { [] }

    /// `mpd`'s `GME_SAMPLE_RATE`.
    static let sampleRate = 44100
    /// `mpd`'s default `default_fade`, in milliseconds (libgme 0.6 states no fade length of its own).
    public static let defaultFade = 8000
    /// The prefix of the names of a container's songs.
    static let subtunePrefix = "tune_"

    /// Creates the plugin.
    public init(options: Options = Options()) { self.options = options }

    /// The track's tags and duration.
    ///
    /// - Throws: `FormatError.notRecognized` when libgme cannot load the file or has no such track.
    public func readInfo(path: String) throws(FormatError) -> SongInfo {
        let container = Self.containerPath(path)
        let emulator = try Self.load(container.path, notRecognized: path)
        guard let info = try? emulator.trackInfo(container.track) else { throw .notRecognized(path: path) }
        return Self.songInfo(info, track: container.track, count: emulator.trackCount)
    }

    /// libgme reads no pictures.
    ///
    /// - Throws: `FormatError.notRecognized` when libgme cannot load the file.
    public func readPicture(path: String) throws(FormatError) -> Picture? {
        _ = try self.readInfo(path: path)
        return nil
    }

    /// `mpd`'s gme plugin reports no name/value pairs.
    ///
    /// - Throws: `FormatError.notRecognized` when libgme cannot load the file.
    public func readComments(path: String) throws(FormatError) -> [(name: String, value: String)] {
        _ = try self.readInfo(path: path)
        return []
    }

    /// A decoder of the first track of the stream (a stream has no container path and no M3U playlist).
    ///
    /// - Throws: `FormatError` when the stream cannot be read or libgme cannot load it.
    public func makeDecoder(input: any InputStream) throws(FormatError) -> any Decoder {
        let data = try WholeStream.read(input)
        let emulator: GMEEmulator
        do {
            emulator = try GMEEmulator(
                data: data, suffix: Suffix.ofPath(input.uri).map(String.init),
                sampleRate: Self.sampleRate)
        } catch {
            throw .decoder("\(error)")
        }
        return try GMEDecoder(emulator: emulator, track: 0, options: self.options)
    }

    /// Always `true`: the library opens the file (and the files it needs beside it) by its path.
    public var decodesByPath: Bool { true }

    /// A decoder of the file at `path`, or of track n of its parent when `path` ends in `tune_<n>.<suffix>`.
    ///
    /// - Throws: `FormatError` when the file cannot be read or libgme cannot load it or has no such track.
    public func makeDecoder(path: String) throws(FormatError) -> any Decoder {
        let container = Self.containerPath(path)
        let emulator = try Self.load(container.path, notRecognized: nil)
        return try GMEDecoder(emulator: emulator, track: container.track, options: self.options)
    }

    /// The songs of a file of two or more tracks, named `tune_001.<suffix>`….
    ///
    /// - Returns: `nil` for a file of one track.
    /// - Throws: `FormatError.notRecognized` when libgme cannot load the file.
    public func containerSongs(path: String) throws(FormatError) -> [ContainerSong]? {
        let container = Self.containerPath(path)
        let emulator = try Self.load(container.path, notRecognized: path)
        let count = emulator.trackCount
        guard count >= 2 else { return nil }
        let suffix = Suffix.ofPath(path).map(String.init) ?? ""
        return (0..<count).map { track in
            let info = (try? emulator.trackInfo(track)).map { Self.songInfo($0, track: track, count: count) }
            return ContainerSong(name: Self.subtuneName(track + 1, suffix: suffix), info: info ?? SongInfo())
        }
    }

    // MARK: - Paths

    /// `tune_001.nsf` for song 1 of an `nsf` file (at least three digits).
    static func subtuneName(_ number: Int, suffix: String) -> String {
        let digits = String(number)
        return Self.subtunePrefix + String(repeating: "0", count: max(0, 3 - digits.count)) + digits + "." + suffix
    }

    /// The real file and the track (0-based) a path means: its parent and n - 1 when its last component is
    /// `tune_<n>.<anything>` with n ≥ 1; else the path itself and track 0.
    static func containerPath(_ path: String) -> (path: String, track: Int) {
        let utf8 = Array(path.utf8)
        let slash = utf8.lastIndex(of: UInt8(ascii: "/"))
        let base = utf8[(slash.map { $0 + 1 } ?? 0)...]
        guard let slash, base.starts(with: Self.subtunePrefix.utf8) else { return (path, 0) }
        let rest = base.dropFirst(Self.subtunePrefix.utf8.count)
        let digits = rest.prefix { $0 >= 0x30 && $0 <= 0x39 }
        guard !digits.isEmpty, rest.dropFirst(digits.count).first == UInt8(ascii: "."), digits.count <= 9,
            let number = Int(String(decoding: digits, as: UTF8.self)), number >= 1
        else { return (path, 0) }
        return (String(decoding: utf8[..<slash], as: UTF8.self), number - 1)
    }

    /// The file's path with its suffix replaced by `m3u` (`game.m3u` for `game.nsf`), if it has a suffix.
    static func m3uPath(_ path: String) -> String? {
        guard let suffix = Suffix.ofPath(path) else { return nil }
        return String(path[..<suffix.startIndex]) + "m3u"
    }

    // MARK: - Loading

    /// The largest M3U playlist read next to a file.
    static let m3uLimit = 1 << 20

    /// Loads the file at `path` and, if one exists, its M3U playlist (whose errors are ignored, as in `mpd`).
    ///
    /// - Throws: `FormatError.notRecognized(notRecognized)` when libgme cannot load the file and
    ///   `notRecognized` is set, else `.input` or `.decoder`.
    static func load(_ path: String, notRecognized: String?) throws(FormatError) -> GMEEmulator {
        let emulator: GMEEmulator
        do {
            let input = try FileInputStream(path: path)
            let data = try WholeStream.read(input)
            emulator = try GMEEmulator(
                data: data, suffix: Suffix.ofPath(path).map(String.init), sampleRate: Self.sampleRate)
        } catch {
            if let notRecognized { throw .notRecognized(path: notRecognized) }
            switch error {
            case let error as FormatError: throw error
            case let error as InputError: throw .input(error)
            default: throw .decoder("\(error)")
            }
        }
        if let m3u = Self.m3uPath(path), let input = try? FileInputStream(path: m3u), let size = input.size,
            size > 0, size <= UInt64(Self.m3uLimit), let data = try? input.readBytes(Int(size))
        {
            try? emulator.loadM3U(data: data)
        }
        return emulator
    }

    // MARK: - Tags

    /// `mpd`'s `ScanGmeInfo`: the tags and duration of track `track` (0-based) of `count`.
    static func songInfo(_ info: GMETrackInfo, track: Int, count: Int) -> SongInfo {
        var raw: [RawTagItem] = []
        if count > 1 { raw.append(RawTagItem(.track, Array(String(track + 1).utf8))) }
        if !info.song.isEmpty {
            raw.append(
                RawTagItem(.title, count > 1 ? info.song + Array(" (\(track + 1)/\(count))".utf8) : info.song))
        }
        raw.append(RawTagItem(.artist, info.author))
        raw.append(RawTagItem(.album, info.game))
        raw.append(RawTagItem(.comment, info.comment))
        raw.append(RawTagItem(.date, info.copyright))
        return SongInfo(
            tags: TagCollector.tagItems(raw),
            durationMilliseconds: info.playLength > 0 ? UInt64(info.playLength) : nil)
    }
}
