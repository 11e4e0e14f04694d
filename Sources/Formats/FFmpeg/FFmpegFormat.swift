// SPDX-License-Identifier: GPL-3.0-or-later

import FFmpeg
import Input
import Model

/// Everything Debian's `mpd` 0.23.12 sends through FFmpeg (`ffmpeg` plugin): MP4/M4A (AAC, ALAC), WMA, APE,
/// Matroska, TTA, AC3… and, as the last resort before `gme` and `pcm`, any file of its long suffix list that
/// the plugins before it rejected.
///
/// As `mpd` does, a file is opened with `avformat_open_input` (the probe also scores the file name's
/// extension) and `avformat_find_stream_info`, and the first audio stream is used. `Format:` comes from the
/// codec's sample format (16-bit → `16`, 32-bit → `32`, float → `f`; other formats give none), `duration:`
/// from the stream's duration, else the container's, in milliseconds rounded to nearest. Tags are `mpd`'s
/// mapping of the container's then the stream's dictionaries (`FFmpegTags`). Any thread.
public struct FFmpegFormat: FormatPlugin {
    /// `ffmpeg`.
    public let name = "ffmpeg"
    /// `mpd` 0.23.12's static suffix table, in its order (the `decoders` reply prints it unfiltered).
    public let suffixes = [
        "16sv", "3g2", "3gp", "4xm", "8svx", "aa3", "aac", "ac3", "adx", "afc", "aif", "aifc", "aiff", "al", "alaw",
        "amr", "anim", "apc", "ape", "asf", "atrac", "au", "aud", "avi", "avm2", "avs", "bap", "bfi", "c93", "cak",
        "cin", "cmv", "cpk", "daud", "dct", "divx", "dts", "dv", "dvd", "dxa", "eac3", "film", "flac", "flc", "fli",
        "fll", "flx", "flv", "g726", "gsm", "gxf", "iss", "m1v", "m2v", "m2t", "m2ts", "m4a", "m4b", "m4v", "mad",
        "mj2", "mjpeg", "mjpg", "mka", "mkv", "mlp", "mm", "mmf", "mov", "mp+", "mp1", "mp2", "mp3", "mp4", "mpc",
        "mpeg", "mpg", "mpga", "mpp", "mpu", "mve", "mvi", "mxf", "nc", "nsv", "nut", "nuv", "oga", "ogm", "ogv",
        "ogx", "oma", "ogg", "omg", "opus", "psp", "pva", "qcp", "qt", "r3d", "ra", "ram", "rl2", "rm", "rmvb",
        "roq", "rpl", "rvc", "shn", "smk", "snd", "sol", "son", "spx", "str", "swf", "tak", "tgi", "tgq", "tgv",
        "thp", "ts", "tsp", "tta", "xa", "xvid", "uv", "uv2", "vb", "vid", "vob", "voc", "vp6", "vmd", "wav", "webm",
        "wma", "wmv", "wsaud", "wsvga", "wv", "wve",
    ]
    /// `mpd` 0.23.12's MIME type table, in its order.
    public let mimeTypes = [
        "application/flv", "application/m4a", "application/mp4", "application/octet-stream", "application/ogg",
        "application/x-ms-wmz", "application/x-ms-wmd", "application/x-ogg", "application/x-shockwave-flash",
        "application/x-shorten", "audio/8svx", "audio/16sv", "audio/aac", "audio/aacp", "audio/ac3", "audio/aiff",
        "audio/amr", "audio/basic", "audio/flac", "audio/m4a", "audio/mp4", "audio/mpeg", "audio/musepack",
        "audio/ogg", "audio/opus", "audio/qcelp", "audio/vorbis", "audio/vorbis+ogg", "audio/wav", "audio/x-8svx",
        "audio/x-16sv", "audio/x-aac", "audio/x-ac3", "audio/x-adx", "audio/x-aiff", "audio/x-alaw", "audio/x-au",
        "audio/x-dca", "audio/x-eac3", "audio/x-flac", "audio/x-gsm", "audio/x-mace", "audio/x-matroska",
        "audio/x-monkeys-audio", "audio/x-mpeg", "audio/x-ms-wma", "audio/x-ms-wax", "audio/x-musepack",
        "audio/x-ogg", "audio/x-vorbis", "audio/x-vorbis+ogg", "audio/x-pn-realaudio",
        "audio/x-pn-multirate-realaudio", "audio/x-speex", "audio/x-tta", "audio/x-voc", "audio/x-wav",
        "audio/x-wma", "audio/x-wv", "video/anim", "video/quicktime", "video/msvideo", "video/ogg", "video/theora",
        "video/webm", "video/x-dv", "video/x-flv", "video/x-matroska", "video/x-mjpeg", "video/x-mpeg",
        "video/x-ms-asf", "video/x-msvideo", "video/x-ms-wmv", "video/x-ms-wvx", "video/x-ms-wm", "video/x-ms-wmx",
        "video/x-nut", "video/x-pva", "video/x-theora", "video/x-vid", "video/x-wmv", "video/x-xvid",
        "audio/x-mpd-ffmpeg",
    ]

    /// The libavformat options of `mpd`'s `decoder { plugin "ffmpeg" }` block (`probesize`, `analyzeduration`,
    /// in that order; unset ones are left out), used for every file opened, scanned or played.
    public let formatOptions: [(name: String, value: String)]

    /// FFmpeg's libraries, loaded on first use (the process's by default).
    public let libraries: FFmpegLibraries

    /// Creates the plugin.
    ///
    /// - Parameters:
    ///   - formatOptions: libavformat options for opening each file (none by default).
    ///   - libraries: Where FFmpeg's libraries come from; when they cannot be loaded the plugin declines every
    ///     file and stream (`FormatError.notRecognized`), as if it were off.
    public init(formatOptions: [(name: String, value: String)] = [], libraries: FFmpegLibraries = .shared) {
        self.formatOptions = formatOptions
        self.libraries = libraries
    }

    /// Reads tags, duration, format, ReplayGain and whether there is an attached picture.
    ///
    /// - Throws: `FormatError.notRecognized` when FFmpeg cannot open the file or finds no audio stream in it
    ///   (`mpd` then does not add it); `.input` when the file cannot be opened.
    public func readInfo(path: String) throws(FormatError) -> SongInfo {
        let (file, index) = try self.open(path)
        return try Self.info(file, index, uri: path)
    }

    /// As `readInfo(path:)`, over a remote stream (`mpd`'s `ffmpeg_scan_stream`).
    ///
    /// - Throws: as `readComments(input:)`.
    public func readInfo(input: any InputStream) throws(FormatError) -> SongInfo {
        let (file, index) = try self.open(input: input)
        return try Self.info(file, index, uri: input.uri)
    }

    private static func info(_ file: FFmpegInput, _ index: Int, uri: String) throws(FormatError) -> SongInfo {
        guard let stream = file.audioStreamInfo(index) else { throw .notRecognized(path: uri) }
        let container = file.containerMetadata
        let streamTags = file.streamMetadata(index)
        let duration = stream.streamDurationMilliseconds ?? stream.containerDurationMilliseconds
        return SongInfo(
            tags: TagCollector.tagItems(FFmpegTags.tagItems(container: container, stream: streamTags)),
            durationMilliseconds: duration.map { UInt64(clamping: $0) },
            audioFormat: Self.audioFormat(stream.sampleFormat, rate: stream.sampleRate, channels: stream.channels),
            replayGain: FFmpegTags.replayGain(container: container, stream: streamTags),
            hasPicture: file.hasAttachedPicture)
    }

    /// The first attached picture (an MP4 `covr`, a Matroska cover attachment…) with its codec's MIME type.
    ///
    /// - Throws: `FormatError.notRecognized` when FFmpeg cannot read the file.
    public func readPicture(path: String) throws(FormatError) -> Picture? {
        let (file, _) = try self.open(path)
        return file.attachedPicture.map { Picture(data: $0.data, mimeType: $0.mimeType) }
    }

    /// Every entry of the container's dictionary, then of the audio stream's.
    ///
    /// - Throws: `FormatError.notRecognized` when FFmpeg cannot read the file.
    public func readComments(path: String) throws(FormatError) -> [(name: String, value: String)] {
        let (file, index) = try self.open(path)
        return FFmpegTags.pairs(container: file.containerMetadata, stream: file.streamMetadata(index))
    }

    /// As `readComments(path:)`, over a remote stream (`mpd`'s `ffmpeg_scan_stream`).
    ///
    /// - Throws: `FormatError.decoder` ("avformat_open_input() failed: …") when FFmpeg cannot open the stream,
    ///   which `mpd`'s plugin throws; `.notRecognized` when it finds no audio stream.
    public func readComments(input: any InputStream) throws(FormatError) -> [(name: String, value: String)] {
        let (file, index) = try self.open(input: input)
        return FFmpegTags.pairs(container: file.containerMetadata, stream: file.streamMetadata(index))
    }

    /// As `readPicture(path:)`, over a remote stream.
    ///
    /// - Throws: as `readComments(input:)`.
    public func readPicture(input: any InputStream) throws(FormatError) -> Picture? {
        let (file, _) = try self.open(input: input)
        return file.attachedPicture.map { Picture(data: $0.data, mimeType: $0.mimeType) }
    }

    /// Opens a decoder of the first audio stream read through `input` (FFmpeg probes `input.uri`'s extension
    /// too). It delivers the codec's own sample format (16-bit, 32-bit or float, interleaved), as `mpd` does.
    ///
    /// - Throws: what `FFmpegDecoder.init` throws.
    public func makeDecoder(input: any InputStream) throws(FormatError) -> any Decoder {
        try FFmpegDecoder(input: input, formatOptions: self.formatOptions, libraries: self.libraries)
    }

    /// `mpd`'s plugin opens the URLs of libavformat's rtsp and rtp demuxers itself.
    public var decodesURLs: Bool { true }

    /// Opens `url` with libavformat's protocol and demuxer for it (`rtsp://…`), as `mpd`'s `ffmpeg_uri_decode`.
    ///
    /// - Throws: as `makeDecoder(input:)`: "avformat_open_input() failed: Connection refused".
    public func makeDecoder(url: String, cancellation: InputCancellation) throws(FormatError) -> any Decoder {
        try FFmpegDecoder(uri: url) { () throws(FFmpegError) in
            try FFmpegInput(
                url: url, options: self.formatOptions, cancellation: cancellation, libraries: self.libraries)
        }
    }

    /// A database update reads local files in a scan worker, which loads FFmpeg's libraries (and the dozens they
    /// bring) instead of the daemon; its block's `probesize` and `analyzeduration` go with it.
    public var scanWorkerSettings: [ScanWorkerProtocol.Setting]? {
        self.formatOptions.map { ScanWorkerProtocol.Setting(name: $0.name, value: $0.value) }
    }

    /// Closes FFmpeg's libraries now if no decoder uses them (the scan that loaded them is over); they are
    /// loaded again by the next file.
    public func releaseIdleResources() { self.libraries.unloadIfIdle() }

    // MARK: - Helpers

    /// `mpd`'s sample format for a codec's: 16-bit, 32-bit and float (interleaved or planar) map directly;
    /// anything else has none. The format also needs a rate below 2³⁰ and 1 to 8 channels (`CheckAudioFormat`).
    static func audioFormat(_ format: FFmpegSampleFormat, rate: Int, channels: Int) -> AudioFormat? {
        let sampleFormat: SampleFormat
        switch format {
        case .s16: sampleFormat = .s16
        case .s32: sampleFormat = .s32
        case .float: sampleFormat = .float
        default: return nil
        }
        guard rate > 0, rate < 1 << 30, (1...8).contains(channels) else { return nil }
        return AudioFormat(sampleRate: rate, sampleFormat: sampleFormat, channels: channels)
    }

    /// Opens the file as `mpd`'s scan does: FFmpeg must open it and find an audio stream.
    private func open(_ path: String) throws(FormatError) -> (FFmpegInput, Int) {
        let stream: FileInputStream
        do {
            stream = try FileInputStream(path: path)
        } catch {
            throw .input(error)
        }
        guard
            let file = try? FFmpegInput(
                input: stream, url: path, options: self.formatOptions, libraries: self.libraries),
            let index = file.firstAudioStreamIndex
        else {
            throw .notRecognized(path: path)
        }
        return (file, index)
    }

    /// The container read through a remote stream and its first audio stream's index.
    private func open(input: any InputStream) throws(FormatError) -> (FFmpegInput, Int) {
        let file: FFmpegInput
        do {
            file = try FFmpegInput(input: input, url: input.uri, options: self.formatOptions, libraries: self.libraries)
        } catch {
            // mpd's scan throws when libavformat cannot open the stream, and declines when it finds no streams.
            guard error.function == "avformat_open_input", error.code != 0 else {
                throw .notRecognized(path: input.uri)
            }
            throw .decoder("\(error.function)() failed: \(error.message)")
        }
        guard let index = file.firstAudioStreamIndex else { throw .notRecognized(path: input.uri) }
        return (file, index)
    }
}

/// Decodes with libavcodec in the codec's sample format, as `mpd`'s FFmpeg plugin: `FFmpegAudioDecoder`, with
/// `mpd`'s format checks, its length (stream duration, else the container's), the MixRamp entries of the
/// metadata and the codec's bit rate.
///
/// Confined to the decoding thread. `decode(into:)` and `seek(toFrame:)` do not allocate.
public final class FFmpegDecoder: Decoder {
    /// The codec's rate and channels, in its sample format (`16`, `32` or `f`).
    public let format: AudioFormat
    /// The stream's duration (else the container's) in milliseconds, as `mpd` computes it, in frames.
    public let totalFrames: UInt64?
    /// The `mixramp_start` entry of the container's or stream's metadata.
    public let mixRampStart: String?
    /// The `mixramp_end` entry.
    public let mixRampEnd: String?
    /// The `replaygain_*` entries of the container's and stream's metadata, if any (`mpd`'s plugin submits them).
    public let replayGain: ReplayGainInfo?
    private let decoder: FFmpegAudioDecoder

    /// Opens the first audio stream read through `input`, with libavformat options for the opening.
    ///
    /// - Throws: as `mpd`'s plugin fails: `FormatError.decoder` with its text when FFmpeg cannot open the input or
    ///   the codec ("avformat_open_input() failed: End of file") or the rate or channel count is out of range
    ///   ("Invalid sample rate: 0"); `.notRecognized` where it declines (no stream information, no audio stream,
    ///   no decoder, a sample format it has no equivalent for).
    public convenience init(
        input: any InputStream, formatOptions: [(name: String, value: String)] = [],
        libraries: FFmpegLibraries = .shared
    ) throws(FormatError) {
        try self.init(uri: input.uri) { () throws(FFmpegError) in
            try FFmpegInput(input: input, url: input.uri, options: formatOptions, libraries: libraries)
        }
    }

    /// Opens the first audio stream of the container `open` opens; `uri` names it in errors.
    ///
    /// - Throws: as `init(input:formatOptions:libraries:)`.
    init(uri: String, open: () throws(FFmpegError) -> FFmpegInput) throws(FormatError) {
        let decoder: FFmpegAudioDecoder
        do {
            decoder = try FFmpegAudioDecoder(input: try open())
        } catch {
            switch error.function {
            case "avformat_find_stream_info", "avcodec_find_decoder", "dlopen", "dlsym":
                // mpd's plugin logs these and declines; without FFmpeg's libraries the plugin is off and
                // declines every stream (FFmpegLibraries reported why, once).
                throw .notRecognized(path: uri)
            default:
                // mpd's plugin throws these, as "avformat_open_input() failed: End of file".
                throw .decoder(error.code != 0 ? "\(error.function)() failed: \(error.message)" : "\(error)")
            }
        }
        guard
            let format = FFmpegFormat.audioFormat(
                decoder.sampleFormat, rate: decoder.sampleRate, channels: decoder.channels)
        else {
            // mpd's plugin declines a sample format it has no equivalent for, and throws for a rate or channel
            // count out of range (its CheckAudioFormat).
            if FFmpegFormat.audioFormat(decoder.sampleFormat, rate: 44100, channels: 2) == nil {
                throw .notRecognized(path: uri)
            }
            if !(1..<(1 << 30)).contains(decoder.sampleRate) {
                throw .decoder("Invalid sample rate: \(decoder.sampleRate)")
            }
            throw .decoder("Invalid channel count: \(decoder.channels)")
        }
        self.decoder = decoder
        self.format = format
        let info = decoder.input.audioStreamInfo(decoder.streamIndex)
        let milliseconds = info.flatMap { $0.streamDurationMilliseconds ?? $0.containerDurationMilliseconds }
        // A damaged file can claim any duration: out of range (negative, or too long to count) is unknown.
        self.totalFrames = milliseconds.flatMap { value -> UInt64? in
            guard value >= 0 else { return nil }
            let (frames, overflow) = UInt64(value).multipliedReportingOverflow(by: UInt64(format.sampleRate))
            return overflow ? nil : frames / 1000
        }
        let (container, stream) = (decoder.input.containerMetadata, decoder.input.streamMetadata(decoder.streamIndex))
        let mixRamp = FFmpegTags.mixRamp(container: container, stream: stream)
        self.mixRampStart = mixRamp.start
        self.mixRampEnd = mixRamp.end
        let replayGain = FFmpegTags.replayGain(container: container, stream: stream)
        self.replayGain = replayGain.isEmpty ? nil : replayGain
    }

    /// The codec's bit rate in kbit/s (constant for a stream, as `mpd` reports it).
    public var bitRate: Int { self.decoder.bitRate }

    /// Decodes into `buffer` (whole frames of `format.frameSize` bytes).
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: frames written; 0 at the end (a codec failure ends the song, as in `mpd`).
    /// - Throws: `FormatError.decoder` when the stream changes its sample format or channel count.
    public func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        do {
            return try self.decoder.decode(into: buffer)
        } catch {
            throw .decoder("\(error)")
        }
    }

    /// Seeks as `mpd` does: to the packet at or before the time (in whole milliseconds), then drops the samples
    /// of that packet before `frame`.
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: `frame`.
    /// - Throws: `FormatError.decoder` when FFmpeg cannot seek.
    @discardableResult
    public func seek(toFrame frame: UInt64) throws(FormatError) -> UInt64 {
        do {
            return try self.decoder.seek(toFrame: frame)
        } catch {
            throw .decoder("\(error)")
        }
    }
}
