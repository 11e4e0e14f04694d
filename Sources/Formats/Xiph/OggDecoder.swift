// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Ogg

/// The `Decoder` over an Ogg Vorbis or Ogg Opus decoder: the end granule position as the length, seekable
/// as in `mpd` (when that position was found), the codec's errors as `FormatError.decoder`.
///
/// Confined to the decoding thread; does not allocate per call.
final class OggDecoder<Codec: OggAudioDecoder>: Decoder {
    let format: AudioFormat
    let totalFrames: UInt64?
    /// Seekable as in `mpd`: when the end granule position was found (the `Decoder` requirement of that
    /// name, where the protocol has it).
    let isSeekable: Bool
    private let codec: Codec
    /// The stream's comments as tags, until `readTag()` hands them over.
    private var pendingTags: [TagItem]?

    /// `codec`'s output, which is in `format`; `tags`: what its comment header says, reported once.
    init(_ codec: Codec, format: AudioFormat, tags: [TagItem]? = nil) {
        self.codec = codec
        self.format = format
        self.pendingTags = tags
        self.totalFrames = codec.endGranulePosition.flatMap { $0 >= 0 ? UInt64($0) : nil }
        self.isSeekable = codec.mpdSeekable
    }

    func readTag() -> [TagItem]? {
        defer { self.pendingTags = nil }
        return self.pendingTags
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
