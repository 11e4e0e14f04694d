// SPDX-License-Identifier: GPL-3.0-or-later

import ID3Tag
import Input
import MPG123
import Model

/// MPEG audio (MP3, MP2) as Debian's `mpd` 0.23.12 reads it, as its two plugins: `mad`, then `mpg123`.
///
/// That `mpd` tries its `mad` plugin first, so durations and formats follow it: `Format:` is
/// `rate:24:channels` and `duration:` comes from the first frame's Xing/Info frame count, or else from the
/// file size and the first frame's bit rate (`MadFirstFrame`), and libmad decodes (`MadDecoder`). When mad
/// rejects a `.mp3` file, `mpd` asks its `mpg123` plugin (`MP3Format(scan: .mpg123)`), whose answer
/// (`rate:16:channels`, libmpg123's gapless length) is used then, and libmpg123 decodes (`MP3Decoder`).
///
/// Tags follow `mpd`'s generic scan: an APEv2 tag at the very end wins if any of its items maps to a tag;
/// otherwise the ID3 tag `ID3Loader` finds. Any thread.
public struct MP3Format: FormatPlugin {
    /// Whose scan the plugin reproduces.
    public enum Scan: Sendable, Hashable {
        /// `mpd`'s mad plugin: libmad, 24-bit.
        case mad
        /// `mpd`'s mpg123 plugin: libmpg123 with its defaults, 16-bit.
        case mpg123
    }

    /// Whose scan this is.
    public let scan: Scan
    /// `mad` or `mpg123`, the `mpd` plugin whose results this reproduces.
    public var name: String { self.scan == .mad ? "mad" : "mpg123" }
    /// `mp3` and `mp2` for mad; `mp3` for mpg123.
    public var suffixes: [String] { self.scan == .mad ? ["mp3", "mp2"] : ["mp3"] }
    /// `audio/mpeg` for mad; none for mpg123 (as `mpd` 0.23.12 lists them).
    public var mimeTypes: [String] { self.scan == .mad ? ["audio/mpeg"] : [] }
    /// Its scan is `mpd`'s generic APE/ID3 scan.
    public var readsGenericTags: Bool { true }
    /// `mpd`'s mad plugin scans a stream for its length and format only: `lsinfo URL` of an MP3 prints no tags
    /// (playing it does show its ID3v2 tag).
    public var scansStreamTags: Bool { false }

    /// `mpd`'s mpg123 plugin scans files only.
    public var scansStreams: Bool { self.scan == .mad }

    /// Creates the plugin with mad's scan or mpg123's.
    public init(scan: Scan = .mad) { self.scan = scan }

    /// Reads tags, duration, format, ReplayGain and whether there is a picture.
    ///
    /// - Throws: `FormatError.notRecognized` where this `mpd` plugin fails (the registry then asks the next); `.io` when the
    ///   file cannot be opened.
    public func readInfo(path: String) throws(FormatError) -> SongInfo {
        let file = try Self.open(path)
        guard let audio = self.scanAudio(path: path) else { throw .notRecognized(path: path) }
        return Self.info(audio, GenericTags.read(file))
    }

    /// As `readInfo(path:)`, over a remote stream (mad's `scan_stream`: the first frame, then the generic scan,
    /// which needs a stream that seeks and knows its size).
    ///
    /// - Throws: `FormatError.notRecognized` when mad finds no frame (or for mpg123, which scans only files).
    public func readInfo(input: any InputStream) throws(FormatError) -> SongInfo {
        guard self.scan == .mad, let mad = MadFirstFrame.scan(input) else { throw .notRecognized(path: input.uri) }
        let audio = AudioInfo(durationMilliseconds: mad.milliseconds ?? 0, format: mad.format)
        return Self.info(audio, GenericTags.read(input: input) ?? GenericTags())
    }

    private static func info(_ audio: AudioInfo, _ tags: GenericTags) -> SongInfo {
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
        guard self.scanAudio(path: path) != nil else { throw .notRecognized(path: path) }
        let tags = GenericTags.read(file)
        guard !tags.apeRecognized else { return nil }
        return tags.id3?.pictures().first
    }

    /// `mpd`'s generic scan reports every text item of an APEv2 tag (each value of a list separately);
    /// when none of those items maps to a tag, it goes on to the ID3 tag, whose `TXXX` frames it reports.
    public func readComments(path: String) throws(FormatError) -> [(name: String, value: String)] {
        let file = try Self.open(path)
        guard self.scanAudio(path: path) != nil else { throw .notRecognized(path: path) }
        return GenericTags.read(file).comments()
    }

    /// Opens libmad over `input` as `mpd`'s mad plugin (`MadDecoder`: 24-bit samples in 32-bit words), or
    /// libmpg123 as its mpg123 plugin (`MP3Decoder`: signed 16-bit).
    ///
    /// Like `mpd`'s plugins they take tags, MixRamp tags (`TXXX` frames, names compared without regard to
    /// ASCII case) and ReplayGain from the ID3v2 tag at the start of the stream; mad, lacking ID3 ReplayGain,
    /// takes a LAME tag's track gain.
    public func makeDecoder(input: any InputStream) throws(FormatError) -> any Decoder {
        if self.scan == .mad { return try MadDecoder(input: input) }
        let decoder = try MP3Decoder(input: input)
        if let raw = decoder.leadingID3v2(), let id3 = ID3Tag(parsing: raw) {
            let tags = TagCollector.tagItems(id3.mpdTagItems())
            decoder.pendingTags = tags.isEmpty ? nil : tags
            if let gain = id3.replayGain() { decoder.replayGain = gain }
            (decoder.mixRampStart, decoder.mixRampEnd) = Self.mixRamp(id3)
        }
        return decoder
    }

    /// The `TXXX` `mixramp_start`/`mixramp_end` values (names compared without regard to ASCII case).
    static func mixRamp(_ id3: ID3Tag) -> (start: String?, end: String?) {
        var ramp: (start: String?, end: String?) = (nil, nil)
        for pair in id3.txxxPairs() {
            let asciiLowered = pair.name.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
            switch String(decoding: asciiLowered, as: UTF8.self) {
            case "mixramp_start": ramp.start = String(decoding: pair.value, as: UTF8.self)
            case "mixramp_end": ramp.end = String(decoding: pair.value, as: UTF8.self)
            default: break
            }
        }
        return ramp
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

    /// The plugin's answer: mad's scan or mpg123's; `nil` when it rejects the file.
    func scanAudio(path: String) -> AudioInfo? {
        switch self.scan {
        case .mad:
            guard let input = try? FileInputStream(path: path), let mad = MadFirstFrame.scan(input) else { return nil }
            return AudioInfo(durationMilliseconds: mad.milliseconds ?? 0, format: mad.format)
        case .mpg123:
            return Self.mpg123Scan(path)
        }
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
