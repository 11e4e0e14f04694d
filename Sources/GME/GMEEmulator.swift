// SPDX-License-Identifier: GPL-3.0-or-later

import CGME
import DynamicLibrary
import Glibc

/// A libgme failure: the function that failed and libgme's message.
public struct GMEError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The libgme function.
    public var function: String
    /// libgme's error string (`gme_err_t`).
    public var message: String

    /// Creates an error.
    public init(function: String, message: String) {
        self.function = function
        self.message = message
    }

    /// `function: message`.
    public var description: String { "\(self.function): \(self.message)" }
}

/// libgme, loaded on the first file the gme plugin reads and kept loaded.
///
/// The `fermata` binary does not link libgme: it cost every server ~0.2 MiB of resident memory at start-up, used
/// only by a server that reads a game-music file. The first `functions()` opens it (`dlopen`, Debian's soname) and
/// resolves every function the wrapper calls into a table; it is never closed. When it cannot be loaded, the reason
/// is reported once (by default on stderr) and every later `functions()` fails the same way (no file then loads;
/// the server learns it at start-up from a child process, `loadFailure()`, and leaves the plugin out, as `mpd`
/// leaves out a plugin whose initialisation fails).
///
/// Thread-safe: a lock is taken per call (once per emulator made).
public final class GMELibrary: Sendable {
    /// The library's file (dlopen's), `libgme.so.0`.
    public static let soname = FERMATA_GME_SONAME
    /// The library every emulator uses by default.
    public static let shared = GMELibrary()

    private let library: DynamicLibraries<fermata_gme_functions>

    /// The library at `soname` (another one in tests), whose load failure `reportFailure` is told once.
    public init(
        soname: String = GMELibrary.soname,
        reportFailure: @escaping @Sendable (String) -> Void = {
            reportOnStandardError("gme: decoder plugin unavailable: \($0)")
        }
    ) {
        self.library = DynamicLibraries(
            names: [soname], what: soname, prefix: "gme: ",
            fill: { table, handles in fermata_gme_resolve(table, handles[0]) }, reportFailure: reportFailure)
    }

    /// Whether the library is loaded now.
    public var isLoaded: Bool { self.library.isLoaded }

    /// Loads the library: `nil` when it works, else why not.
    public func loadFailure() -> GMEError? {
        do {
            _ = try self.functions()
            return nil
        } catch {
            return error
        }
    }

    /// The library's functions, loading it on first use.
    ///
    /// - Throws: `GMEError` (`dlopen` or `dlsym`) when it cannot be loaded, then every time.
    func functions() throws(GMEError) -> fermata_gme_functions {
        do {
            return try self.library.permanentFunctions()
        } catch {
            throw GMEError(function: error.function, message: error.message)
        }
    }
}

/// What libgme knows about one track (`gme_info_t`): times in milliseconds, texts as raw bytes (libgme does
/// not say which encoding a file uses).
public struct GMETrackInfo: Sendable, Hashable {
    /// The length the file states, or -1.
    public var length: Int
    /// The length up to the loop, or -1.
    public var introLength: Int
    /// The length of the loop, or -1.
    public var loopLength: Int
    /// `length` if known, else intro + 2 loops if known, else libgme's default of 150000 (2.5 minutes).
    public var playLength: Int
    /// The emulated system ("Nintendo NES"...).
    public var system: [UInt8]
    /// The game.
    public var game: [UInt8]
    /// The song (track) name.
    public var song: [UInt8]
    /// The composer.
    public var author: [UInt8]
    /// The copyright text (often a year).
    public var copyright: [UInt8]
    /// The comment.
    public var comment: [UInt8]
    /// Who ripped the file.
    public var dumper: [UInt8]
}

/// One libgme emulator with a file loaded (`Music_Emu`); deleted when released.
///
/// A track is only ever started on an emulator that has started none: libgme 0.6.3's `gme_start_track` on an
/// emulator whose track played (as `gme_seek` does to go back) can fail an assertion and abort
/// (`Sms_Apu::run_until` on fuzz/regressions/trackers/vgz-restart-after-end-447e3583), so starting another
/// track, or seeking back, loads the file into a fresh emulator first, with the same settings. The one cause
/// found since (probed in C), writes to a second SN76489 the header does not declare, `GMEInput.checkVGM`
/// refuses before loading; the fresh start stays, as it costs a reload of data already in memory.
///
/// Thread confinement: create on any thread, then use from one thread at a time. `play(into:)` and
/// `isTrackEnded` do not allocate in Swift (libgme's emulators render into buffers they allocated when the
/// file was loaded); a seek back allocates a fresh emulator.
public final class GMEEmulator {
    private var emu: OpaquePointer
    /// The library's table (it is never closed).
    private let gme: fermata_gme_functions
    /// What a fresh emulator is made of.
    private let data: [UInt8]
    private let type: gme_type_t
    private let sampleRate: Int
    private var m3u: [UInt8]?
    private var accuracy: Bool?
    /// The track started on this emulator, and its fade.
    private var track: Int?
    private var fadeMilliseconds: Int?

    /// Loads a file's bytes into a new emulator at `sampleRate` Hz (stereo), as `gme_open_file` does: the
    /// emulator type is the one named by `suffix` (the file's suffix, any case), else the one the first
    /// four bytes identify.
    ///
    /// - Parameter library: The libgme to use (loaded now if it is not).
    /// - Throws: `GMEError` when libgme cannot be loaded, no emulator type fits ("Wrong file type for this
    ///   emulator"), libgme cannot load the data, or the data is refused.
    /// Gzip data is inflated first, as `gme_open_file` does, and VGM files whose sample data libgme would read
    /// outside of are refused (libgme 0.6.3 would crash on them).
    public init(data original: [UInt8], suffix: String?, sampleRate: Int, library: GMELibrary = .shared)
        throws(GMEError)
    {
        let data = try GMEInput.prepared(original, sampleRate: sampleRate)
        let gme = try library.functions()
        var type: gme_type_t? = suffix.flatMap { suffix in suffix.withCString { gme.gme_identify_extension($0) } }
        if type == nil, data.count >= 4 {
            type = data.withUnsafeBytes { raw in gme.gme_identify_extension(gme.gme_identify_header(raw.baseAddress)) }
        }
        guard let type else {
            throw GMEError(function: "gme_identify_header", message: "Wrong file type for this emulator")
        }
        self.emu = try Self.load(data, type: type, sampleRate: sampleRate, gme)
        self.gme = gme
        self.data = data
        self.type = type
        self.sampleRate = sampleRate
    }

    deinit { self.gme.gme_delete(self.emu) }

    /// A new emulator of `type` with `data` loaded.
    private static func load(_ data: [UInt8], type: gme_type_t, sampleRate: Int, _ gme: fermata_gme_functions)
        throws(GMEError) -> OpaquePointer
    {
        guard let created = gme.gme_new_emu(type, Int32(clamping: sampleRate)) else {
            throw GMEError(function: "gme_new_emu", message: "Out of memory")
        }
        let error = data.withUnsafeBytes { raw in gme.gme_load_data(created, raw.baseAddress, raw.count) }
        do {
            try Self.check("gme_load_data", error)
        } catch {
            gme.gme_delete(created)
            throw error
        }
        return created
    }

    /// Replaces the emulator by a fresh one with the file, the M3U playlist and the accuracy applied.
    private func reload() throws(GMEError) {
        let fresh = try Self.load(self.data, type: self.type, sampleRate: self.sampleRate, self.gme)
        self.gme.gme_delete(self.emu)
        self.emu = fresh
        self.track = nil
        self.fadeMilliseconds = nil
        if let m3u = self.m3u { try? self.loadM3U(data: m3u) }
        if let accuracy = self.accuracy { self.gme.gme_enable_accuracy(self.emu, accuracy ? 1 : 0) }
    }

    /// The system libgme emulates for this file ("Nintendo NES", "Super Nintendo"...).
    public var systemName: String {
        guard let type = self.gme.gme_type(self.emu), let name = self.gme.gme_type_system(type) else { return "" }
        return String(cString: name)
    }

    /// Applies an M3U playlist's track list, names and times (`gme_load_m3u_data`).
    ///
    /// - Throws: `GMEError` when libgme rejects the playlist.
    public func loadM3U(data: [UInt8]) throws(GMEError) {
        let error = data.withUnsafeBytes { raw in self.gme.gme_load_m3u_data(self.emu, raw.baseAddress, raw.count) }
        try Self.check("gme_load_m3u_data", error)
        self.m3u = data
    }

    /// How many tracks the file (or its M3U playlist) has.
    public var trackCount: Int { Int(self.gme.gme_track_count(self.emu)) }

    /// The information of track `index` (0-based).
    ///
    /// - Throws: `GMEError` for a track that does not exist.
    public func trackInfo(_ index: Int) throws(GMEError) -> GMETrackInfo {
        var pointer: UnsafeMutablePointer<gme_info_t>?
        try Self.check("gme_track_info", self.gme.gme_track_info(self.emu, &pointer, Int32(clamping: index)))
        guard let pointer else { throw GMEError(function: "gme_track_info", message: "no information") }
        defer { self.gme.gme_free_info(pointer) }
        let info = pointer.pointee
        func bytes(_ text: UnsafePointer<CChar>?) -> [UInt8] {
            guard let text else { return [] }
            return Array(UnsafeRawBufferPointer(start: text, count: strlen(text)))
        }
        return GMETrackInfo(
            length: Int(info.length), introLength: Int(info.intro_length), loopLength: Int(info.loop_length),
            playLength: Int(info.play_length), system: bytes(info.system), game: bytes(info.game),
            song: bytes(info.song), author: bytes(info.author), copyright: bytes(info.copyright),
            comment: bytes(info.comment), dumper: bytes(info.dumper))
    }

    /// Starts track `index` (0-based) from its beginning (on a fresh emulator when one was started before).
    ///
    /// - Throws: `GMEError` from `gme_start_track`, or from loading the file again.
    public func startTrack(_ index: Int) throws(GMEError) {
        if self.track != nil { try self.reload() }
        self.track = index
        try Self.check("gme_start_track", self.gme.gme_start_track(self.emu, Int32(clamping: index)))
    }

    /// Turns libgme's more accurate, slower emulation on or off (`gme_enable_accuracy`); call it before
    /// starting a track.
    public func enableAccuracy(_ enabled: Bool) {
        self.accuracy = enabled
        self.gme.gme_enable_accuracy(self.emu, enabled ? 1 : 0)
    }

    /// Starts fading out at `milliseconds` into the track; the track ends when the fade has (`gme_set_fade`).
    public func setFade(startMilliseconds milliseconds: Int) {
        self.fadeMilliseconds = milliseconds
        self.gme.gme_set_fade(self.emu, Int32(clamping: milliseconds))
    }

    /// Renders `buffer.count` interleaved stereo samples (an even count) of the current track.
    ///
    /// Does not allocate. Decoder thread.
    /// - Throws: `GMEError` from `gme_play` (an emulation error).
    public func play(into buffer: UnsafeMutableBufferPointer<Int16>) throws(GMEError) {
        try Self.check("gme_play", self.gme.gme_play(self.emu, Int32(clamping: buffer.count), buffer.baseAddress))
    }

    /// Whether the current track has ended (its fade is over, or it went silent).
    public var isTrackEnded: Bool { self.gme.gme_track_ended(self.emu) != 0 }

    /// Where playback of the current track is, in milliseconds.
    public var positionMilliseconds: Int { Int(self.gme.gme_tell(self.emu)) }

    /// Moves to `milliseconds` into the current track: emulating up to there, or, to go back, starting the
    /// track on a fresh emulator (with its fade) and emulating from its start.
    ///
    /// - Throws: `GMEError` from `gme_seek`, or from starting the track again.
    public func seek(milliseconds: Int) throws(GMEError) {
        if let track = self.track, milliseconds < self.positionMilliseconds {
            let fade = self.fadeMilliseconds
            try self.startTrack(track)
            if let fade { self.setFade(startMilliseconds: fade) }
        }
        try Self.check("gme_seek", self.gme.gme_seek(self.emu, Int32(clamping: milliseconds)))
    }

    private static func check(_ function: String, _ error: gme_err_t?) throws(GMEError) {
        if let error { throw GMEError(function: function, message: String(cString: error)) }
    }
}
