// SPDX-License-Identifier: GPL-3.0-or-later

import FLAC
import Input
import Model

/// Decodes FLAC or Ogg FLAC with libFLAC's stream decoder into the stream's own depth, as `mpd` does: 8-bit to
/// `.s8`, 16 to `.s16`, 24 to `.s24` (24-bit values in 32-bit words), 32 to `.s32`, so nothing is converted.
///
/// Confined to the decoding thread. `decode(into:)` and `seek(toFrame:)` do not allocate.
public final class FLACDecoder: Decoder {
    /// `rate:depth:channels` from STREAMINFO.
    public let format: AudioFormat
    /// STREAMINFO's total samples, or `nil` when it says 0 (unknown).
    public let totalFrames: UInt64?
    /// The `MIXRAMP_START` comment, if any (the last one wins, as in `mpd`).
    public let mixRampStart: String?
    /// The `MIXRAMP_END` comment, if any.
    public let mixRampEnd: String?
    /// The `REPLAYGAIN_*` comments' values, if any (`mpd`'s FLAC plugin submits them).
    public let replayGain: ReplayGainInfo?
    private let decoder: FLACStreamDecoder
    /// The VORBIS_COMMENT block's tags, until `readTag()` hands them over.
    private var pendingTags: [TagItem]?

    /// The kbit/s of the FLAC frame decoded last, computed as `mpd`'s FLAC plugin does (0 for Ogg FLAC, and
    /// for the first frame after opening or seeking).
    public var bitRate: Int { self.decoder.bitRate }

    /// Opens the stream `input` reads (from its current offset); the decoder keeps `input`.
    ///
    /// - Throws: `FormatError.notRecognized` when libFLAC cannot read the metadata or finds no STREAMINFO (`mpd`'s
    ///   plugin declines: the next plugin is tried and the error, if all fail, is another's), also for a depth other
    ///   than 8, 16, 24 or 32 bits or a rate or channel count out of range.
    public init(input: any InputStream, container: FLACMetadata.Container) throws(FormatError) {
        do {
            self.decoder = try FLACStreamDecoder(input: input, container: container, metadata: .vorbisComment)
        } catch {
            throw .notRecognized(path: input.uri)
        }
        let info = self.decoder.streamInfo
        // mpd's plugin logs a format it cannot import and declines (its FFmpeg plugin may play the file).
        guard let format = FLACScan.audioFormat(info) else { throw .notRecognized(path: input.uri) }
        self.format = format
        self.totalFrames = info.totalSamples > 0 ? info.totalSamples : nil
        var start: String?
        var end: String?
        var comments: [[UInt8]] = []
        var replayGain = ReplayGainInfo()
        for case .vorbisComment(_, let entries) in self.decoder.metadata {
            comments += entries
            for entry in entries {
                let ramp = VorbisComment.mixRamp(entry[...])
                start = ramp.start ?? start
                end = ramp.end ?? end
                VorbisComment.applyReplayGain(entry[...], to: &replayGain)
            }
        }
        self.mixRampStart = start
        self.mixRampEnd = end
        self.replayGain = replayGain.isEmpty ? nil : replayGain
        self.pendingTags = VorbisComment.streamTags(comments)
    }

    /// The file's comments as tags, once (`mpd`'s FLAC plugin submits them; for a remote song they become its
    /// tags).
    public func readTag() -> [TagItem]? {
        defer { self.pendingTags = nil }
        return self.pendingTags
    }

    /// Decodes whole frames into `buffer`.
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: frames written; 0 at the end (a truncated last frame ends the song, as in `mpd`).
    /// - Throws: `FormatError.input` when reading fails, `.decoder` when libFLAC fails.
    public func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        do {
            return try self.decoder.read(into: buffer)
        } catch {
            if case .input(let failure) = error { throw .input(failure) }
            throw .decoder("\(error)")
        }
    }

    /// Seeks to `frame` exactly.
    ///
    /// Does not allocate. Decoder thread.
    /// - Throws: `FormatError.decoder` when libFLAC cannot seek there (e.g. at or past the end).
    @discardableResult
    public func seek(toFrame frame: UInt64) throws(FormatError) -> UInt64 {
        do {
            return try self.decoder.seek(toSample: frame)
        } catch {
            throw .decoder("\(error)")
        }
    }
}
