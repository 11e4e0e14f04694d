// SPDX-License-Identifier: GPL-3.0-or-later

import FluidSynth
import Input
import Model
import Posix

/// The settings of `mpd`'s fluidsynth plugin (its `decoder { plugin "fluidsynth" }` block), with `mpd`'s
/// defaults.
public struct FluidSynthOptions: Sendable, Hashable {
    /// `sample_rate`: the synthesizer's rate in Hz. 48000.
    public var sampleRate: Int
    /// `soundfont`: the SoundFont every file is played with. `/usr/share/sounds/sf2/FluidR3_GM.sf2` (Debian's
    /// `fluid-soundfont-gm`; when it is absent, `mpd` still lists MIDI files but plays none).
    public var soundFont: String

    /// Creates options; the defaults are `mpd`'s.
    public init(sampleRate: Int = 48000, soundFont: String = "/usr/share/sounds/sf2/FluidR3_GM.sf2") {
        self.sampleRate = sampleRate
        self.soundFont = soundFont
    }
}

/// Standard MIDI files through libfluidsynth, as Debian's `mpd` 0.23.12 `fluidsynth` plugin reads them.
///
/// - Scan: a file is a song when it starts with `MThd` (`fluid_is_midifile`); no tags, no duration, no format
///   line.
/// - Decoding: a synthesizer at the options' rate with the options' SoundFont (loaded for every song; a
///   SoundFont that cannot be loaded makes every song fail to decode), 16-bit stereo in chunks of 1024 frames
///   while libfluidsynth's player plays; no length, not seekable.
///
/// Any thread.
public struct FluidSynthFormat: FileScanFormatPlugin {
    /// `fluidsynth`.
    public var name: String { "fluidsynth" }
    /// `mid`.
    public var suffixes: [String] { ["mid"] }
    /// None.
    public var mimeTypes: [String] { [] }
    /// The plugin's settings.
    public let options: FluidSynthOptions

    /// Creates the plugin.
    public init(options: FluidSynthOptions = FluidSynthOptions()) { self.options = options }

    /// Nothing but that the file is MIDI.
    ///
    /// - Throws: `FormatError.notRecognized` when the file does not start as a MIDI file.
    public func readInfo(path: String) throws(FormatError) -> SongInfo {
        guard FluidSynthPlayer.isMIDIFile(path: FileSystemCharset.encode(path)) else {
            throw .notRecognized(path: path)
        }
        return SongInfo()
    }

    /// A decoder of the MIDI file read whole from `input`.
    ///
    /// - Throws: `FormatError.input` when the stream cannot be read; `.notRecognized` (the plugin declines,
    ///   as `mpd`'s returns without decoding, so the error is `mpd`'s `Failed to decode <URI>`) when the
    ///   SoundFont cannot be loaded or libfluidsynth's player refuses the file.
    public func makeDecoder(input: any InputStream) throws(FormatError) -> any Decoder {
        let data = try WholeStream.read(input)
        let player: FluidSynthPlayer
        do {
            player = try FluidSynthPlayer(
                midi: data, sampleRate: self.options.sampleRate, soundFont: self.options.soundFont)
        } catch {
            throw .notRecognized(path: input.uri)
        }
        return ChunkedDecoder(
            source: FluidSynthSource(player: player),
            format: AudioFormat(sampleRate: self.options.sampleRate, sampleFormat: .s16, channels: 2),
            chunkBytes: FluidSynthSource.chunkBytes)
    }
}

/// A MIDI file as `mpd`'s fluidsynth plugin renders it: chunks of 1024 frames while the player plays.
///
/// Confined to the decoding thread; `renderChunk(into:)` does not allocate.
final class FluidSynthSource: ChunkSource {
    /// `mpd`'s buffer: 2048 16-bit samples.
    static let chunkBytes = 4096
    private let player: FluidSynthPlayer

    init(player: FluidSynthPlayer) { self.player = player }

    func renderChunk(into chunk: UnsafeMutableRawBufferPointer) -> Int {
        guard self.player.isPlaying else { return 0 }
        return self.player.render(into: chunk) * 4
    }
}
