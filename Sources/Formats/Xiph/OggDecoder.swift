// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Ogg

/// The `Decoder` over an Ogg Vorbis or Ogg Opus decoder: the end granule position as the length, seekable
/// as in `mpd` (when that position was found), the codec's errors as `FormatError.decoder`, and the tags of
/// each comment header the codec reads (every stream of a chain has one), handed over once each; the ReplayGain
/// of the headers read when it opened, replaced by that of a later stream of a chain when its comment header
/// has one (`mpd`'s plugins submit it when they read the header).
///
/// Confined to the decoding thread; does not allocate per call.
final class OggDecoder<Codec: OggAudioDecoder>: Decoder {
    let format: AudioFormat
    let totalFrames: UInt64?
    /// Seekable as in `mpd`: when the end granule position was found (the `Decoder` requirement of that
    /// name, where the protocol has it).
    let isSeekable: Bool
    private(set) var replayGain: ReplayGainInfo?
    private let codec: Codec
    /// The ReplayGain a later stream's comment header gives, if any.
    private let linkReplayGain: (Codec) -> ReplayGainInfo?
    /// The codec's `commentsRevision` whose ReplayGain was taken last.
    private var replayGainRevision: Int
    /// The codec's current comments as tags.
    private let tags: (Codec) -> [TagItem]?
    /// The codec's `commentsRevision` that `readTag()` last handed over.
    private var reportedRevision = 0

    /// `codec`'s output, which is in `format`; `tags`: what its current comment header says; `replayGain`: the
    /// ReplayGain its headers give (`mpd`'s plugin submits it), if any; `linkReplayGain`: what a later stream
    /// of a chain submits (`nil`: nothing, the gain stays), by default the same as `replayGain`.
    init(
        _ codec: Codec, format: AudioFormat, tags: @escaping (Codec) -> [TagItem]?,
        replayGain: @escaping (Codec) -> ReplayGainInfo?, linkReplayGain: ((Codec) -> ReplayGainInfo?)? = nil
    ) {
        self.codec = codec
        self.format = format
        self.tags = tags
        self.replayGain = replayGain(codec)
        self.linkReplayGain = linkReplayGain ?? replayGain
        self.replayGainRevision = codec.commentsRevision
        self.totalFrames = codec.endGranulePosition.flatMap { $0 >= 0 ? UInt64($0) : nil }
        self.isSeekable = codec.mpdSeekable
    }

    var endedWithStop: Bool { self.codec.endedWithStop }

    func readTag() -> [TagItem]? {
        let revision = self.codec.commentsRevision
        guard revision != self.reportedRevision else { return nil }
        self.reportedRevision = revision
        return self.tags(self.codec)
    }

    func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        let frames: Int
        do {
            frames = try self.codec.decode(into: buffer)
        } catch {
            throw .decoder("\(error)")
        }
        // A new stream of a chain (rare; what the frames just decoded belong to).
        if self.codec.commentsRevision != self.replayGainRevision {
            self.replayGainRevision = self.codec.commentsRevision
            if let gain = self.linkReplayGain(self.codec) { self.replayGain = gain }
        }
        return frames
    }

    @discardableResult
    func seek(toFrame frame: UInt64) throws(FormatError) -> UInt64 {
        do {
            return try self.codec.seek(toFrame: frame)
        } catch {
            throw .decoder("\(error)")
        }
    }
}
