// SPDX-License-Identifier: GPL-3.0-or-later

import CMPCDec
import Input

/// Why libmpcdec could not open or decode a Musepack stream.
public enum MPCError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `mpc_demux_init` found no valid Musepack stream (or a stream it cannot decode).
    case notMusepack
    /// The stream is larger than libmpcdec's 32-bit offsets can address.
    case tooLarge(UInt64)
    /// The header announces a channel count libmpcdec does not decode (it decodes mono and stereo).
    case unsupportedChannels(Int)
    /// `mpc_demux_decode` failed.
    case decodeFailed
    /// `mpc_demux_seek_sample` failed.
    case seekFailed(UInt64)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .notMusepack: "not a valid musepack stream"
        case .tooLarge(let size): "musepack stream too large for libmpcdec (\(size) bytes)"
        case .unsupportedChannels(let channels): "musepack stream with \(channels) channels"
        case .decodeFailed: "failed to decode sample"
        case .seekFailed(let sample): "cannot seek to sample \(sample)"
        }
    }
}

/// The facts of a Musepack stream header, as libmpcdec's `mpc_streaminfo` gives them.
public struct MPCStreamInfo: Sendable, Hashable {
    /// Samples per second.
    public var sampleRate: Int
    /// 1 or 2.
    public var channels: Int
    /// The stream version (7 or 8).
    public var streamVersion: Int
    /// The average bit rate in bit/s.
    public var averageBitRate: Double
    /// The header's title (track) gain, in libmpcdec's encoding (0 when absent).
    public var titleGain: UInt16
    /// The header's album gain, in libmpcdec's encoding (0 when absent).
    public var albumGain: UInt16
    /// The header's title peak, in libmpcdec's encoding (0 when absent).
    public var titlePeak: UInt16
    /// The header's album peak, in libmpcdec's encoding (0 when absent).
    public var albumPeak: UInt16
    /// Samples per channel in the stream, including the leading silence.
    public var samples: UInt64
    /// Samples at the start that are not played.
    public var beginSilence: UInt64
    /// `mpc_streaminfo_get_length`: the playable length in seconds.
    public var lengthSeconds: Double
    /// `mpc_streaminfo_get_length_samples`: the playable length in samples per channel.
    public var lengthSamples: Int64
}

/// One decoded Musepack frame: how many samples per channel, and how many bits of stream it took.
public struct MPCFrame: Sendable, Hashable {
    /// Samples per channel (0 for an empty frame, which can follow a seek).
    public var samples: Int
    /// Bits of stream consumed.
    public var bits: Int
}

/// A libmpcdec demuxer and decoder reading through an `InputStream`; frees itself when released.
///
/// Confined to one thread at a time. `decodeFrame()`, `withSamples(_:)` and `seek(toSample:)` do not allocate:
/// the frame buffer is allocated when the stream is opened.
public final class MPCDemux {
    /// The stream header's facts.
    public let info: MPCStreamInfo
    private let demux: OpaquePointer
    /// libmpcdec keeps a pointer to its reader for as long as the demuxer lives, so the reader has a fixed address.
    private let reader: UnsafeMutablePointer<mpc_reader>
    private let source: MPCInputSource
    /// libmpcdec's frame buffer (`MPC_DECODER_BUFFER_LENGTH` samples).
    private let samples: UnsafeMutableBufferPointer<MPC_SAMPLE_FORMAT>
    private var lastSampleCount = 0

    /// Opens the Musepack stream that `input` reads from its current offset; keeps `input`.
    ///
    /// - Throws: `MPCError.tooLarge` for streams past 2 GiB (libmpcdec's offsets are 32-bit), `.notMusepack` when
    ///   libmpcdec rejects the stream, `.unsupportedChannels` for a channel count it does not decode.
    public init(input: any InputStream) throws(MPCError) {
        if let size = input.size, size > UInt64(Int32.max) { throw .tooLarge(size) }
        self.source = MPCInputSource(input)
        // Allocated here, freed in deinit (or when opening fails): libmpcdec keeps this address.
        self.reader = .allocate(capacity: 1)
        self.reader.initialize(
            to: mpc_reader(
                read: mpcRead, seek: mpcSeek, tell: mpcTell, get_size: mpcGetSize, canseek: mpcCanSeek,
                // Unmanaged: the demuxer keeps the source alive for as long as libmpcdec may call back.
                data: Unmanaged.passUnretained(self.source).toOpaque()))
        guard let demux = mpc_demux_init(self.reader) else {
            self.reader.deallocate()
            throw .notMusepack
        }
        var raw = mpc_streaminfo()
        mpc_demux_get_info(demux, &raw)
        let channels = Int(raw.channels)
        guard channels == 1 || channels == 2 else {
            mpc_demux_exit(demux)
            self.reader.deallocate()
            throw .unsupportedChannels(channels)
        }
        self.demux = demux
        self.info = MPCStreamInfo(
            sampleRate: Int(raw.sample_freq), channels: channels, streamVersion: Int(raw.stream_version),
            averageBitRate: raw.average_bitrate, titleGain: raw.gain_title, albumGain: raw.gain_album,
            titlePeak: raw.peak_title, albumPeak: raw.peak_album, samples: raw.samples,
            beginSilence: raw.beg_silence, lengthSeconds: mpc_streaminfo_get_length(&raw),
            lengthSamples: mpc_streaminfo_get_length_samples(&raw))
        // Allocated once (freed in deinit) so that decoding never allocates.
        self.samples = .allocate(capacity: Int(MPC_DECODER_BUFFER_LENGTH))
        self.samples.initialize(repeating: 0)
    }

    deinit {
        mpc_demux_exit(self.demux)
        self.reader.deallocate()
        self.samples.deallocate()
    }

    /// Decodes the next frame into the frame buffer (`withSamples(_:)` reads it).
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: the frame, or `nil` at the end of the stream.
    /// - Throws: `MPCError.decodeFailed` when libmpcdec fails.
    public func decodeFrame() throws(MPCError) -> MPCFrame? {
        var frame = mpc_frame_info()
        frame.buffer = self.samples.baseAddress
        self.lastSampleCount = 0
        guard mpc_demux_decode(self.demux, &frame) == MPC_STATUS_OK else { throw .decodeFailed }
        if frame.bits == -1 { return nil }
        let count = Int(frame.samples) * self.info.channels
        // libmpcdec writes at most MPC_DECODER_BUFFER_LENGTH samples; a count beyond it is a decoder fault.
        guard count <= self.samples.count else { throw .decodeFailed }
        self.lastSampleCount = count
        return MPCFrame(samples: Int(frame.samples), bits: Int(frame.bits))
    }

    /// Calls `body` with the interleaved samples of the frame `decodeFrame()` decoded last (full scale ±1.0).
    ///
    /// Does not allocate.
    public func withSamples<Result>(_ body: (UnsafeBufferPointer<Float>) throws -> Result) rethrows -> Result {
        try body(UnsafeBufferPointer(rebasing: self.samples[0..<self.lastSampleCount]))
    }

    /// Moves to a sample (per channel) of the playable stream; sample-accurate.
    ///
    /// Does not allocate. Decoder thread.
    /// - Throws: `MPCError.seekFailed` when libmpcdec cannot seek there.
    public func seek(toSample sample: UInt64) throws(MPCError) {
        self.lastSampleCount = 0
        guard mpc_demux_seek_sample(self.demux, sample) == MPC_STATUS_OK else { throw .seekFailed(sample) }
    }
}

/// The input behind a demuxer: what libmpcdec's reader callbacks reach through `mpc_reader.data`.
///
/// libmpcdec seeks to offsets the header names (an SV8 seek table) even when a truncated file ends before them;
/// `mpd`'s file input accepts such a seek and then reads nothing, so the source does the same: it remembers the
/// offset past the end, reads nothing from there and reports it to `tell`.
private final class MPCInputSource {
    let input: any InputStream
    /// Where libmpcdec seeked past the end of the input, until its next seek.
    var pastEnd: UInt64?
    init(_ input: any InputStream) { self.input = input }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard self.pastEnd == nil else { return 0 }
        return (try? self.input.readFully(into: buffer)) ?? 0
    }

    func seek(to offset: UInt64) -> Bool {
        self.pastEnd = nil
        if let size = self.input.size, offset > size, self.input.isSeekable {
            guard (try? self.input.seek(to: size)) != nil else { return false }
            self.pastEnd = offset
            return true
        }
        return (try? self.input.seek(to: offset)) != nil
    }

    var offset: UInt64 { self.pastEnd ?? self.input.offset }
}

private func source(_ reader: UnsafeMutablePointer<mpc_reader>?) -> MPCInputSource? {
    guard let data = reader?.pointee.data else { return nil }
    // Unmanaged: the demuxer owns the source and outlives every callback libmpcdec makes.
    return Unmanaged<MPCInputSource>.fromOpaque(data).takeUnretainedValue()
}

/// Reads through the input; 0 at the end or on an error (as `mpd`'s `decoder_read`). Does not allocate.
private let mpcRead: @convention(c) (UnsafeMutablePointer<mpc_reader>?, UnsafeMutableRawPointer?, Int32) -> Int32 = {
    reader, buffer, size in
    guard let source = source(reader), let buffer, size > 0 else { return 0 }
    return Int32(source.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: Int(size))))
}

private let mpcSeek: @convention(c) (UnsafeMutablePointer<mpc_reader>?, Int32) -> mpc_bool_t = { reader, offset in
    guard let source = source(reader), offset >= 0 else { return 0 }
    return source.seek(to: UInt64(offset)) ? 1 : 0
}

private let mpcTell: @convention(c) (UnsafeMutablePointer<mpc_reader>?) -> Int32 = { reader in
    guard let source = source(reader) else { return -1 }
    return Int32(truncatingIfNeeded: source.offset)
}

private let mpcGetSize: @convention(c) (UnsafeMutablePointer<mpc_reader>?) -> Int32 = { reader in
    guard let size = source(reader)?.input.size else { return -1 }
    return Int32(truncatingIfNeeded: size)
}

private let mpcCanSeek: @convention(c) (UnsafeMutablePointer<mpc_reader>?) -> mpc_bool_t = { reader in
    source(reader)?.input.isSeekable == true ? 1 : 0
}
