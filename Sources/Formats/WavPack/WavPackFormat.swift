// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Model
import WavPack

/// WavPack (`.wv`) as Debian's `mpd` 0.23.12 `wavpack` plugin reads it, through libwavpack.
///
/// `Format:` follows the stream: `rate:8:`, `16`, `24` (24-bit in 32-bit words), `32` or `f` for float, and
/// `dsd64:`… for DSD; `duration:` is samples × 1000 / rate. The plugin reads no tags itself: the registry's
/// generic scan reads the APEv2 tag WavPack files carry (tags, `readcomments`, ReplayGain). A `.wvc`
/// correction file next to a hybrid file is used for playback, so it decodes losslessly. Any thread.
public struct WavPackFormat: FormatPlugin {
    /// `wavpack`.
    public let name = "wavpack"
    /// `wv`.
    public let suffixes = ["wv"]
    /// `audio/x-wavpack`.
    public let mimeTypes = ["audio/x-wavpack"]

    /// Creates the plugin.
    public init() {}

    /// Reads duration and format (the registry adds the APE tag's tags and ReplayGain).
    ///
    /// - Throws: `FormatError.notRecognized` when libwavpack does not open the file; `.input` when it cannot
    ///   be opened.
    public func readInfo(path: String) throws(FormatError) -> SongInfo {
        try self.readInfo(input: try LocalFile.input(path))
    }

    /// As `readInfo(path:)`, over a remote stream (`wavpack_scan_stream`: libwavpack's stream reader, DSD as
    /// DSD, no correction file): libwavpack reads the first block's header and metadata, and the last block's
    /// when the sample count is not in the first.
    ///
    /// - Throws: `FormatError.notRecognized` when libwavpack does not open the stream.
    public func readInfo(input: any InputStream) throws(FormatError) -> SongInfo {
        guard let context = try? WavPackContext(input: input, flags: .dsdNative) else {
            throw .notRecognized(path: input.uri)
        }
        var duration: UInt64?
        if let samples = context.totalSamples, context.sampleRate > 0 {
            duration = SndfileFormat.milliseconds(frames: UInt64(samples), rate: UInt64(context.sampleRate))
        }
        return SongInfo(durationMilliseconds: duration, audioFormat: Self.audioFormat(context))
    }

    /// Opens a decoder over `input`; for a local file, with the `.wvc` correction file beside it when there
    /// is one (as `mpd` opens `<uri>c`).
    ///
    /// - Throws: `FormatError` when libwavpack cannot open the stream or `mpd` refuses its format.
    public func makeDecoder(input: any InputStream) throws(FormatError) -> any Decoder {
        let correction: (any InputStream)? =
            input is FileInputStream || input is InputCacheStream ? try? FileInputStream(path: input.uri + "c") : nil
        return try WavPackDecoder(input: input, correction: correction)
    }

    // MARK: - Helpers

    /// The format `mpd` plays the stream in, or `nil` when its `CheckAudioFormat` refuses it (rate 0 or
    /// ≥ 2³⁰, no channels or more than 8, more than 4 bytes per sample).
    static func audioFormat(_ context: WavPackContext) -> AudioFormat? {
        let sampleFormat: SampleFormat
        if context.isFloat {
            sampleFormat = .float
        } else if context.isDSD {
            sampleFormat = .dsd
        } else {
            switch context.bytesPerSample {
            case 1: sampleFormat = .s8
            case 2: sampleFormat = .s16
            case 3: sampleFormat = .s24
            case 4: sampleFormat = .s32
            default: return nil
            }
        }
        guard context.sampleRate > 0, context.sampleRate < 1 << 30, (1...8).contains(context.channels) else {
            return nil
        }
        return AudioFormat(sampleRate: context.sampleRate, sampleFormat: sampleFormat, channels: context.channels)
    }
}
