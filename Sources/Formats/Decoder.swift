// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// A PCM source for playback, made by a `FormatPlugin`.
///
/// Confined to the thread that decodes (it is not `Sendable`). `decode(into:)` and `seek(toFrame:)` run on
/// the audio path: implementations must not allocate, lock or log per call.
public protocol Decoder {
    /// The PCM format `decode(into:)` writes (interleaved; `.s24` is 24-bit in 32-bit words, like `mpd`).
    var format: AudioFormat { get }
    /// The song's length in PCM frames, when known.
    var totalFrames: UInt64? { get }
    /// Whether `status` shows `totalFrames` as the song's length even when the library knows another one:
    /// `mpd` shows what its decoder reports, which for some plugins is not what its scan stored (its gme
    /// plugin adds the fade). `false` by default: the library's length is shown.
    var totalFramesOverrideLibrary: Bool { get }
    /// The bit rate of what `decode(into:)` decoded last, in kbit/s (0 when unknown), as `mpd` shows it in
    /// `status` `bitrate:`: for MP3 the rate of the current frame, so it varies with VBR files.
    var bitRate: Int { get }
    /// The song's `mixramp_start` tag (`"dB seconds;…"` pairs: how loud its start is, for MixRamp), if any.
    var mixRampStart: String? { get }
    /// The song's `mixramp_end` tag (how loud its end is), if any.
    var mixRampEnd: String? { get }
    /// Whether `seek(toFrame:)` can work (what `mpd`'s plugin tells its player): `false` for raw AAC, which
    /// `mpd` answers a seek into with "Not seekable" and starts from its beginning when it must reopen it.
    var isSeekable: Bool { get }
    /// The ReplayGain the decoder read in the stream (its comments, ID3 tag or header), as `mpd`'s plugin submits
    /// it (`SubmitReplayGain`) whatever the ReplayGain mode, which the outputs apply as the song plays; `nil` when
    /// it read none.
    var replayGain: ReplayGainInfo? { get }
    /// Whether the song ended as `mpd`'s plugin ends it by throwing `StopDecoder` rather than returning (its Opus
    /// plugin at the end of a seekable stream). The player sees no difference; `getfingerprint` does: `mpd` then
    /// skips `chromaprint_finish`, so the fingerprint leaves out what libchromaprint still buffers. `false` by
    /// default.
    var endedWithStop: Bool { get }

    /// Decodes the next PCM frames into `buffer`, filling as many whole frames as fit.
    ///
    /// Does not allocate.
    /// - Returns: frames written; 0 at the end of the song.
    /// - Throws: `FormatError` on a decoding failure.
    mutating func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int

    /// Moves to a PCM frame; the next `decode(into:)` starts there.
    ///
    /// Does not allocate.
    /// - Returns: the frame actually reached.
    /// - Throws: `FormatError` when the stream cannot seek there.
    @discardableResult
    mutating func seek(toFrame frame: UInt64) throws(FormatError) -> UInt64

    /// Tags that arrived with the stream since the last call (a radio station's new title), or `nil`. The
    /// decoder thread asks after each chunk: cheap when nothing changed.
    func readTag() -> [TagItem]?
}

extension Decoder {
    /// No bit rate known.
    public var bitRate: Int { 0 }
    /// The library's length is shown.
    public var totalFramesOverrideLibrary: Bool { false }
    /// No MixRamp tags.
    public var mixRampStart: String? { nil }
    public var mixRampEnd: String? { nil }
    /// Seekable.
    public var isSeekable: Bool { true }
    /// No ReplayGain of its own.
    public var replayGain: ReplayGainInfo? { nil }
    public var endedWithStop: Bool { false }
    /// No tags beyond the library's.
    public func readTag() -> [TagItem]? { nil }
}
