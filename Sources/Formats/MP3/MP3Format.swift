// SPDX-License-Identifier: GPL-3.0-or-later

import ID3Tag
import Input
import MPG123
import Model

/// MPEG audio (MP3, MP2) as Debian's `mpd` 0.23.12 reads it.
///
/// That `mpd` tries its `mad` plugin first, so durations and formats follow it: `Format:` is
/// `rate:24:channels` and `duration:` comes from the first frame's Xing/Info frame count, or else from the
/// file size and the first frame's bit rate (see `MadScanner`). When mad rejects a `.mp3` file, `mpd` asks its
/// `mpg123` plugin, whose answer (`rate:16:channels`, libmpg123's gapless length) is used here too.
///
/// Tags follow `mpd`'s generic scan: an APEv2 tag at the very end wins if any of its items maps to a tag;
/// otherwise the ID3 tag `ID3Loader` finds. Any thread.
public struct MP3Format: FormatPlugin {
    /// `mad`, the `mpd` plugin whose results this reproduces.
    public let name = "mad"
    /// `mp3` and `mp2`.
    public let suffixes = ["mp3", "mp2"]
    /// `audio/mpeg`.
    public let mimeTypes = ["audio/mpeg"]
    /// Its scan is `mpd`'s generic APE/ID3 scan.
    public var readsGenericTags: Bool { true }

    /// Creates the plugin.
    public init() {}

    /// Reads tags, duration, format, ReplayGain and whether there is a picture.
    ///
    /// - Throws: `FormatError.notRecognized` where `mpd`'s mad and mpg123 plugins both fail; `.io` when the
    ///   file cannot be opened.
    public func readInfo(path: String) throws(FormatError) -> SongInfo {
        let file = try Self.open(path)
        guard let audio = Self.scanAudio(file, path: path) else { throw .notRecognized(path: path) }
        let tags = GenericTags.read(file)
        var replayGain = tags.id3?.replayGain() ?? tags.ape?.replayGain() ?? ReplayGainInfo()
        if replayGain.isEmpty { replayGain = ReplayGainInfo() }
        return SongInfo(
            tags: TagCollector.tagItems(tags.items), durationMilliseconds: audio.durationMilliseconds,
            audioFormat: audio.format, replayGain: replayGain,
            hasPicture: !tags.apeRecognized && (tags.id3?.hasPicture ?? false))
    }

    /// The first `APIC` picture, unless an APE tag with recognised items hides the ID3 tag (as in `mpd`).
    ///
    /// - Throws: `FormatError.notRecognized` when `mpd` would answer "Failed to load file".
    public func readPicture(path: String) throws(FormatError) -> Picture? {
        let file = try Self.open(path)
        guard Self.scanAudio(file, path: path) != nil else { throw .notRecognized(path: path) }
        let tags = GenericTags.read(file)
        guard !tags.apeRecognized else { return nil }
        return tags.id3?.pictures().first
    }

    /// `mpd`'s generic scan reports every text item of an APEv2 tag (each value of a list separately);
    /// when none of those items maps to a tag, it goes on to the ID3 tag, whose `TXXX` frames it reports.
    public func readComments(path: String) throws(FormatError) -> [(name: String, value: String)] {
        let file = try Self.open(path)
        guard Self.scanAudio(file, path: path) != nil else { throw .notRecognized(path: path) }
        return GenericTags.read(file).comments()
    }

    /// Opens a libmpg123 decoder over `input`, delivering 24-bit samples in 32-bit words, gapless.
    /// Like `mpd`'s mad plugin it takes MixRamp tags from the `TXXX` frames of the ID3v2 tag at the start of
    /// the stream (names compared without regard to ASCII case).
    public func makeDecoder(input: any InputStream) throws(FormatError) -> any Decoder {
        let decoder = try MP3Decoder(input: input)
        if let raw = decoder.leadingID3v2(), let id3 = ID3Tag(parsing: raw) {
            for pair in id3.txxxPairs() {
                let asciiLowered = pair.name.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
                switch String(decoding: asciiLowered, as: UTF8.self) {
                case "mixramp_start": decoder.mixRampStart = String(decoding: pair.value, as: UTF8.self)
                case "mixramp_end": decoder.mixRampEnd = String(decoding: pair.value, as: UTF8.self)
                default: break
                }
            }
        }
        return decoder
    }

    // MARK: - Audio scan

    /// Duration and format as `mpd` stores them.
    struct AudioInfo: Hashable {
        var durationMilliseconds: UInt64
        var format: AudioFormat
    }

    static func open(_ path: String) throws(FormatError) -> TagSourceFile {
        do {
            return try TagSourceFile(path: path)
        } catch {
            throw .io(error)
        }
    }

    /// The mad plugin's answer, else (for `.mp3`) the mpg123 plugin's, else `nil`.
    static func scanAudio(_ file: TagSourceFile, path: String) -> AudioInfo? {
        if let mad = MadScanner.scan(file) {
            return AudioInfo(
                durationMilliseconds: mad.durationMilliseconds,
                format: AudioFormat(sampleRate: mad.sampleRate, sampleFormat: .s24, channels: mad.channels))
        }
        guard FormatRegistry.suffix(ofPath: path).map({ $0.lowercased() == "mp3" }) ?? false else { return nil }
        return Self.mpg123Scan(path)
    }

    /// `mpd` 0.23's mpg123 plugin scan: default handle, signed 16-bit output required, length > 0.
    static func mpg123Scan(_ path: String) -> AudioInfo? {
        guard let handle = try? MPG123Handle(options: .libraryDefaults) else { return nil }
        guard (try? handle.open(path: path)) != nil, let format = try? handle.format(), format.encoding == .signed16,
            format.sampleRate > 0, let samples = handle.length(), samples > 0
        else { return nil }
        return AudioInfo(
            durationMilliseconds: UInt64(samples) * 1000 / UInt64(format.sampleRate),
            format: AudioFormat(sampleRate: format.sampleRate, sampleFormat: .s16, channels: format.channels))
    }
}
