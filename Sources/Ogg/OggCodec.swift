// SPDX-License-Identifier: GPL-3.0-or-later

import Input

/// The codec of an Ogg file, guessed from its first 41 bytes as `mpd`'s `ogg_codec_detect` does.
public enum OggCodec: Sendable, Hashable {
    /// Not an Ogg file (fewer than 41 bytes, or no `OggS` at the start).
    case unknown
    /// Anything else that is Ogg (`mpd` assumes Vorbis).
    case vorbis
    /// Ogg FLAC (`FLAC` at 29 and `fLaC` at 37, or `FLAC`/`fLaC` at 28).
    case flac
    /// Opus (`Opus` at 28).
    case opus

    /// Reads 41 bytes from `input`'s current offset and guesses.
    ///
    /// - Throws: `OggError.input` when reading fails.
    public static func detect(_ input: any InputStream) throws(OggError) -> OggCodec {
        let bytes: [UInt8]?
        do {
            bytes = try input.readBytes(41)
        } catch {
            throw .input(error)
        }
        guard let bytes else { return .unknown }
        return self.detect(header: bytes)
    }

    /// Guesses from the first 41 bytes of a file (fewer give `.unknown`).
    public static func detect(header bytes: [UInt8]) -> OggCodec {
        func has(_ text: String, at offset: Int) -> Bool {
            let magic = Array(text.utf8)
            return bytes.count >= offset + magic.count && Array(bytes[offset..<offset + magic.count]) == magic
        }
        guard bytes.count >= 41, has("OggS", at: 0) else { return .unknown }
        if (has("FLAC", at: 29) && has("fLaC", at: 37)) || has("FLAC", at: 28) || has("fLaC", at: 28) {
            return .flac
        }
        if has("Opus", at: 28) { return .opus }
        return .vorbis
    }
}

/// What the Ogg Vorbis and Ogg Opus decoders share: interleaved output of a fixed channel count, the first
/// stream's end granule position, and sample-accurate seeking.
///
/// Confined to the decoding thread, like its conformers; neither call allocates.
public protocol OggAudioDecoder: AnyObject {
    /// The channel count.
    var channels: Int { get }
    /// The first stream's end granule position (`mpd`'s duration and seek bound), if found.
    var endGranulePosition: Int64? { get }
    /// Whether `mpd` lets a client seek: when a positive end granule position was found.
    var mpdSeekable: Bool { get }
    /// How many comment headers (Vorbis) or `OpusTags` packets were read: each stream of a chain brings its
    /// own, which `mpd` submits as the song's new tag.
    var commentsRevision: Int { get }
    /// Whether the decoder ended as `mpd`'s plugin does by throwing `StopDecoder` rather than returning: its Opus
    /// plugin at the end of a stream it can seek in (`OnOggEnd`); its Vorbis plugin never does.
    var endedWithStop: Bool { get }
    /// Decodes whole frames into `buffer`; 0 at the end.
    ///
    /// - Throws: `OggError` when the stream cannot be decoded further.
    func decode(into buffer: UnsafeMutableRawBufferPointer) throws(OggError) -> Int
    /// Moves to `frame`; the frame reached.
    ///
    /// - Throws: `OggError` when the input cannot seek or the stream is damaged there.
    func seek(toFrame frame: UInt64) throws(OggError) -> UInt64
}

extension OggVorbisDecoder: OggAudioDecoder {
    /// `mpd`'s Vorbis plugin returns at the end of every stream.
    public var endedWithStop: Bool { false }
}

extension OggOpusDecoder: OggAudioDecoder {}
