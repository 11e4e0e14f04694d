// SPDX-License-Identifier: GPL-3.0-or-later

import CFluidSynth
import DynamicLibrary
import Glibc

/// A libfluidsynth failure: the function that failed.
public struct FluidSynthError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The libfluidsynth function.
    public var function: String

    /// Creates an error.
    public init(function: String) { self.function = function }

    /// `function failed`.
    public var description: String { "\(self.function)() failed" }
}

/// libfluidsynth, loaded on first use (the first MIDI file scanned or played) and kept loaded.
///
/// The `fermata` binary does not link libfluidsynth: its 64 libraries (SDL2, GLib, PulseAudio, JACK, readline,
/// libinstpatch…) cost every server ~6.6 MiB of resident memory at start-up, used only by MIDI files. The first
/// use opens it (`dlopen`, Debian's soname) and resolves every function the wrapper calls into a table. It is
/// never closed: libfluidsynth's dependencies (GLib's type system, SDL's) keep process-wide state that a
/// `dlclose` would leak on every reload.
///
/// When it cannot be loaded (not installed, a missing function), the reason is reported once, on stderr, and
/// the fluidsynth plugin declines every file, as `mpd` disables a decoder plugin whose initialisation fails.
public final class FluidSynthLibrary: Sendable {
    /// The process's library: Debian's soname, `libfluidsynth.so.3`.
    public static let shared = FluidSynthLibrary(soname: FluidSynthLibrary.headerSoname)

    /// The soname Debian's development package links.
    public static let headerSoname = FERMATA_FLUIDSYNTH_SONAME

    private let library: DynamicLibraries<fermata_fluidsynth_functions>

    /// The library loaded from `soname` (any name or path `dlopen` takes) on first use.
    ///
    /// - Parameter reportFailure: Told once why the library cannot be loaded (stderr by default).
    public init(soname: String, reportFailure: (@Sendable (String) -> Void)? = nil) {
        self.library = DynamicLibraries(
            names: [soname], what: soname, prefix: "fluidsynth: decoder plugin unavailable: ",
            fill: { table, handles in fermata_fluidsynth_resolve(table, handles[0]) }, reportFailure: reportFailure)
    }

    /// Whether the library is loaded now.
    public var isLoaded: Bool { self.library.isLoaded }
    /// How many players use it now.
    public var users: Int { self.library.users }
    /// How many times it was loaded.
    public var loadCount: Int { self.library.loadCount }

    /// Why the library cannot be loaded (then also reported, once), or `nil` once it loaded (it stays loaded until
    /// it is idle and closed).
    public func loadFailure() -> DynamicLibraryError? {
        do {
            _ = try self.library.acquire()
            self.library.release()
            return nil
        } catch {
            return error
        }
    }

    fileprivate func acquire() throws(DynamicLibraryError) -> fermata_fluidsynth_functions {
        try self.library.acquire()
    }

    fileprivate func release() { self.library.release() }
}

/// One MIDI file played by libfluidsynth's MIDI player into its synthesizer, as `mpd`'s fluidsynth plugin sets
/// them up: settings with the sample rate, a synthesizer with one SoundFont, a player of the file. The player
/// is timed by the samples the synthesizer renders (no thread, no audio driver); libfluidsynth logs its own
/// errors (on standard error, as in `mpd`, whose log hook does not take).
///
/// Create on any thread, then use from one thread at a time. `render(into:)` does not allocate in Swift. Each
/// player holds one use of its `FluidSynthLibrary` (loading it if it is the first).
public final class FluidSynthPlayer {
    private let library: FluidSynthLibrary
    private let fluid: fermata_fluidsynth_functions
    private let settings: OpaquePointer
    private let synth: OpaquePointer
    private let player: OpaquePointer

    /// Whether the file at `path` (its bytes as the kernel takes them, without a NUL) starts as a Standard MIDI
    /// File (`fluid_is_midifile`); `false` when `library` cannot be loaded. Any thread.
    public static func isMIDIFile(path: [UInt8], library: FluidSynthLibrary = .shared) -> Bool {
        guard let fluid = try? library.acquire() else { return false }
        defer { library.release() }
        return (path + [0]).withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { fluid.fluid_is_midifile($0.baseAddress) != 0 }
        }
    }

    /// Sets up a synthesizer at `sampleRate` with the SoundFont at `soundFont` and starts playing the MIDI file
    /// `midi` (copied by libfluidsynth).
    ///
    /// - Throws: `FluidSynthError` naming the step that failed (`fluid_synth_sfload` when the SoundFont cannot
    ///   be loaded, `fluid_player_add` when the file is not MIDI, `new_fluid_settings` when `library` cannot be
    ///   loaded: the reason reported once by `library`).
    public init(
        midi: [UInt8], sampleRate: Int, soundFont: String, library: FluidSynthLibrary = .shared
    ) throws(FluidSynthError) {
        let fluid: fermata_fluidsynth_functions
        do {
            fluid = try library.acquire()
        } catch {
            throw FluidSynthError(function: "new_fluid_settings")
        }
        guard let settings = fluid.new_fluid_settings() else {
            library.release()
            throw FluidSynthError(function: "new_fluid_settings")
        }
        _ = fluid.fluid_settings_setnum(settings, "synth.sample-rate", Double(sampleRate))
        guard let synth = fluid.new_fluid_synth(settings) else {
            fluid.delete_fluid_settings(settings)
            library.release()
            throw FluidSynthError(function: "new_fluid_synth")
        }
        func failure(_ function: String, player: OpaquePointer? = nil) -> FluidSynthError {
            if let player { fluid.delete_fluid_player(player) }
            fluid.delete_fluid_synth(synth)
            fluid.delete_fluid_settings(settings)
            library.release()
            return FluidSynthError(function: function)
        }
        guard fluid.fluid_synth_sfload(synth, soundFont, 1) >= 0 else { throw failure("fluid_synth_sfload") }
        guard let player = fluid.new_fluid_player(synth) else { throw failure("new_fluid_player") }
        let added = midi.withUnsafeBytes { raw in
            raw.isEmpty ? FLUID_FAILED : fluid.fluid_player_add_mem(player, raw.baseAddress, raw.count)
        }
        guard added == FLUID_OK else { throw failure("fluid_player_add", player: player) }
        guard fluid.fluid_player_play(player) == FLUID_OK else { throw failure("fluid_player_play", player: player) }
        self.library = library
        self.fluid = fluid
        self.settings = settings
        self.synth = synth
        self.player = player
    }

    deinit {
        _ = self.fluid.fluid_player_stop(self.player)
        _ = self.fluid.fluid_player_join(self.player)
        self.fluid.delete_fluid_player(self.player)
        self.fluid.delete_fluid_synth(self.synth)
        self.fluid.delete_fluid_settings(self.settings)
        self.library.release()
    }

    /// Whether the player has MIDI events left to play (`FLUID_PLAYER_PLAYING`). Decoder thread.
    public var isPlaying: Bool {
        self.fluid.fluid_player_get_status(self.player) == Int32(FLUID_PLAYER_PLAYING.rawValue)
    }

    /// Renders interleaved 16-bit stereo (libfluidsynth dithers) filling `buffer` with whole frames.
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: frames written; 0 when libfluidsynth fails.
    public func render(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let frames = buffer.count / 4
        guard let base = buffer.baseAddress, frames > 0 else { return 0 }
        let result = self.fluid.fluid_synth_write_s16(self.synth, Int32(clamping: frames), base, 0, 2, base, 1, 2)
        return result == FLUID_OK ? frames : 0
    }
}
