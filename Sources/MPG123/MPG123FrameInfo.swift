// SPDX-License-Identifier: GPL-3.0-or-later

/// The MPEG audio version of a stream.
public enum MPEGVersion: Sendable, Hashable {
    /// MPEG-1.
    case mpeg1
    /// MPEG-2 (LSF).
    case mpeg2
    /// MPEG-2.5.
    case mpeg25
}

/// How a stream's bit rate varies.
public enum BitRateMode: Sendable, Hashable {
    /// Constant bit rate.
    case constant
    /// Variable bit rate.
    case variable
    /// Average bit rate.
    case average
}

/// The header facts of the current MPEG frame (libmpg123's `mpg123_frameinfo`).
public struct MPG123FrameInfo: Sendable, Hashable {
    /// MPEG version.
    public var version: MPEGVersion
    /// Layer: 1, 2 or 3.
    public var layer: Int
    /// Sample rate in Hz.
    public var sampleRate: Int
    /// Channels: 1 or 2.
    public var channels: Int
    /// Size of the frame in bytes, header included.
    public var frameSize: Int
    /// Bit rate in kbit/s (0 for free format).
    public var bitRate: Int
    /// Bit rate mode.
    public var bitRateMode: BitRateMode
    /// Target bit rate of an ABR stream in kbit/s.
    public var averageBitRate: Int

    /// Creates a value; the wrapper fills it from libmpg123.
    public init(
        version: MPEGVersion, layer: Int, sampleRate: Int, channels: Int, frameSize: Int, bitRate: Int,
        bitRateMode: BitRateMode, averageBitRate: Int
    ) {
        self.version = version
        self.layer = layer
        self.sampleRate = sampleRate
        self.channels = channels
        self.frameSize = frameSize
        self.bitRate = bitRate
        self.bitRateMode = bitRateMode
        self.averageBitRate = averageBitRate
    }
}

/// The PCM format libmpg123 delivers.
public struct MPG123OutputFormat: Sendable, Hashable {
    /// Sample rate in Hz.
    public var sampleRate: Int
    /// Interleaved channels.
    public var channels: Int
    /// The sample encoding.
    public var encoding: MPG123Encoding

    /// Bytes in one PCM frame.
    public var frameSize: Int { self.channels * self.encoding.bytesPerSample }

    /// Creates a value.
    public init(sampleRate: Int, channels: Int, encoding: MPG123Encoding) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.encoding = encoding
    }
}

/// Output sample encodings the wrapper can ask libmpg123 for.
public enum MPG123Encoding: Sendable, Hashable {
    /// Signed 16-bit native-endian (`MPG123_ENC_SIGNED_16`), libmpg123's default.
    case signed16
    /// Signed 32-bit native-endian (`MPG123_ENC_SIGNED_32`).
    case signed32
    /// 32-bit float (`MPG123_ENC_FLOAT_32`).
    case float32
    /// Anything else libmpg123 reports (its raw `MPG123_ENC_*` value).
    case other(Int32)

    /// Bytes per sample.
    public var bytesPerSample: Int {
        switch self {
        case .signed16: 2
        case .signed32, .float32: 4
        case .other: 1
        }
    }
}

/// What libmpg123 read from a LAME/Xing/Info header, when `MPG123_GAPLESS` is on.
public struct MPG123EncoderInfo: Sendable, Hashable {
    /// Encoder delay in samples (`MPG123_ENC_DELAY`), `nil` when unknown.
    public var delay: Int?
    /// Encoder padding in samples (`MPG123_ENC_PADDING`), `nil` when unknown.
    public var padding: Int?

    /// Creates a value.
    public init(delay: Int?, padding: Int?) {
        self.delay = delay
        self.padding = padding
    }
}
