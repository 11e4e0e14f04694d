// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import ID3Tag
import Input
import MPCDec
import Model

/// Musepack (SV7, SV8) as Debian's `mpd` 0.23.12 reads it with its `mpcdec` plugin (libmpcdec).
///
/// The plugin's scan reports only the duration (`mpc_streaminfo_get_length` seconds, truncated to
/// milliseconds), no format: `mpd` lists no `Format:` for Musepack songs. Tags come from the registry's generic
/// APE/ID3 scan. ReplayGain is what the decoder submits: the stream header's values when it has any, else the APE
/// tag's. Playback is 24-bit in 32-bit words (`MusepackDecoder`), sample-accurately seekable. Any thread.
public struct MusepackFormat: FormatPlugin {
    /// `mpcdec`.
    public var name: String { "mpcdec" }
    /// `mpc`.
    public var suffixes: [String] { ["mpc"] }
    /// None (as `mpd` 0.23.12 lists the plugin).
    public var mimeTypes: [String] { [] }

    /// Creates the plugin.
    public init() {}

    /// Duration and ReplayGain; no tags (the registry's generic scan adds them) and no format.
    ///
    /// - Throws: `FormatError.notRecognized` when libmpcdec rejects the file; `.input` when it cannot be opened.
    public func readInfo(path: String) throws(FormatError) -> SongInfo {
        try self.readInfo(input: try LocalFile.input(path))
    }

    /// As `readInfo(path:)`, over a remote stream (`mpcdec_scan_stream`, the plugin's only scan): libmpcdec's
    /// demuxer reads the stream header through its reader; the APE tag's ReplayGain only from a stream that
    /// seeks and knows its size.
    ///
    /// - Throws: `FormatError.notRecognized` when libmpcdec rejects the stream.
    public func readInfo(input: any InputStream) throws(FormatError) -> SongInfo {
        let demux: MPCDemux
        do {
            demux = try MPCDemux(input: input)
        } catch {
            throw .notRecognized(path: input.uri)
        }
        let seconds = demux.info.lengthSeconds
        // mpd: SongTime::FromS(double), the milliseconds truncated.
        let milliseconds = seconds.isFinite && seconds > 0 ? UInt64(min(seconds * 1000, Double(UInt32.max))) : 0
        var replayGain = Self.replayGain(demux.info)
        if replayGain.isEmpty, let ape = GenericTags.ape(input: input) {
            replayGain = ape.replayGain() ?? ReplayGainInfo()
        }
        return SongInfo(durationMilliseconds: milliseconds, replayGain: replayGain)
    }

    /// Opens a libmpcdec decoder over `input`.
    ///
    /// - Throws: `FormatError.decoder` when libmpcdec rejects the stream.
    public func makeDecoder(input: any InputStream) throws(FormatError) -> any Decoder {
        try MusepackDecoder(input: input)
    }

    /// The stream header's ReplayGain as `mpd`'s plugin converts it (see `gainAndPeak`).
    static func replayGain(_ info: MPCStreamInfo) -> ReplayGainInfo {
        var result = ReplayGainInfo()
        if let (gain, peak) = Self.gainAndPeak(info.titleGain, info.titlePeak) {
            result.trackGain = gain
            result.trackPeak = peak
        }
        if let (gain, peak) = Self.gainAndPeak(info.albumGain, info.albumPeak) {
            result.albumGain = gain
            result.albumPeak = peak
        }
        return result
    }

    /// One header gain and peak pair in dB and linear, as `mpd` reads it: defined when both are non-zero; the
    /// gain is `64.82 - value / 256` dB, the peak `10^(value / 256 / 20) / 32767`.
    static func gainAndPeak(_ gain: UInt16, _ peak: UInt16) -> (gain: Double, peak: Double)? {
        guard gain != 0, peak != 0 else { return nil }
        return (64.82 - Double(gain) / 256, pow(10, Double(peak) / 256 / 20) / 32767)
    }
}
