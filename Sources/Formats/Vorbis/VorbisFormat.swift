// SPDX-License-Identifier: GPL-3.0-or-later

import ID3Tag
import Input
import Model
import Ogg
import RawText

/// Ogg Vorbis as Debian's `mpd` 0.23.12 reads it (its `vorbis` plugin): libvorbis parses the three headers
/// (so a file whose first stream is not Vorbis — Ogg FLAC, Opus — is not recognised and the registry asks
/// the next plugin), `Format:` is `rate:f:channels`, the duration is the first stream's end-of-stream
/// granule position over the rate (milliseconds, truncated), tags are the comment header's entries under
/// `mpd`'s Vorbis-comment mapping, `REPLAYGAIN_*` entries feed ReplayGain, and `METADATA_BLOCK_PICTURE` is
/// the embedded picture.
///
/// Any thread.
public struct VorbisFormat: FormatPlugin {
    /// `vorbis`.
    public let name = "vorbis"
    /// `ogg` and `oga`.
    public let suffixes = ["ogg", "oga"]
    /// `mpd`'s list.
    public let mimeTypes = [
        "application/ogg", "application/x-ogg", "audio/ogg", "audio/vorbis", "audio/vorbis+ogg", "audio/x-ogg",
        "audio/x-vorbis", "audio/x-vorbis+ogg",
    ]

    /// Creates the plugin.
    public init() {}

    /// Reads tags, duration, format, ReplayGain and whether there is a picture.
    ///
    /// - Throws: `FormatError.notRecognized` when the file is not Ogg Vorbis; `.input` when it cannot be
    ///   opened.
    public func readInfo(path: String) throws(FormatError) -> SongInfo { Self.info(try Self.scan(path)) }

    /// What `readInfo(path:)` reads, from a stream (`mpd`'s `scan_stream`, which its file scan also is).
    ///
    /// - Throws: `FormatError.notRecognized` when the stream is not Ogg Vorbis; `.input` when it cannot be read.
    public func readInfo(input: any InputStream) throws(FormatError) -> SongInfo {
        Self.info(try Self.scan(input: input))
    }

    private static func info(_ stream: VorbisStreamInfo) -> SongInfo {
        var replayGain = ReplayGainInfo()
        var raw: [RawTagItem] = []
        var hasPicture = false
        var hasPlaylist = false
        for comment in stream.comments {
            let entry = comment[...]
            if let picture = VorbisComment.value(of: entry, named: Self.pictureName) {
                hasPicture = hasPicture || VorbisComment.picture(base64: picture) != nil
                continue
            }
            VorbisComment.applyReplayGain(entry, to: &replayGain)
            if VorbisComment.isCuesheet(entry) { hasPlaylist = true }
            if let item = VorbisComment.tagItem(entry) { raw.append(item) }
        }
        let rate = stream.sampleRate
        let format: AudioFormat? =
            rate > 0 && rate < 1 << 30 && (1...8).contains(stream.channels)
            ? AudioFormat(sampleRate: rate, sampleFormat: .float, channels: stream.channels) : nil
        let duration = stream.endGranulePosition.flatMap { granule in
            granule >= 0 && rate > 0
                ? UInt64(granule).multipliedReportingOverflow(by: 1000).partialValue
                    / UInt64(rate) : nil
        }
        return SongInfo(
            tags: TagCollector.tagItems(raw), durationMilliseconds: duration, audioFormat: format,
            replayGain: replayGain, hasPicture: hasPicture, hasPlaylist: hasPlaylist)
    }

    /// The first `METADATA_BLOCK_PICTURE` comment that decodes to a picture.
    ///
    /// - Throws: `FormatError.notRecognized` when the file is not Ogg Vorbis.
    public func readPicture(path: String) throws(FormatError) -> Picture? {
        Self.picture(try Self.scan(path).comments)
    }

    /// As `readPicture(path:)`, over a remote stream.
    public func readPicture(input: any InputStream) throws(FormatError) -> Picture? {
        Self.picture(try Self.scan(input: input).comments)
    }

    /// The first `METADATA_BLOCK_PICTURE` comment that decodes.
    private static func picture(_ comments: [[UInt8]]) -> Picture? {
        for comment in comments {
            if let value = VorbisComment.value(of: comment[...], named: Self.pictureName),
                let picture = VorbisComment.picture(base64: value)
            {
                return picture
            }
        }
        return nil
    }

    /// Every comment entry with a name, split at its first `=`, in file order (pictures included, as
    /// `mpd`'s `readcomments` prints them).
    ///
    /// - Throws: `FormatError.notRecognized` when the file is not Ogg Vorbis.
    public func readComments(path: String) throws(FormatError) -> [(name: String, value: String)] {
        Self.pairs(try Self.scan(path).comments)
    }

    /// As `readComments(path:)`, over a remote stream.
    public func readComments(input: any InputStream) throws(FormatError) -> [(name: String, value: String)] {
        Self.pairs(try Self.scan(input: input).comments)
    }

    /// Every comment with a name as a pair.
    private static func pairs(_ comments: [[UInt8]]) -> [(name: String, value: String)] {
        comments.compactMap { comment in
            VorbisComment.pair(comment[...]).map {
                (RawText.decode($0.name), RawText.decode($0.value))
            }
        }
    }

    /// Opens a decoder delivering 32-bit float frames.
    ///
    /// - Throws: `FormatError.notRecognized` when `input` is not Ogg Vorbis, `.decoder` when its headers are
    ///   damaged, `.input` when reading fails.
    public func makeDecoder(input: any InputStream) throws(FormatError) -> any Decoder {
        do {
            let codec = try OggVorbisDecoder(input: input)
            let format = AudioFormat(sampleRate: codec.sampleRate, sampleFormat: .float, channels: codec.channels)
            return OggDecoder(
                codec, format: format, tags: { VorbisComment.streamTags($0.comments) },
                replayGain: { codec in
                    var replayGain = ReplayGainInfo()
                    for entry in codec.comments { VorbisComment.applyReplayGain(entry[...], to: &replayGain) }
                    return replayGain.isEmpty ? nil : replayGain
                })
        } catch {
            throw Self.formatError(error, uri: input.uri)
        }
    }

    static let pictureName = Array("metadata_block_picture".utf8)

    static func scan(_ path: String) throws(FormatError) -> VorbisStreamInfo {
        try Self.scan(input: try LocalFile.input(path))
    }

    /// The headers and comments of a stream, read from its start.
    static func scan(input: any InputStream) throws(FormatError) -> VorbisStreamInfo {
        do {
            return try VorbisStreamInfo.read(input)
        } catch {
            throw Self.formatError(error, uri: input.uri)
        }
    }

    /// The `FormatError` for an `OggError`: damage while looking for the codec means "not this plugin".
    static func formatError(_ error: OggError, uri: String) -> FormatError {
        switch error {
        case .input(let inputError): .input(inputError)
        case .malformed: .notRecognized(path: uri)
        case .library(let message): .decoder(message)
        }
    }
}
