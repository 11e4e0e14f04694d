// SPDX-License-Identifier: GPL-3.0-or-later

import CFFmpeg
import Glibc
import Input

/// A sample format of FFmpeg's decoders (`AVSampleFormat`).
public enum FFmpegSampleFormat: Sendable, Hashable {
    /// Unsigned 8-bit, interleaved or planar.
    case u8(planar: Bool)
    /// Signed 16-bit, interleaved or planar.
    case s16(planar: Bool)
    /// Signed 32-bit, interleaved or planar.
    case s32(planar: Bool)
    /// Signed 64-bit, interleaved or planar.
    case s64(planar: Bool)
    /// 32-bit float, interleaved or planar.
    case float(planar: Bool)
    /// 64-bit float, interleaved or planar.
    case double(planar: Bool)
    /// None or unknown (`AV_SAMPLE_FMT_NONE`, or a value this wrapper does not know).
    case none

    init(raw: Int32) {
        switch raw {
        case AV_SAMPLE_FMT_U8.rawValue: self = .u8(planar: false)
        case AV_SAMPLE_FMT_S16.rawValue: self = .s16(planar: false)
        case AV_SAMPLE_FMT_S32.rawValue: self = .s32(planar: false)
        case AV_SAMPLE_FMT_S64.rawValue: self = .s64(planar: false)
        case AV_SAMPLE_FMT_FLT.rawValue: self = .float(planar: false)
        case AV_SAMPLE_FMT_DBL.rawValue: self = .double(planar: false)
        case AV_SAMPLE_FMT_U8P.rawValue: self = .u8(planar: true)
        case AV_SAMPLE_FMT_S16P.rawValue: self = .s16(planar: true)
        case AV_SAMPLE_FMT_S32P.rawValue: self = .s32(planar: true)
        case AV_SAMPLE_FMT_S64P.rawValue: self = .s64(planar: true)
        case AV_SAMPLE_FMT_FLTP.rawValue: self = .float(planar: true)
        case AV_SAMPLE_FMT_DBLP.rawValue: self = .double(planar: true)
        default: self = .none
        }
    }
}

/// What FFmpeg found about an audio stream after `avformat_find_stream_info` (its `AVCodecParameters`).
public struct FFmpegAudioStreamInfo: Sendable, Hashable {
    /// The stream's index in the container.
    public var index: Int
    /// FFmpeg's codec name (`aac`, `alac`, `wmav2`…), empty when unknown.
    public var codecName: String
    /// The sample format the decoder will produce, as the parameters announce it.
    public var sampleFormat: FFmpegSampleFormat
    /// Samples per second per channel (0 when unknown).
    public var sampleRate: Int
    /// The channel count (0 when unknown).
    public var channels: Int
    /// The stream's duration in its time base, converted to milliseconds (rounded to nearest), if known.
    public var streamDurationMilliseconds: Int64?
    /// The container's duration in milliseconds (rounded to nearest), if known.
    public var containerDurationMilliseconds: Int64?
}

/// An attached picture (a video stream with `AV_DISPOSITION_ATTACHED_PIC`, such as an MP4 `covr` atom).
public struct FFmpegAttachedPicture: Sendable, Hashable {
    /// The image bytes (the stream's `attached_pic` packet).
    public var data: [UInt8]
    /// The first MIME type of the picture's codec descriptor (`image/jpeg`, `image/png`), if it has one.
    public var mimeType: String?
}

/// A container opened by libavformat over an `InputStream`, with its stream information read
/// (`avformat_open_input` then `avformat_find_stream_info`), as `mpd`'s FFmpeg plugin opens every file.
///
/// Thread confinement: create on any thread, then use from one thread at a time. libavformat reads through
/// the `InputStream` with an `AVIOContext` of 8 KiB (read and, when the input can seek, seek callbacks with
/// `AVSEEK_SIZE`), or, opened from a URL, through its own protocols.
public final class FFmpegInput {
    /// The format context; valid until `deinit`.
    let context: UnsafeMutablePointer<AVFormatContext>
    /// The context reading the `InputStream`; `nil` when libavformat opened a URL itself.
    private let io: UnsafeMutablePointer<AVIOContext>?
    /// FFmpeg's functions, valid while this input holds its use of `libraries` (from `init` to `deinit`).
    let ffmpeg: fermata_ffmpeg_functions
    let libraries: FFmpegLibraries
    /// The input the callbacks read through; kept alive while libavformat holds a pointer to it.
    private let source: InputSource?
    /// What the interrupt callback of an input opened from a URL asks; kept alive while libavformat may call it.
    private let interrupt: FFmpegInterrupt?

    /// Opens the container read through `input` (from its current offset) and reads its stream information.
    /// `url` is the name FFmpeg's format probe sees (it scores demuxers by the name's extension too);
    /// `options` are libavformat options for the opening (`probesize`, `analyzeduration`), in order.
    ///
    /// Allocates; any thread. Loads `libraries` if they are not loaded, and holds one use of them until `deinit`.
    /// - Throws: `FFmpegError` when the libraries cannot be loaded, libavformat cannot recognise the data or
    ///   find stream information, or it refuses an option's value.
    public init(
        input: any InputStream, url: String, options: [(name: String, value: String)] = [],
        libraries: FFmpegLibraries = .shared
    ) throws(FFmpegError) {
        let ffmpeg = try libraries.acquire()
        var opened = false
        // Every failure below gives the use back; success keeps it until deinit.
        defer { if !opened { libraries.release() } }
        let bufferSize: Int32 = 8192
        guard let buffer = ffmpeg.av_malloc(Int(bufferSize)) else {
            throw FFmpegError(function: "av_malloc", message: "out of memory")
        }
        let source = InputSource(input)
        // Unretained: `self.source` keeps the box alive as long as the AVIOContext exists.
        let opaque = Unmanaged.passUnretained(source).toOpaque()
        guard
            let io = ffmpeg.avio_alloc_context(
                buffer.assumingMemoryBound(to: UInt8.self), bufferSize, 0, opaque, inputRead, nil,
                input.isSeekable ? inputSeek : nil)
        else {
            ffmpeg.av_free(buffer)
            throw FFmpegError(function: "avio_alloc_context", message: "out of memory")
        }
        guard let allocated = ffmpeg.avformat_alloc_context() else {
            Self.free(io, ffmpeg)
            throw FFmpegError(function: "avformat_alloc_context", message: "out of memory")
        }
        allocated.pointee.pb = io
        let context: UnsafeMutablePointer<AVFormatContext>
        do {
            // Failing, it frees the context, not our AVIOContext.
            context = try Self.open(allocated, url: url, options: options, ffmpeg)
        } catch {
            Self.free(io, ffmpeg)
            throw error
        }
        self.context = context
        self.io = io
        self.source = source
        self.interrupt = nil
        self.ffmpeg = ffmpeg
        self.libraries = libraries
        opened = true
    }

    /// Opens `url` with libavformat's own protocol and demuxer for it (`rtsp://…`), as `mpd`'s ffmpeg decoder
    /// plugin opens the URIs of its protocols, and reads its stream information. A blocking open or read returns
    /// once `cancellation` fires (libavformat's interrupt callback asks it); `mpd` has none.
    ///
    /// Allocates; any thread but the event loop's (it waits on the network). Holds one use of `libraries` until
    /// `deinit`.
    /// - Throws: `FFmpegError` when the libraries cannot be loaded, the URL cannot be opened
    ///   (`avformat_open_input`: `Connection refused`, `Server returned 404 Not Found`, `Immediate exit requested`
    ///   when cancelled) or no stream information is found.
    public init(
        url: String, options: [(name: String, value: String)] = [], cancellation: InputCancellation,
        libraries: FFmpegLibraries = .shared
    ) throws(FFmpegError) {
        let ffmpeg = try libraries.acquire()
        var opened = false
        defer { if !opened { libraries.release() } }
        guard let allocated = ffmpeg.avformat_alloc_context() else {
            throw FFmpegError(function: "avformat_alloc_context", message: "out of memory")
        }
        let interrupt = FFmpegInterrupt(cancellation)
        allocated.pointee.interrupt_callback = interrupt.callback
        self.context = try Self.open(allocated, url: url, options: options, ffmpeg)
        self.io = nil
        self.source = nil
        self.interrupt = interrupt
        self.ffmpeg = ffmpeg
        self.libraries = libraries
        opened = true
    }

    deinit {
        var closing: UnsafeMutablePointer<AVFormatContext>? = self.context
        self.ffmpeg.avformat_close_input(&closing)
        if let io = self.io { Self.free(io, self.ffmpeg) }
        // The last FFmpeg call of this input (its decoder, which keeps it, is gone already).
        self.libraries.release()
    }

    /// Opens the container named `url` into `allocated` with libavformat's `options` and reads its stream
    /// information (`avformat_open_input`, `avformat_find_stream_info`): both initialisers' opening. On failure
    /// `allocated` is freed; what the caller allocated around it (an `AVIOContext`) is the caller's to free.
    private static func open(
        _ allocated: UnsafeMutablePointer<AVFormatContext>, url: String, options: [(name: String, value: String)],
        _ ffmpeg: fermata_ffmpeg_functions
    ) throws(FFmpegError) -> UnsafeMutablePointer<AVFormatContext> {
        var dictionary: OpaquePointer?
        do {
            dictionary = try Self.dictionary(options, ffmpeg)
        } catch {
            ffmpeg.avformat_free_context(allocated)
            throw error
        }
        defer { ffmpeg.av_dict_free(&dictionary) }
        var context: UnsafeMutablePointer<AVFormatContext>? = allocated
        // On failure avformat_open_input frees the context and clears the pointer.
        let result = url.withCString { ffmpeg.avformat_open_input(&context, $0, nil, &dictionary) }
        guard result >= 0, let context else {
            throw FFmpegError(function: "avformat_open_input", code: result, ffmpeg)
        }
        let found = ffmpeg.avformat_find_stream_info(context, nil)
        if found < 0 {
            var closing: UnsafeMutablePointer<AVFormatContext>? = context
            ffmpeg.avformat_close_input(&closing)
            throw FFmpegError(function: "avformat_find_stream_info", code: found, ffmpeg)
        }
        return context
    }

    /// libavformat's options for an opening, in order, as a dictionary the caller frees (`av_dict_free`).
    ///
    /// - Throws: `FFmpegError` when libavutil refuses an option (nothing is left to free then).
    private static func dictionary(
        _ options: [(name: String, value: String)], _ ffmpeg: fermata_ffmpeg_functions
    ) throws(FFmpegError) -> OpaquePointer? {
        var dictionary: OpaquePointer?
        for option in options {
            let set = option.name.withCString { name in
                option.value.withCString { value in ffmpeg.av_dict_set(&dictionary, name, value, 0) }
            }
            guard set >= 0 else {
                ffmpeg.av_dict_free(&dictionary)
                throw FFmpegError(function: "av_dict_set(\(option.name))", code: set, ffmpeg)
            }
        }
        return dictionary
    }

    private static func free(_ io: UnsafeMutablePointer<AVIOContext>, _ ffmpeg: fermata_ffmpeg_functions) {
        // libavformat may have replaced the buffer; the one the context holds now is ours to free.
        ffmpeg.av_free(io.pointee.buffer)
        var context: UnsafeMutablePointer<AVIOContext>? = io
        ffmpeg.avio_context_free(&context)
    }

    // MARK: - Streams

    /// The demuxer's short name (`mov,mp4,m4a,3gp,3g2,mj2`, `matroska,webm`…).
    public var formatName: String {
        guard let format = self.context.pointee.iformat, let name = format.pointee.name else { return "" }
        return String(cString: name)
    }

    /// The number of streams.
    public var streamCount: Int { Int(self.context.pointee.nb_streams) }

    private func stream(_ index: Int) -> UnsafeMutablePointer<AVStream>? {
        guard index >= 0, index < self.streamCount else { return nil }
        return self.context.pointee.streams[index]
    }

    /// The index of the first audio stream, as `mpd` picks it (not `av_find_best_stream`), or `nil`.
    public var firstAudioStreamIndex: Int? {
        (0..<self.streamCount).first { index in
            self.stream(index)?.pointee.codecpar?.pointee.codec_type == AVMEDIA_TYPE_AUDIO
        }
    }

    /// The parameters of the audio stream at `index`, or `nil` when there is no such audio stream.
    public func audioStreamInfo(_ index: Int) -> FFmpegAudioStreamInfo? {
        guard let stream = self.stream(index), let parameters = stream.pointee.codecpar,
            parameters.pointee.codec_type == AVMEDIA_TYPE_AUDIO
        else { return nil }
        let milliseconds = AVRational(num: 1, den: 1000)
        let streamDuration = stream.pointee.duration
        let containerDuration = self.context.pointee.duration
        let name = self.ffmpeg.avcodec_get_name(parameters.pointee.codec_id).map { String(cString: $0) } ?? ""
        return FFmpegAudioStreamInfo(
            index: index, codecName: name, sampleFormat: FFmpegSampleFormat(raw: parameters.pointee.format),
            sampleRate: Int(parameters.pointee.sample_rate), channels: Int(parameters.pointee.ch_layout.nb_channels),
            streamDurationMilliseconds: streamDuration == FFmpegConstants.noTimestamp
                ? nil : self.ffmpeg.av_rescale_q(streamDuration, stream.pointee.time_base, milliseconds),
            containerDurationMilliseconds: containerDuration == FFmpegConstants.noTimestamp
                ? nil : self.ffmpeg.av_rescale_q(containerDuration, AVRational(num: 1, den: AV_TIME_BASE), milliseconds)
        )
    }

    /// The container's metadata dictionary.
    public var containerMetadata: FFmpegMetadata { FFmpegMetadata(copying: self.context.pointee.metadata, self.ffmpeg) }

    /// The metadata dictionary of the stream at `index` (empty when there is no such stream).
    public func streamMetadata(_ index: Int) -> FFmpegMetadata {
        FFmpegMetadata(copying: self.stream(index)?.pointee.metadata, self.ffmpeg)
    }

    /// The first attached picture, as `mpd` finds it: the first video stream with
    /// `AV_DISPOSITION_ATTACHED_PIC` and a non-empty picture packet.
    public var attachedPicture: FFmpegAttachedPicture? {
        guard let stream = self.pictureStream, let parameters = stream.pointee.codecpar,
            let data = stream.pointee.attached_pic.data
        else { return nil }
        let bytes = Array(UnsafeBufferPointer(start: data, count: Int(stream.pointee.attached_pic.size)))
        var mimeType: String?
        if let descriptor = self.ffmpeg.avcodec_descriptor_get(parameters.pointee.codec_id),
            let types = descriptor.pointee.mime_types, let first = types[0]
        {
            mimeType = String(cString: first)
        }
        return FFmpegAttachedPicture(data: bytes, mimeType: mimeType)
    }

    /// Whether there is an attached picture (without copying it).
    public var hasAttachedPicture: Bool { self.pictureStream != nil }

    private var pictureStream: UnsafeMutablePointer<AVStream>? {
        for index in 0..<self.streamCount {
            guard let stream = self.stream(index), let parameters = stream.pointee.codecpar,
                parameters.pointee.codec_type == AVMEDIA_TYPE_VIDEO,
                stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0,
                stream.pointee.attached_pic.size > 0, stream.pointee.attached_pic.data != nil
            else { continue }
            return stream
        }
        return nil
    }

    /// Whether libavformat itself says the stream cannot seek (`AVFMTCTX_UNSEEKABLE`).
    public var isUnseekable: Bool { self.context.pointee.ctx_flags & AVFMTCTX_UNSEEKABLE != 0 }
}

/// The input behind an `FFmpegInput`: what the AVIOContext callbacks get as their opaque pointer.
private final class InputSource {
    let input: any InputStream
    init(_ input: any InputStream) { self.input = input }
}

/// libavformat's read callback over an `InputSource` (called on the thread that calls into libavformat):
/// `AVERROR_EOF` at the end, `AVERROR(EIO)` when reading fails. Does not allocate.
private let inputRead: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int32) -> Int32 = {
    opaque, buffer, size in
    guard let opaque, let buffer else { return FFmpegConstants.ioError }
    guard size > 0 else { return 0 }
    // Unmanaged: the opaque pointer is the InputSource its FFmpegInput keeps alive while libavformat reads.
    let input = Unmanaged<InputSource>.fromOpaque(opaque).takeUnretainedValue().input
    do {
        let count = try input.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: Int(size)))
        return count == 0 ? FFmpegConstants.endOfFile : Int32(count)
    } catch {
        return FFmpegConstants.ioError
    }
}

/// libavformat's seek callback over an `InputSource`: `lseek` semantics plus `AVSEEK_SIZE` (the size when
/// known); -1 when the input cannot move there.
private let inputSeek: @convention(c) (UnsafeMutableRawPointer?, Int64, Int32) -> Int64 = { opaque, offset, whence in
    guard let opaque else { return -1 }
    // Unmanaged: as in `inputRead`, the FFmpegInput keeps the InputSource alive.
    let input = Unmanaged<InputSource>.fromOpaque(opaque).takeUnretainedValue().input
    let base: Int64
    switch whence {
    case SEEK_SET: base = 0
    case SEEK_CUR: base = Int64(clamping: input.offset)
    case SEEK_END:
        guard let size = input.size else { return -1 }
        base = Int64(clamping: size)
    case AVSEEK_SIZE:
        guard let size = input.size else { return -1 }
        return Int64(clamping: size)
    default: return -1
    }
    let (target, overflow) = base.addingReportingOverflow(offset)
    guard !overflow, target >= 0 else { return -1 }
    do {
        try input.seek(to: UInt64(target))
    } catch {
        return -1
    }
    return Int64(clamping: input.offset)
}
