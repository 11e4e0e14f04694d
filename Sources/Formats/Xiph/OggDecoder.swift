// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Ogg

/// The `Decoder` over an Ogg Vorbis or Ogg Opus decoder: the end granule position as the length, seekable
/// as in `mpd` (when that position was found), the codec's errors as `FormatError.decoder`, and the tags of
/// each comment header the codec reads (every stream of a chain has one), handed over once each; the ReplayGain
/// of the headers read when it opened.
///
/// Confined to the decoding thread; does not allocate per call.
final class OggDecoder<Codec: OggAudioDecoder>: Decoder {
    let format: AudioFormat
    let totalFrames: UInt64?
    /// Seekable as in `mpd`: when the end granule position was found (the `Decoder` requirement of that
    /// name, where the protocol has it).
    let isSeekable: Bool
    let replayGain: ReplayGainInfo?
    private let codec: Codec
    /// The codec's current comments as tags.
    private let tags: (Codec) -> [TagItem]?
    /// The codec's `commentsRevision` that `readTag()` last handed over.
    private var reportedRevision = 0

    /// `codec`'s output, which is in `format`; `tags`: what its current comment header says; `replayGain`: the
    /// ReplayGain its headers give (`mpd`'s plugin submits it), if any.
    init(
        _ codec: Codec, format: AudioFormat, tags: @escaping (Codec) -> [TagItem]?,
        replayGain: (Codec) -> ReplayGainInfo?
    ) {
        self.codec = codec
        self.format = format
        self.tags = tags
        self.replayGain = replayGain(codec)
        self.totalFrames = codec.endGranulePosition.flatMap { $0 >= 0 ? UInt64($0) : nil }
        self.isSeekable = codec.mpdSeekable
    }

    func readTag() -> [TagItem]? {
        let revision = self.codec.commentsRevision
        guard revision != self.reportedRevision else { return nil }
        self.reportedRevision = revision
        return self.tags(self.codec)
    }

    func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        do {
            return try self.codec.decode(into: buffer)
        } catch {
            throw .decoder("\(error)")
        }
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
