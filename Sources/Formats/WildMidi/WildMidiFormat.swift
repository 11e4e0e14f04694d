// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Model
import WildMidi

/// The settings of `mpd`'s wildmidi plugin (its `decoder { plugin "wildmidi" }` block), with `mpd`'s default.
public struct WildMidiOptions: Sendable, Hashable {
    /// `config_file`: the timidity configuration naming the GUS patches. `/etc/timidity/timidity.cfg` (absent
    /// on this system: `mpd` then leaves the plugin out, and `.mid` goes to fluidsynth).
    public var configFile: String

    /// Creates options; the default is `mpd`'s.
    public init(configFile: String = "/etc/timidity/timidity.cfg") { self.configFile = configFile }
}

/// Standard MIDI files through libwildmidi, as Debian's `mpd` 0.23.12 `wildmidi` plugin reads them (before
/// fluidsynth in its order).
///
/// - Scan: no tags; format `48000:16:2`; duration from libwildmidi's sample estimate.
/// - Decoding: 16-bit stereo at 48000 Hz in reads of 4096 bytes until libwildmidi renders nothing; seekable
///   (`WildMidi_FastSeek`).
///
/// Any thread.
public struct WildMidiFormat: FileScanFormatPlugin {
    /// `mpd`'s fixed output format.
    static let format = AudioFormat(sampleRate: 48000, sampleFormat: .s16, channels: 2)
    /// `wildmidi`.
    public var name: String { "wildmidi" }
    /// `mid`.
    public var suffixes: [String] { ["mid"] }
    /// None.
    public var mimeTypes: [String] { [] }
    /// The plugin's settings.
    public let options: WildMidiOptions

    /// Initialises libwildmidi with the options' configuration, as `mpd`'s plugin initialisation does.
    ///
    /// - Returns: `nil` when libwildmidi cannot be initialised with it (a missing configuration file, for one):
    ///   `mpd` then leaves the plugin out.
    public init?(options: WildMidiOptions = WildMidiOptions()) {
        do {
            try WildMidiLibrary.setUp(configFile: options.configFile, sampleRate: Self.format.sampleRate)
        } catch {
            return nil
        }
        self.options = options
    }

    /// The format and duration.
    ///
    /// - Throws: `FormatError.notRecognized` when the file cannot be read or libwildmidi cannot open it.
    public func readInfo(path: String) throws(FormatError) -> SongInfo {
        guard let song = WildMidiSong(data: try WholeStream.file(path)) else { throw .notRecognized(path: path) }
        let rate = UInt64(Self.format.sampleRate)
        return SongInfo(durationMilliseconds: song.approximateTotalSamples * 1000 / rate, audioFormat: Self.format)
    }

    /// A decoder of the MIDI file read whole from `input`.
    ///
    /// - Throws: `FormatError` when the stream cannot be read or libwildmidi cannot open it.
    public func makeDecoder(input: any InputStream) throws(FormatError) -> any Decoder {
        guard let song = WildMidiSong(data: try WholeStream.read(input)) else {
            throw .decoder("\(input.uri): libwildmidi cannot open it")
        }
        return ChunkedDecoder(source: WildMidiSource(song: song), format: Self.format, chunkBytes: 4096)
    }
}

/// A MIDI file as `mpd`'s wildmidi plugin renders it: reads of 4096 bytes, seeks by sample.
///
/// Confined to the decoding thread; `renderChunk(into:)` and `seek(toFrame:)` do not allocate.
final class WildMidiSource: ChunkSource {
    private let song: WildMidiSong
    /// libwildmidi's estimate, fixed when the song opens.
    let totalFrames: UInt64?

    init(song: WildMidiSong) {
        self.song = song
        self.totalFrames = song.approximateTotalSamples
    }

    var isSeekable: Bool { true }

    func renderChunk(into chunk: UnsafeMutableRawBufferPointer) -> Int { self.song.render(into: chunk) }

    func seek(toFrame frame: UInt64) -> UInt64 { self.song.seek(toSample: frame) }
}
