// SPDX-License-Identifier: GPL-3.0-or-later

import FLAC
import ID3Tag
import Input
import Model
import RawText

/// What `mpd`'s FLAC and Ogg FLAC plugins take from a stream's metadata blocks (read with libFLAC's metadata
/// chain, as `mpd` reads them), shared by the `flac` and `oggflac` plugins.
///
/// Pure over the blocks; any thread.
enum FLACScan {
    /// The metadata blocks of the file at `path`.
    ///
    /// - Throws: `FormatError.input` when the file cannot be opened; `.notRecognized` when libFLAC cannot
    ///   read its metadata (so `mpd` would try its next plugin for the suffix).
    static func blocks(path: String, container: FLACMetadata.Container) throws(FormatError) -> [FLACMetadataBlock] {
        let input = try LocalFile.input(path)
        do {
            return try FLACMetadata.read(input: input, container: container)
        } catch {
            throw .notRecognized(path: path)
        }
    }

    /// The metadata blocks of a remote stream, read from its start.
    ///
    /// - Throws: `FormatError.input` when reading fails; `.notRecognized` when libFLAC cannot read the metadata.
    static func blocks(input: any InputStream, container: FLACMetadata.Container) throws(FormatError)
        -> [FLACMetadataBlock]
    {
        do {
            return try FLACMetadata.read(input: input, container: container)
        } catch {
            throw .notRecognized(path: input.uri)
        }
    }

    /// Tags, duration, format, ReplayGain and picture presence, block by block in stored order: every
    /// Vorbis comment entry through `VorbisComment.tagItem`; from STREAMINFO the duration (total samples ×
    /// 1000 / rate, truncated, kept in 32 bits as `mpd`'s `SongTime`; none when the rate is 0) and the
    /// format, which `mpd` gives only for 8, 16, 24 and 32 bits.
    static func info(_ blocks: [FLACMetadataBlock]) -> SongInfo {
        var raw: [RawTagItem] = []
        var info = SongInfo()
        for block in blocks {
            switch block {
            case .vorbisComment(_, let entries):
                for entry in entries {
                    if let item = VorbisComment.tagItem(entry[...]) { raw.append(item) }
                    VorbisComment.applyReplayGain(entry[...], to: &info.replayGain)
                    if VorbisComment.isCuesheet(entry[...]) { info.hasPlaylist = true }
                }
            case .streamInfo(let stream):
                if stream.sampleRate > 0 {
                    let milliseconds = stream.totalSamples &* 1000 / UInt64(stream.sampleRate)
                    info.durationMilliseconds = UInt64(UInt32(truncatingIfNeeded: milliseconds))
                }
                info.audioFormat = self.audioFormat(stream)
            case .picture(let picture):
                if self.isImage(picture) { info.hasPicture = true }
            case .other:
                break
            }
        }
        info.tags = TagCollector.tagItems(raw)
        return info
    }

    /// The `readcomments` pairs: every Vorbis comment entry with a `=` after a non-empty name, in order.
    static func comments(_ blocks: [FLACMetadataBlock]) -> [(name: String, value: String)] {
        var pairs: [(name: String, value: String)] = []
        for case .vorbisComment(_, let entries) in blocks {
            for entry in entries {
                guard let pair = VorbisComment.pair(entry[...]) else { continue }
                pairs.append((RawText.decode(pair.name), RawText.decode(pair.value)))
            }
        }
        return pairs
    }

    /// The first PICTURE block holding image data (`mpd` skips a `-->` MIME type: the data is a URL).
    static func picture(_ blocks: [FLACMetadataBlock]) -> Picture? {
        for case .picture(let picture) in blocks where self.isImage(picture) {
            return Picture(data: picture.data, mimeType: String(decoding: picture.mimeType, as: UTF8.self))
        }
        return nil
    }

    /// The PCM format `mpd` decodes STREAMINFO's depth to (`FlacSampleFormat`), or `nil` where it has none
    /// (any depth but 8, 16, 24, 32; a rate outside 1..<2³⁰; more than 8 channels): then `mpd` shows no
    /// `Format:` and cannot play the file.
    static func audioFormat(_ stream: FLACStreamInfo) -> AudioFormat? {
        let sampleFormat: SampleFormat
        switch stream.bitsPerSample {
        case 8: sampleFormat = .s8
        case 16: sampleFormat = .s16
        case 24: sampleFormat = .s24
        case 32: sampleFormat = .s32
        default: return nil
        }
        guard stream.sampleRate > 0, stream.sampleRate < 1 << 30, (1...8).contains(stream.channels) else { return nil }
        return AudioFormat(sampleRate: stream.sampleRate, sampleFormat: sampleFormat, channels: stream.channels)
    }

    private static func isImage(_ picture: FLACPicture) -> Bool { picture.mimeType != Array("-->".utf8) }
}
