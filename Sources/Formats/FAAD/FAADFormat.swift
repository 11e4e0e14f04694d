// SPDX-License-Identifier: GPL-3.0-or-later

import FAAD
import ID3Tag
import Input
import Model

/// Raw AAC (ADTS, ADIF) as Debian's `mpd` 0.23.12 reads it with its `faad` plugin (libfaad).
///
/// The scan reports only a duration, and only when it finds one (`ADTSScanner.songDuration`: every ADTS frame
/// counted, or an ADIF header's bit rate); no format. Without a duration the file is still a song when
/// `NeAACDecInit` accepts the first bytes (libfaad accepts most bytes, falling back to its defaults). Tags come
/// from the registry's generic APE/ID3 scan. Playback decodes ADTS frames to 16 bits, 5.1 mixed down to stereo,
/// and cannot seek, as in `mpd` (`FAADStreamDecoder`). Any thread.
public struct FAADFormat: FormatPlugin {
    /// `faad`.
    public var name: String { "faad" }
    /// `aac`.
    public var suffixes: [String] { ["aac"] }
    /// `audio/aac`, `audio/aacp`.
    public var mimeTypes: [String] { ["audio/aac", "audio/aacp"] }

    /// Creates the plugin.
    public init() {}

    /// The duration mpd finds, if any, and the APE tag's ReplayGain (what mpd's decoder loads for it).
    ///
    /// - Throws: `FormatError.notRecognized` when mpd's faad plugin would not add the file; `.input` when it
    ///   cannot be opened.
    public func readInfo(path: String) throws(FormatError) -> SongInfo {
        try self.readInfo(input: try LocalFile.input(path))
    }

    /// As `readInfo(path:)`, over a remote stream (`faad_scan_stream`, the plugin's only scan). A stream whose
    /// seeking is not cheap (any URL, as `mpd`'s `CheapSeeking`) has its ADTS duration extrapolated from the
    /// first 128 frames and its size, as `mpd` does, instead of read to the end.
    ///
    /// - Throws: `FormatError.notRecognized` when mpd's faad plugin would not add the stream.
    public func readInfo(input: any InputStream) throws(FormatError) -> SongInfo {
        var info = SongInfo(durationMilliseconds: try Self.scan(input))
        if let gain = GenericTags.ape(input: input)?.replayGain() {
            info.replayGain = gain
        }
        return info
    }

    /// Opens a libfaad decoder over `input`.
    ///
    /// - Throws: `FormatError.notRecognized` when the stream has no ADTS frame, `.decoder` when libfaad rejects it.
    public func makeDecoder(input: any InputStream) throws(FormatError) -> any Decoder {
        try FAADStreamDecoder(input: input)
    }

    /// mpd's `faad_get_file_time`: the duration, if known.
    ///
    /// - Throws: `FormatError.notRecognized` when neither the duration scan nor `NeAACDecInit` recognises it.
    static func scan(_ input: any InputStream) throws(FormatError) -> UInt64? {
        let buffer = FAADInputBuffer(input: input, capacity: ADTSScanner.bufferCapacity)
        if let duration = ADTSScanner.songDuration(buffer) { return duration }
        buffer.fill()
        guard let decoder = try? FAADDecoder(configuration: .mpd),
            let format = try? decoder.initialize(buffer.bytes), Self.isValid(format)
        else { throw .notRecognized(path: input.uri) }
        return nil
    }

    /// mpd's `CheckAudioFormat`: a rate in 1 ..< 2^30 and 1 … 8 channels.
    static func isValid(_ format: FAADStreamFormat) -> Bool {
        format.sampleRate > 0 && format.sampleRate < 1 << 30 && (1...8).contains(format.channels)
    }
}
