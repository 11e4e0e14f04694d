// SPDX-License-Identifier: GPL-3.0-or-later

import ID3Tag
import Input
import Model
import Sidplay
import Synchronization

/// Commodore 64 SID tunes (PSID/RSID, MUS/STR, PRG, P00) through libsidplayfp, as Debian's `mpd` 0.23.12
/// `sidplay` plugin (libsidplayfp 2.4) reads and plays them.
///
/// - Every file is a container (with `all_files_are_containers`, the default, even one of one song): the
///   scanner lists it as a directory of songs `tune_001.sid`, `tune_002.sid`… (always `.sid`), whose paths
///   this plugin opens as that song of the file. A path whose last component is `tune_<n>.<anything>` with
///   n ≥ 1 means song n of its parent; any other path means song 1.
/// - Tags, from the header texts converted from Windows-1252: `Album` (the title), `Title` (the title, with
///   " (n/count)" for files of several songs), `Artist` (if not empty), `Genre` (`default_genre`, if set),
///   `Date` (the "released" text up to its first white space, if not empty) and `Track`.
/// - Duration: only from the song length database (`songlength_database`); none without one.
/// - Decoding: 48000 Hz, 16-bit, mono or (two or more SID chips) stereo; see `SidplayDecoder`. Like `mpd`'s,
///   the samples differ from one play to the next: libsidplayfp's default power-on delay is random and its
///   dither draws from the process's `rand()`.
///
/// Any thread.
public struct SidplayFormat: FileScanFormatPlugin {
    /// `sidplay`.
    public var name: String { "sidplay" }
    /// `mpd`'s list (with its upper-case `P00`).
    public var suffixes: [String] { ["sid", "mus", "str", "prg", "P00"] }
    /// None.
    public var mimeTypes: [String] { [] }

    /// The settings.
    public let options: SidplayOptions
    /// The song length database, when one is configured.
    private let database: SongLengths?
    /// The kernal and basic ROM images, when configured.
    private let kernal: [UInt8]?
    private let basic: [UInt8]?

    /// The rate `mpd`'s plugin renders at.
    static let sampleRate = 48000

    /// Creates the plugin with `mpd`'s default settings.
    public init() {
        self.options = SidplayOptions()
        self.database = nil
        self.kernal = nil
        self.basic = nil
    }

    /// Creates the plugin with `options`, reading its database and ROM files now (as `mpd` does at start-up).
    ///
    /// - Throws: `FormatError.decoder` when the database cannot be read ("unable to read songlengths file")
    ///   or a ROM file has fewer than 8192 bytes ("Could not load rom dump").
    public init(options: SidplayOptions) throws(FormatError) {
        self.options = options
        if let path = options.songlengthDatabase {
            do {
                self.database = SongLengths(try SidDatabase(path: path))
            } catch {
                throw .decoder("unable to read songlengths file \(path): \(error.message)")
            }
        } else {
            self.database = nil
        }
        self.kernal = try options.kernal.map { (path) throws(FormatError) in try Self.loadROM(path) }
        self.basic = try options.basic.map { (path) throws(FormatError) in try Self.loadROM(path) }
    }

    /// The tags and duration of the song a path means.
    ///
    /// - Throws: `FormatError.notRecognized` when libsidplayfp cannot load the file.
    public func readInfo(path: String) throws(FormatError) -> SongInfo {
        let container = Self.containerPath(path)
        guard let tune = try? Self.load(container.path) else { throw .notRecognized(path: path) }
        tune.selectSong(container.song)
        return self.songInfo(tune, song: container.song)
    }

    /// A decoder of song 1 of a single-file tune (PSID, RSID, MUS) read from the stream.
    ///
    /// - Throws: `FormatError` when the stream cannot be read or libsidplayfp cannot load or play it.
    public func makeDecoder(input: any InputStream) throws(FormatError) -> any Decoder {
        let data = try WholeStream.read(input)
        do {
            let tune = try SidTune(data: data)
            return try self.decoder(tune, song: 1)
        } catch {
            throw .decoder("\(error)")
        }
    }

    /// Always `true`: the library opens the file (and the files it needs beside it) by its path.
    public var decodesByPath: Bool { true }

    /// A decoder of the song the path means (song n of its parent for `…/tune_<n>.sid`, else song 1).
    ///
    /// - Throws: `FormatError` when the file cannot be read or libsidplayfp cannot load or play it.
    public func makeDecoder(path: String) throws(FormatError) -> any Decoder {
        let container = Self.containerPath(path)
        do {
            return try self.decoder(try Self.load(container.path), song: container.song)
        } catch {
            throw .decoder("\(error)")
        }
    }

    /// The songs of the file, `tune_001.sid`…: every file's, or (without `all_files_are_containers`) those
    /// of files of two or more songs.
    ///
    /// - Returns: `nil` when the file is no container.
    /// - Throws: `FormatError.notRecognized` when libsidplayfp cannot load the file.
    public func containerSongs(path: String) throws(FormatError) -> [ContainerSong]? {
        guard let tune = try? Self.load(path) else { throw .notRecognized(path: path) }
        let count = tune.songCount
        guard self.options.allFilesAreContainers || count >= 2 else { return nil }
        return (1...max(1, count)).map { song in
            tune.selectSong(song)
            return ContainerSong(name: Self.subtuneName(song), info: self.songInfo(tune, song: song))
        }
    }

    // MARK: - Paths

    /// `tune_001.sid` for song 1 (at least three digits), as the gme plugin's names but always `.sid`.
    static func subtuneName(_ song: Int) -> String { GMEFormat.subtuneName(song, suffix: "sid") }

    /// The real file and the song (1-based) a path means: its parent and n when its last component is
    /// `tune_<n>.<anything>` with n ≥ 1; else the path itself and song 1 (the gme plugin's rule, which is
    /// `mpd`'s for both).
    static func containerPath(_ path: String) -> (path: String, song: Int) {
        let container = GMEFormat.containerPath(path)
        return (container.path, container.track + 1)
    }

    // MARK: - Loading

    /// Loads the tune at `path`, its files (the tune's own and a two-file format's companion) read through
    /// `FileInputStream`s.
    ///
    /// - Throws: `SidplayError` when the file cannot be read or libsidplayfp rejects it.
    static func load(_ path: String) throws(SidplayError) -> SidTune {
        try SidTune(path: path) { name in
            guard let input = try? FileInputStream(path: name), let size = input.size, size > 0,
                size <= UInt64(SidTune.fileLimit)
            else { return nil }
            return try? WholeStream.read(input)
        }
    }

    /// The first 8192 bytes of a ROM image file.
    ///
    /// - Throws: `FormatError.decoder` when the file cannot be read or is shorter.
    static func loadROM(_ path: String) throws(FormatError) -> [UInt8] {
        guard let input = try? FileInputStream(path: path), let bytes = try? input.readBytes(SidPlayer.romSize)
        else { throw .decoder("Could not load rom dump '\(path)'") }
        return bytes
    }

    /// A decoder of `song` (1-based) of the tune, with its length from the database, else
    /// `default_songlength`.
    private func decoder(_ tune: SidTune, song: Int) throws(SidplayError) -> SidplayDecoder {
        tune.selectSong(song)
        var milliseconds = self.database?.milliseconds(tune)
        if milliseconds == nil, self.options.defaultSonglength > 0 {
            milliseconds = self.options.defaultSonglength * 1000
        }
        let player = try SidPlayer(
            tune: tune, sampleRate: Self.sampleRate, filter: self.options.filter, kernal: self.kernal,
            basic: self.basic)
        return SidplayDecoder(player: player, milliseconds: milliseconds)
    }

    // MARK: - Tags

    /// `mpd`'s `ScanSidTuneInfo` and the database's duration, for the tune's selected song `song`.
    private func songInfo(_ tune: SidTune, song: Int) -> SongInfo {
        let count = tune.songCount
        let album = tune.infoString(0)
        var raw = [RawTagItem(.album, album)]
        raw.append(RawTagItem(.title, count > 1 ? album + Array(" (\(song)/\(count))".utf8) : album))
        let artist = tune.infoString(1)
        if !artist.isEmpty { raw.append(RawTagItem(.artist, artist)) }
        if !self.options.defaultGenre.isEmpty { raw.append(RawTagItem(.genre, self.options.defaultGenre)) }
        // The "released" text is `<year> <company or author>`: the date is the year, up to the first space.
        let released = tune.infoString(2)
        let date = released.prefix { !Self.isSpace($0) }
        if !date.isEmpty { raw.append(RawTagItem(.date, Array(date))) }
        raw.append(RawTagItem(.track, Array(String(song).utf8)))
        return SongInfo(
            tags: TagCollector.tagItems(raw), durationMilliseconds: self.database?.milliseconds(tune).map(UInt64.init))
    }

    /// C's `isspace` in the C locale.
    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) }
}

/// The song length database, shared by every copy of the plugin; lookups are serialised (they happen when
/// scanning and when a song starts, never while decoding).
// @unchecked Sendable: the database is only used while holding `lock`.
final class SongLengths: @unchecked Sendable {
    private let database: SidDatabase
    private let lock = Mutex(())

    init(_ database: SidDatabase) { self.database = database }

    /// The length of the tune's selected song, if the database lists it.
    func milliseconds(_ tune: SidTune) -> Int? {
        self.lock.withLock { _ in self.database.lengthMilliseconds(of: tune) }
    }
}
