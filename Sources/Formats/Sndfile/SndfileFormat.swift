// SPDX-License-Identifier: GPL-3.0-or-later

import ID3Tag
import Input
import Model
import Sndfile

/// WAV, AIFF, AU and the other formats libsndfile reads, as Debian's `mpd` 0.23.12 `sndfile` plugin does.
///
/// `Format:` is `rate:16:channels` for 8- and 16-bit files, `rate:f:channels` for float and double files and
/// `rate:32:channels` for everything else (24-bit WAV included); `duration:` is frames × 1000 / rate. Tags
/// are the text fields libsndfile reads (RIFF `INFO`, AIFF `NAME`/`AUTH`/`ANNO`…) for title, artist,
/// comment, date, album, track and genre; when there are none, the registry applies `mpd`'s generic scan,
/// whose ID3 loader also finds the `id3 ` chunk of a RIFF file and the `ID3 ` chunk of an AIFF file. Any
/// thread.
public struct SndfileFormat: FormatPlugin {
    /// `sndfile`.
    public let name = "sndfile"
    /// `mpd`'s list for the plugin.
    public let suffixes = [
        "wav", "aiff", "aif", "au", "snd", "paf", "iff", "svx", "sf", "voc", "w64", "pvf", "xi", "htk", "caf", "sd2",
    ]
    /// `mpd`'s list for the plugin.
    public let mimeTypes = ["audio/wav", "audio/aiff", "audio/x-wav", "audio/x-aiff"]

    /// The text fields `mpd` maps, in the order it reports them.
    static let tagFields: [(field: SndfileStringField, type: TagType)] = [
        (.title, .title), (.artist, .artist), (.comment, .comment), (.date, .date), (.album, .album),
        (.trackNumber, .track), (.genre, .genre),
    ]

    /// Creates the plugin.
    public init() {}

    /// Reads the text fields, duration and format.
    ///
    /// - Throws: `FormatError.notRecognized` when libsndfile does not open the file or its sample rate is
    ///   invalid (`mpd` skips it); `.input` when it cannot be opened.
    public func readInfo(path: String) throws(FormatError) -> SongInfo { Self.info(try Self.open(path)) }

    /// As `readInfo(path:)`, over a remote stream (`mpd`'s `sndfile_scan_stream`, which its file scan also is).
    ///
    /// - Throws: `FormatError.notRecognized` when libsndfile does not recognise the stream.
    public func readInfo(input: any InputStream) throws(FormatError) -> SongInfo {
        Self.info(try Self.open(input: input))
    }

    private static func info(_ handle: SndfileHandle) -> SongInfo {
        var items: [RawTagItem] = []
        for (field, type) in Self.tagFields {
            if let value = handle.string(field) { items.append(RawTagItem(type, value)) }
        }
        let duration = Self.milliseconds(frames: UInt64(handle.frames), rate: UInt64(handle.sampleRate))
        return SongInfo(
            tags: TagCollector.tagItems(items), durationMilliseconds: duration, audioFormat: Self.audioFormat(handle))
    }

    /// Opens a libsndfile decoder over `input`.
    ///
    /// - Throws: `FormatError` when libsndfile does not recognise the stream or `mpd` refuses its format.
    public func makeDecoder(input: any InputStream) throws(FormatError) -> any Decoder {
        try SndfileDecoder(input: input)
    }

    // MARK: - Helpers

    /// The file opened as `mpd`'s scan does: libsndfile must recognise it and the rate must be valid.
    static func open(_ path: String) throws(FormatError) -> SndfileHandle {
        try Self.open(input: try LocalFile.input(path))
    }

    /// A stream opened as `mpd`'s scan opens it.
    static func open(input: any InputStream) throws(FormatError) -> SndfileHandle {
        guard let handle = try? SndfileHandle(input: input), Self.isValidSampleRate(handle.sampleRate) else {
            throw .notRecognized(path: input.uri)
        }
        return handle
    }

    /// `frames` × 1000 / `rate`, rounded down, without overflowing for absurd frame counts.
    static func milliseconds(frames: UInt64, rate: UInt64) -> UInt64 {
        let (whole, rest) = frames.quotientAndRemainder(dividingBy: rate)
        return whole.multipliedReportingOverflow(by: 1000).partialValue &+ rest * 1000 / rate
    }

    /// `mpd`'s `audio_valid_sample_rate`.
    static func isValidSampleRate(_ rate: Int) -> Bool { rate > 0 && rate < 1 << 30 }

    /// The format `mpd` plays the file in, or `nil` when it refuses the rate or channel count (1–8).
    static func audioFormat(_ handle: SndfileHandle) -> AudioFormat? {
        guard Self.isValidSampleRate(handle.sampleRate), (1...8).contains(handle.channels) else { return nil }
        let sampleFormat: SampleFormat =
            switch handle.encoding {
            case .pcmS8, .pcmU8, .pcm16: .s16
            case .float, .double: .float
            default: .s32
            }
        return AudioFormat(sampleRate: handle.sampleRate, sampleFormat: sampleFormat, channels: handle.channels)
    }
}
