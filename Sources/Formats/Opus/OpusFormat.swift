// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import ID3Tag
import Input
import Model
import Ogg
import RawText

/// Ogg Opus as Debian's `mpd` 0.23.12 reads it (its `opus` plugin), which parses `OpusHead` and `OpusTags`
/// itself: `Format:` is always `48000:16:channels`; the duration is the end-of-stream granule position over
/// 48000 with the pre-skip **not** subtracted (none when it is below the pre-skip); tag names are looked up
/// canonical-first (so `MOVEMENT` is Movement); values of 4096 bytes or more are skipped; `R128_*_GAIN`
/// (Q7.8 dB) feed ReplayGain. The plugin also claims `.ogg`/`.oga` after the Vorbis and FLAC plugins.
///
/// Any thread.
public struct OpusFormat: FormatPlugin {
    /// `opus`.
    public let name = "opus"
    /// `opus`, `ogg` and `oga`.
    public let suffixes = ["opus", "ogg", "oga"]
    /// `mpd`'s list.
    public let mimeTypes = ["audio/ogg", "application/ogg", "audio/opus"]

    /// Creates the plugin.
    public init() {}

    /// One `OpusTags` entry as `mpd`'s `ScanOneOpusTag` sees it.
    struct Entry {
        var name: ArraySlice<UInt8>
        var value: ArraySlice<UInt8>
        var isPicture: Bool { self.name.map(Self.lowered) == Array("metadata_block_picture".utf8) }
        var isSkipped: Bool { self.value.count >= 4096 }
        static func lowered(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte }
    }

    /// Reads tags, duration, format, ReplayGain (what `mpd`'s decoder submits: `R128_*_GAIN` plus the header's
    /// output gain plus 5 dB, else the output gain plus 5 dB as the track gain) and whether there is a picture.
    ///
    /// - Throws: `FormatError.notRecognized` when the file is not Ogg Opus or its `OpusTags` is damaged;
    ///   `.input` when it cannot be opened.
    public func readInfo(path: String) throws(FormatError) -> SongInfo { Self.info(try Self.scan(path)) }

    /// What `readInfo(path:)` reads, from a stream (`mpd`'s `scan_stream`, which its file scan also is).
    ///
    /// - Throws: `FormatError.notRecognized` when the stream is not Ogg Opus; `.input` when it cannot be read.
    public func readInfo(input: any InputStream) throws(FormatError) -> SongInfo {
        Self.info(try Self.scan(input: input))
    }

    private static func info(_ scanned: (stream: OpusStreamInfo, entries: [Entry])) -> SongInfo {
        let (stream, entries) = scanned
        let hasPicture = entries.contains { $0.isPicture && VorbisComment.picture(base64: $0.value) != nil }
        let replayGain = Self.replayGain(entries, head: stream.head)
        let preSkip = Int64(stream.head.preSkip)
        let duration = stream.endGranulePosition.flatMap { granule in
            granule >= preSkip ? UInt64(granule).multipliedReportingOverflow(by: 1000).partialValue / 48000 : nil
        }
        return SongInfo(
            tags: Self.tagItems(entries), durationMilliseconds: duration,
            audioFormat: AudioFormat(sampleRate: 48000, sampleFormat: .s16, channels: stream.head.channels),
            replayGain: replayGain, hasPicture: hasPicture)
    }

    /// The first `METADATA_BLOCK_PICTURE` entry that decodes to a picture (of any size up to 1 MiB).
    ///
    /// - Throws: `FormatError.notRecognized` when the file is not Ogg Opus.
    public func readPicture(path: String) throws(FormatError) -> Picture? {
        Self.picture(try Self.scan(path).entries)
    }

    /// As `readPicture(path:)`, over a remote stream.
    public func readPicture(input: any InputStream) throws(FormatError) -> Picture? {
        Self.picture(try Self.scan(input: input).entries)
    }

    /// The first picture entry that decodes.
    private static func picture(_ entries: [Entry]) -> Picture? {
        for entry in entries where entry.isPicture {
            if let picture = VorbisComment.picture(base64: entry.value) { return picture }
        }
        return nil
    }

    /// The entries' pairs in file order, values of 4096 bytes or more left out (so large pictures too).
    ///
    /// - Throws: `FormatError.notRecognized` when the file is not Ogg Opus.
    public func readComments(path: String) throws(FormatError) -> [(name: String, value: String)] {
        Self.pairs(try Self.scan(path).entries)
    }

    /// As `readComments(path:)`, over a remote stream.
    public func readComments(input: any InputStream) throws(FormatError) -> [(name: String, value: String)] {
        Self.pairs(try Self.scan(input: input).entries)
    }

    /// The entries' pairs, large values left out.
    private static func pairs(_ entries: [Entry]) -> [(name: String, value: String)] {
        entries.compactMap { entry in
            entry.isSkipped
                ? nil : (RawText.decode(entry.name), RawText.decode(entry.value))
        }
    }

    /// Opens a decoder delivering signed 16-bit frames at 48 kHz.
    ///
    /// - Throws: `FormatError.notRecognized` when `input` is not Ogg Opus, `.decoder` when libopus refuses it
    ///   (more than two channels, as in `mpd`), `.input` when reading fails.
    public func makeDecoder(input: any InputStream) throws(FormatError) -> any Decoder {
        do {
            let codec = try OggOpusDecoder(input: input)
            // `48000:16:channels`, the end granule position as the length (as `mpd`, pre-skip included).
            return OggDecoder(
                codec, format: AudioFormat(sampleRate: 48000, sampleFormat: .s16, channels: codec.channels),
                tags: { Self.streamTags(packet: $0.tagsPacket) },
                replayGain: { Self.replayGain(Self.entries(packet: $0.tagsPacket) ?? [], head: $0.head) },
                linkReplayGain: { codec in
                    // Later streams of a chain: only `R128_*` gains are submitted (the plugin sends the header's
                    // output gain alone once, for the first stream).
                    let entries = Self.entries(packet: codec.tagsPacket) ?? []
                    let gains = Self.r128Gains(entries)
                    guard gains.track != nil || gains.album != nil else { return nil }
                    return Self.replayGain(entries, head: codec.streamHead)
                })
        } catch {
            throw VorbisFormat.formatError(error, uri: input.uri)
        }
    }

    /// The tags of an `OpusTags` packet as `mpd`'s decoder submits them (`HandleTags`), if it has any.
    static func streamTags(packet: [UInt8]) -> [TagItem]? {
        guard let entries = Self.entries(packet: packet) else { return nil }
        let tags = Self.tagItems(entries)
        return tags.isEmpty ? nil : tags
    }

    /// The entries of an `OpusTags` packet that have a name and an `=`; `nil` when it is not one.
    static func entries(packet: [UInt8]) -> [Entry]? {
        CommentPacket.entries(packet[...], magic: Array("OpusTags".utf8))?.compactMap { entry in
            VorbisComment.pair(entry).map { Entry(name: $0.name, value: $0.value) }
        }
    }

    /// What `mpd`'s decoder submits as ReplayGain: the `R128_*_GAIN` entries plus the header's output gain plus
    /// 5 dB, else the output gain plus 5 dB as the track gain.
    static func replayGain(_ entries: [Entry], head: OpusHead) -> ReplayGainInfo {
        let (trackGain, albumGain) = Self.r128Gains(entries)
        let outputGain = Double(Float(head.outputGain) / 256) + 5
        var replayGain = ReplayGainInfo()
        if trackGain != nil || albumGain != nil {
            replayGain.trackGain = trackGain.map { $0 + outputGain }
            replayGain.albumGain = albumGain.map { $0 + outputGain }
        } else {
            replayGain.trackGain = outputGain
        }
        return replayGain
    }

    /// The `R128_TRACK_GAIN` and `R128_ALBUM_GAIN` values in dB, where valid.
    static func r128Gains(_ entries: [Entry]) -> (track: Double?, album: Double?) {
        var trackGain: Double?
        var albumGain: Double?
        for entry in entries where !entry.isPicture && !entry.isSkipped {
            let lowered = entry.name.map(Entry.lowered)
            if lowered == Array("r128_track_gain".utf8), let gain = Self.q78(entry.value) { trackGain = gain }
            if lowered == Array("r128_album_gain".utf8), let gain = Self.q78(entry.value) { albumGain = gain }
        }
        return (trackGain, albumGain)
    }

    /// The tags of `entries`: pictures, long values and names no tag type has left out.
    static func tagItems(_ entries: [Entry]) -> [TagItem] {
        TagCollector.tagItems(
            entries.compactMap { entry in
                guard !entry.isPicture, !entry.isSkipped, let type = VorbisComment.opusTagType(name: entry.name) else {
                    return nil
                }
                return RawTagItem(type, Array(entry.value))
            })
    }

    /// The headers and the `OpusTags` entries that have a name and an `=`.
    static func scan(_ path: String) throws(FormatError) -> (stream: OpusStreamInfo, entries: [Entry]) {
        try Self.scan(input: try LocalFile.input(path))
    }

    /// The headers and the `OpusTags` entries of a stream, read from its start.
    static func scan(input: any InputStream) throws(FormatError) -> (stream: OpusStreamInfo, entries: [Entry]) {
        let stream: OpusStreamInfo
        do {
            stream = try OpusStreamInfo.read(input)
        } catch {
            throw VorbisFormat.formatError(error, uri: input.uri)
        }
        guard let entries = CommentPacket.entries(stream.tags[...], magic: Array("OpusTags".utf8)) else {
            throw .notRecognized(path: input.uri)
        }
        return (
            stream,
            entries.compactMap { entry in
                VorbisComment.pair(entry).map { Entry(name: $0.name, value: $0.value) }
            }
        )
    }

    /// A Q7.8 dB value parsed as `mpd` does (`strtoll` base 10 over the whole value), in dB.
    static func q78(_ value: ArraySlice<UInt8>) -> Double? {
        guard !value.isEmpty else { return nil }
        var text = value.map { CChar(bitPattern: $0) }
        text.append(0)
        return text.withUnsafeBufferPointer { buffer -> Double? in
            var end: UnsafeMutablePointer<CChar>?
            let number = strtoll(buffer.baseAddress!, &end, 10)
            guard let end, end - UnsafeMutablePointer(mutating: buffer.baseAddress!) == value.count else { return nil }
            return Double(Float(number) / 256)
        }
    }
}
