// SPDX-License-Identifier: GPL-3.0-or-later

import CFluidSynth
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

/// One MIDI file played by libfluidsynth's MIDI player into its synthesizer, as `mpd`'s fluidsynth plugin sets
/// them up: settings with the sample rate, a synthesizer with one SoundFont, a player of the file. The player
/// is timed by the samples the synthesizer renders (no thread, no audio driver); libfluidsynth logs its own
/// errors (on standard error, as in `mpd`, whose log hook does not take).
///
/// Create on any thread, then use from one thread at a time. `render(into:)` does not allocate in Swift.
public final class FluidSynthPlayer {
    private let settings: OpaquePointer
    private let synth: OpaquePointer
    private let player: OpaquePointer

    /// Whether the file at `path` (its bytes as the kernel takes them, without a NUL) starts as a Standard MIDI
    /// File (`fluid_is_midifile`). Any thread.
    public static func isMIDIFile(path: [UInt8]) -> Bool {
        (path + [0]).withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { fluid_is_midifile($0.baseAddress) != 0 }
        }
    }

    /// Sets up a synthesizer at `sampleRate` with the SoundFont at `soundFont` and starts playing the MIDI file
    /// `midi` (copied by libfluidsynth).
    ///
    /// - Throws: `FluidSynthError` naming the step that failed (`fluid_synth_sfload` when the SoundFont cannot
    ///   be loaded, `fluid_player_add` when the file is not MIDI).
    public init(midi: [UInt8], sampleRate: Int, soundFont: String) throws(FluidSynthError) {
        guard let settings = new_fluid_settings() else { throw FluidSynthError(function: "new_fluid_settings") }
        fluid_settings_setnum(settings, "synth.sample-rate", Double(sampleRate))
        guard let synth = new_fluid_synth(settings) else {
            delete_fluid_settings(settings)
            throw FluidSynthError(function: "new_fluid_synth")
        }
        func failure(_ function: String, player: OpaquePointer? = nil) -> FluidSynthError {
            if let player { delete_fluid_player(player) }
            delete_fluid_synth(synth)
            delete_fluid_settings(settings)
            return FluidSynthError(function: function)
        }
        guard fluid_synth_sfload(synth, soundFont, 1) >= 0 else { throw failure("fluid_synth_sfload") }
        guard let player = new_fluid_player(synth) else { throw failure("new_fluid_player") }
        let added = midi.withUnsafeBytes { raw in
            raw.isEmpty ? FLUID_FAILED : fluid_player_add_mem(player, raw.baseAddress, raw.count)
        }
        guard added == FLUID_OK else { throw failure("fluid_player_add", player: player) }
        guard fluid_player_play(player) == FLUID_OK else { throw failure("fluid_player_play", player: player) }
        self.settings = settings
        self.synth = synth
        self.player = player
    }

    deinit {
        fluid_player_stop(self.player)
        fluid_player_join(self.player)
        delete_fluid_player(self.player)
        delete_fluid_synth(self.synth)
        delete_fluid_settings(self.settings)
    }

    /// Whether the player has MIDI events left to play (`FLUID_PLAYER_PLAYING`). Decoder thread.
    public var isPlaying: Bool { fluid_player_get_status(self.player) == Int32(FLUID_PLAYER_PLAYING.rawValue) }

    /// Renders interleaved 16-bit stereo (libfluidsynth dithers) filling `buffer` with whole frames.
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: frames written; 0 when libfluidsynth fails.
    public func render(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let frames = buffer.count / 4
        guard let base = buffer.baseAddress, frames > 0 else { return 0 }
        let result = fluid_synth_write_s16(self.synth, Int32(clamping: frames), base, 0, 2, base, 1, 2)
        return result == FLUID_OK ? frames : 0
    }
}
