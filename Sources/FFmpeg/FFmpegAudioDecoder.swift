// SPDX-License-Identifier: GPL-3.0-or-later

import CFFmpeg
import Glibc

/// Decodes the first audio stream of an `FFmpegInput` with libavcodec, as `mpd`'s FFmpeg plugin does: packets
/// of that stream go to `avcodec_send_packet`, frames come back from `avcodec_receive_frame` in the codec's
/// sample format, planar frames are interleaved; nothing is drained from the codec at the end of the file.
///
/// Confined to the decoding thread. `decode(into:)` and `seek(toFrame:)` do not allocate beyond what libavcodec
/// and libavformat do internally per packet: a decoded frame stays referenced until the caller has taken all
/// of it, so there is no buffer of our own to grow.
public final class FFmpegAudioDecoder {
    /// The container; kept for as long as the decoder reads from it.
    public let input: FFmpegInput
    /// The audio stream decoded.
    public let streamIndex: Int
    /// The decoder's output sample format (`AVCodecContext.sample_fmt` after `avcodec_open2`).
    public let sampleFormat: FFmpegSampleFormat
    /// Samples per second per channel.
    public let sampleRate: Int
    /// The channel count.
    public let channels: Int
    /// Bytes per sample in `sampleFormat`.
    public let bytesPerSample: Int

    /// The input's FFmpeg functions (valid while the input, which this decoder keeps, lives).
    private let ffmpeg: fermata_ffmpeg_functions
    private let codec: UnsafeMutablePointer<AVCodecContext>
    private let packet: UnsafeMutablePointer<AVPacket>
    private let frame: UnsafeMutablePointer<AVFrame>
    private let stream: UnsafeMutablePointer<AVStream>
    private let rawSampleFormat: Int32
    private let isPlanar: Bool
    /// Samples in the frame received last, and how many of them were handed out.
    private var frameLength = 0
    private var framePosition = 0
    /// Samples still to drop from the frames of the current packet (after a seek, as `mpd` computes them).
    private var skipFrames: UInt64 = 0
    /// The frame a seek asked for; applied to the first audio packet read after it, then cleared.
    private var seekFrame: UInt64 = 0
    /// The stream ended (end of file, or a failure `mpd` treats as the end).
    private var finished = false

    /// Opens a libavcodec decoder for the first audio stream of `input`.
    ///
    /// Allocates; call it on the thread that will decode.
    /// - Throws: `FFmpegError` when there is no audio stream or no decoder for its codec, or the decoder cannot
    ///   be opened.
    public init(input: FFmpegInput) throws(FFmpegError) {
        guard let index = input.firstAudioStreamIndex, let stream = input.context.pointee.streams[index],
            let parameters = stream.pointee.codecpar
        else { throw FFmpegError(function: "avformat_find_stream_info", message: "No audio stream inside") }
        let ffmpeg = input.ffmpeg
        guard let decoder = ffmpeg.avcodec_find_decoder(parameters.pointee.codec_id) else {
            throw FFmpegError(function: "avcodec_find_decoder", message: "Unsupported audio codec")
        }
        guard let codec = ffmpeg.avcodec_alloc_context3(decoder) else {
            throw FFmpegError(function: "avcodec_alloc_context3", message: "out of memory")
        }
        var owned: UnsafeMutablePointer<AVCodecContext>? = codec
        let filled = ffmpeg.avcodec_parameters_to_context(codec, parameters)
        if filled < 0 {
            ffmpeg.avcodec_free_context(&owned)
            throw FFmpegError(function: "avcodec_parameters_to_context", code: filled, ffmpeg)
        }
        let opened = ffmpeg.avcodec_open2(codec, decoder, nil)
        if opened < 0 {
            ffmpeg.avcodec_free_context(&owned)
            throw FFmpegError(function: "avcodec_open2", code: opened, ffmpeg)
        }
        guard let packet = ffmpeg.av_packet_alloc() else {
            ffmpeg.avcodec_free_context(&owned)
            throw FFmpegError(function: "av_packet_alloc", message: "out of memory")
        }
        guard let frame = ffmpeg.av_frame_alloc() else {
            var freeing: UnsafeMutablePointer<AVPacket>? = packet
            ffmpeg.av_packet_free(&freeing)
            ffmpeg.avcodec_free_context(&owned)
            throw FFmpegError(function: "av_frame_alloc", message: "out of memory")
        }
        self.input = input
        self.ffmpeg = ffmpeg
        self.streamIndex = index
        self.stream = stream
        self.codec = codec
        self.packet = packet
        self.frame = frame
        self.rawSampleFormat = codec.pointee.sample_fmt.rawValue
        self.sampleFormat = FFmpegSampleFormat(raw: self.rawSampleFormat)
        self.sampleRate = Int(codec.pointee.sample_rate)
        self.channels = Int(codec.pointee.ch_layout.nb_channels)
        self.bytesPerSample = Int(ffmpeg.av_get_bytes_per_sample(codec.pointee.sample_fmt))
        self.isPlanar = ffmpeg.av_sample_fmt_is_planar(codec.pointee.sample_fmt) != 0
    }

    deinit {
        var frame: UnsafeMutablePointer<AVFrame>? = self.frame
        self.ffmpeg.av_frame_free(&frame)
        var packet: UnsafeMutablePointer<AVPacket>? = self.packet
        self.ffmpeg.av_packet_free(&packet)
        var codec: UnsafeMutablePointer<AVCodecContext>? = self.codec
        self.ffmpeg.avcodec_free_context(&codec)
    }

    /// The codec's bit rate in kbit/s (`AVCodecContext.bit_rate / 1000`), as `mpd` reports it.
    public var bitRate: Int { Int(self.codec.pointee.bit_rate / 1000) }

    /// The length of the stream in PCM frames from the stream's duration, if known.
    public var streamFrames: UInt64? {
        let duration = self.stream.pointee.duration
        guard duration != FFmpegConstants.noTimestamp, duration >= 0, self.sampleRate > 0 else { return nil }
        let frames = self.ffmpeg.av_rescale_q(
            duration, self.stream.pointee.time_base, AVRational(num: 1, den: Int32(self.sampleRate)))
        return frames >= 0 ? UInt64(frames) : nil
    }

    // MARK: - Decoding

    /// Decodes into `buffer`: whole interleaved PCM frames of `channels × bytesPerSample` bytes, as many as fit.
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: PCM frames written; 0 at the end of the stream.
    /// - Throws: `FFmpegError` when a decoded frame does not have the decoder's sample format or channel count.
    public func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FFmpegError) -> Int {
        let frameBytes = self.channels * self.bytesPerSample
        guard frameBytes > 0, let base = buffer.baseAddress else { return 0 }
        let capacity = buffer.count / frameBytes
        var written = 0
        while written < capacity {
            if self.framePosition < self.frameLength {
                let count = min(self.frameLength - self.framePosition, capacity - written)
                self.copy(count, to: base + written * frameBytes)
                self.framePosition += count
                written += count
                continue
            }
            if self.finished { break }
            guard try self.receiveFrame() else { break }
        }
        return written
    }

    /// Gets the next decoded frame, sending packets as the codec asks for them.
    ///
    /// - Returns: `false` at the end.
    private func receiveFrame() throws(FFmpegError) -> Bool {
        while true {
            let received = self.ffmpeg.avcodec_receive_frame(self.codec, self.frame)
            if received == 0 {
                let samples = Int(self.frame.pointee.nb_samples)
                guard self.frame.pointee.format == self.rawSampleFormat,
                    Int(self.frame.pointee.ch_layout.nb_channels) == self.channels
                else {
                    self.finish()
                    throw FFmpegError(function: "avcodec_receive_frame", message: "the frame format changed")
                }
                let skipped = Int(min(self.skipFrames, UInt64(samples)))
                self.skipFrames -= UInt64(skipped)
                self.frameLength = samples
                self.framePosition = skipped
                if skipped < samples { return true }
                continue
            }
            guard received == FFmpegConstants.tryAgain, self.sendNextPacket() else {
                // The end of the stream, or a decoding failure, which `mpd` treats as the end too.
                self.finish()
                return false
            }
        }
    }

    /// Reads packets until one of the audio stream is sent to the codec (failed sends are skipped, as `mpd`
    /// does).
    ///
    /// - Returns: `false` at the end of the file, or when the codec is at its end.
    private func sendNextPacket() -> Bool {
        while true {
            if self.ffmpeg.av_read_frame(self.input.context, self.packet) < 0 { return false }
            defer { self.ffmpeg.av_packet_unref(self.packet) }
            guard self.packet.pointee.size > 0, Int(self.packet.pointee.stream_index) == self.streamIndex else {
                continue
            }
            self.skipFrames = self.framesToSkip()
            self.seekFrame = 0
            let sent = self.ffmpeg.avcodec_send_packet(self.codec, self.packet)
            if sent == 0 { return true }
            if sent == FFmpegConstants.endOfFile { return false }
        }
    }

    /// After a seek, the samples of the current packet before the frame asked for: the packet's time stamp
    /// (relative to the stream start) rescaled from the stream's time base to the codec's, as `mpd` computes
    /// it (`av_rescale_q` gives `INT64_MIN` when the codec has no time base, and then nothing is skipped).
    private func framesToSkip() -> UInt64 {
        guard self.seekFrame > 0 else { return 0 }
        let pts = self.packet.pointee.pts
        guard pts >= 0, pts != FFmpegConstants.noTimestamp else { return 0 }
        let start = self.stream.pointee.start_time
        let relative = pts &- (start == FFmpegConstants.noTimestamp ? 0 : start)
        guard relative >= 0 else { return 0 }
        let current = UInt64(
            bitPattern: self.ffmpeg.av_rescale_q(relative, self.stream.pointee.time_base, self.codec.pointee.time_base))
        return current < self.seekFrame ? self.seekFrame - current : 0
    }

    private func finish() {
        self.finished = true
        self.frameLength = 0
        self.framePosition = 0
    }

    /// Copies `count` frames from the current frame's position, interleaving planar data.
    private func copy(_ count: Int, to destination: UnsafeMutableRawPointer) {
        let width = self.bytesPerSample
        let channels = self.channels
        guard let planes = self.frame.pointee.extended_data else { return }
        if !self.isPlanar || channels == 1 {
            guard let source = planes[0] else { return }
            memcpy(destination, source + self.framePosition * width * channels, count * width * channels)
            return
        }
        for channel in 0..<channels {
            guard let plane = planes[channel] else { continue }
            let source = UnsafeRawPointer(plane + self.framePosition * width)
            let target = destination + channel * width
            let stride = width * channels
            switch width {
            case 2:
                for index in 0..<count {
                    let sample = source.loadUnaligned(fromByteOffset: index * 2, as: UInt16.self)
                    target.storeBytes(of: sample, toByteOffset: index * stride, as: UInt16.self)
                }
            case 4:
                for index in 0..<count {
                    let sample = source.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self)
                    target.storeBytes(of: sample, toByteOffset: index * stride, as: UInt32.self)
                }
            default:
                for index in 0..<count {
                    memcpy(target + index * stride, source + index * width, width)
                }
            }
        }
    }

    // MARK: - Seeking

    /// Seeks to `frame` as `mpd` does: to the packet at or before the frame's time (in whole milliseconds,
    /// `AVSEEK_FLAG_ANY | AVSEEK_FLAG_BACKWARD`), flushing the codec; the first packet after it then drops the
    /// samples before the frame when the codec's time base allows computing them.
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: `frame`.
    /// - Throws: `FFmpegError` from `av_seek_frame`.
    @discardableResult
    public func seek(toFrame frame: UInt64) throws(FFmpegError) -> UInt64 {
        guard self.sampleRate > 0 else { throw FFmpegError(function: "av_seek_frame", message: "no sample rate") }
        let rate = UInt64(self.sampleRate)
        let (product, overflow) = frame.multipliedReportingOverflow(by: 1000)
        guard !overflow, product <= UInt64.max - rate else {
            throw FFmpegError(function: "av_seek_frame", message: "seek position out of range")
        }
        let milliseconds = (product + rate / 2) / rate
        let start = self.stream.pointee.start_time
        let target =
            self.ffmpeg.av_rescale_q(
                Int64(clamping: milliseconds), AVRational(num: 1, den: 1000), self.stream.pointee.time_base)
            &+ (start == FFmpegConstants.noTimestamp ? 0 : start)
        let result = self.ffmpeg.av_seek_frame(
            self.input.context, Int32(self.streamIndex), target, AVSEEK_FLAG_ANY | AVSEEK_FLAG_BACKWARD)
        if result < 0 { throw FFmpegError(function: "av_seek_frame", code: result, self.ffmpeg) }
        self.ffmpeg.avcodec_flush_buffers(self.codec)
        self.frameLength = 0
        self.framePosition = 0
        self.skipFrames = 0
        self.finished = false
        self.seekFrame = milliseconds * rate / 1000
        return frame
    }

    /// The codec's time base (`AVCodecContext.time_base`) as numerator and denominator, for diagnostics.
    public var codecTimeBase: (numerator: Int32, denominator: Int32) {
        (self.codec.pointee.time_base.num, self.codec.pointee.time_base.den)
    }
}
