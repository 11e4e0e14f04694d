// SPDX-License-Identifier: GPL-3.0-or-later

import CWavPack
import Glibc
import Input

/// A failed libwavpack call: which function and libwavpack's message.
public struct WavPackError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The libwavpack function that failed (`WavpackOpenFileInputEx64`, `WavpackSeekSample64`).
    public let function: String
    /// libwavpack's text for it.
    public let message: String

    /// Creates an error; used by the wrapper and by tests.
    public init(function: String, message: String) {
        self.function = function
        self.message = message
    }

    /// `function: message`.
    public var description: String { "\(self.function): \(self.message)" }
}

/// One WavPack stream opened for decoding through libwavpack's stream reader over `InputStream`s; closes
/// itself.
///
/// Thread confinement: create it on any thread, then use it from one thread at a time. `unpack(into:)` and
/// `seek(toSample:)` do not allocate, so the decoder thread can call them per chunk.
public final class WavPackContext {
    /// How to open a stream (libwavpack's `OPEN_*` flags).
    public struct OpenFlags: OptionSet, Sendable, Hashable {
        /// The raw flag bits.
        public let rawValue: Int32
        /// Creates flags from raw bits.
        public init(rawValue: Int32) { self.rawValue = rawValue }
        /// `OPEN_NORMALIZE`: float samples scaled to ±1.0.
        public static let normalize = OpenFlags(rawValue: OPEN_NORMALIZE)
        /// `OPEN_DSD_NATIVE`: DSD audio as bytes of 8 one-bit samples (not decimated to PCM).
        public static let dsdNative = OpenFlags(rawValue: OPEN_DSD_NATIVE)
        /// `OPEN_STREAMING`: unpack blocks blindly, for streams that cannot seek.
        public static let streaming = OpenFlags(rawValue: OPEN_STREAMING)
    }

    /// Output frames per second (for DSD: bytes of 8 one-bit samples per second and channel).
    public let sampleRate: Int
    /// Channels delivered (`WavpackGetReducedChannels`).
    public let channels: Int
    /// Bytes per sample in the source: 1–4.
    public let bytesPerSample: Int
    /// Whether samples are 32-bit floats (their bits are delivered in the `Int32` words).
    public let isFloat: Bool
    /// Whether the audio is DSD (one byte of 8 one-bit samples per word, with `.dsdNative`).
    public let isDSD: Bool
    /// Whether the stream is hybrid and a correction stream was given and used (lossless decoding).
    public let usesCorrection: Bool
    /// The stream's length in samples per channel, `nil` when unknown.
    public let totalSamples: Int64?

    private let context: OpaquePointer
    /// The streams libwavpack reads through; retained here while libwavpack holds pointers to them.
    private let main: WavPackSource
    private let correction: WavPackSource?

    /// Opens the WavPack stream `input` holds from its current offset, with its correction stream if given
    /// (`OPEN_WVC`). The context keeps both.
    ///
    /// - Throws: `WavPackError` with libwavpack's message when it cannot open the stream.
    public init(input: any InputStream, correction: (any InputStream)? = nil, flags: OpenFlags = [])
        throws(WavPackError)
    {
        self.main = WavPackSource(input)
        self.correction = correction.map(WavPackSource.init)
        var openFlags = flags.rawValue
        if correction != nil { openFlags |= OPEN_WVC }
        var error = [CChar](repeating: 0, count: 128)
        // Unmanaged: libwavpack keeps plain pointers to the sources; `self.main`/`self.correction` keep them.
        let mainID = Unmanaged.passUnretained(self.main).toOpaque()
        let correctionID = self.correction.map { Unmanaged.passUnretained($0).toOpaque() }
        let opened = error.withUnsafeMutableBufferPointer { buffer in
            WavpackOpenFileInputEx64(streamReader, mainID, correctionID, buffer.baseAddress, openFlags, 0)
        }
        guard let opened else {
            let message = error.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            throw WavPackError(function: "WavpackOpenFileInputEx64", message: message)
        }
        self.context = opened
        self.sampleRate = Int(WavpackGetSampleRate(opened))
        self.channels = Int(WavpackGetReducedChannels(opened))
        self.bytesPerSample = Int(WavpackGetBytesPerSample(opened))
        let mode = WavpackGetMode(opened)
        self.isFloat = mode & MODE_FLOAT != 0
        self.isDSD = WavpackGetQualifyMode(opened) & QMODE_DSD_AUDIO != 0
        self.usesCorrection = mode & MODE_WVC != 0
        let samples = WavpackGetNumSamples64(opened)
        self.totalSamples = samples < 0 ? nil : samples
    }

    deinit { WavpackCloseFile(self.context) }

    /// Unpacks whole frames into `buffer`, one 32-bit word per sample (integers right-justified, floats
    /// as their bits, DSD as one byte per word).
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: frames unpacked; 0 at the end of the stream or when its data is broken.
    public func unpack(into buffer: UnsafeMutableBufferPointer<Int32>) -> Int {
        let frames = buffer.count / max(self.channels, 1)
        guard frames > 0, let base = buffer.baseAddress else { return 0 }
        return Int(WavpackUnpackSamples(self.context, base, UInt32(clamping: frames)))
    }

    /// The bit rate of the block decoded last, in bits per second.
    public func instantBitRate() -> Double { WavpackGetInstantBitrate(self.context) }

    /// Blocks whose checksum or data failed so far.
    public var errorCount: Int { Int(WavpackGetNumErrors(self.context)) }

    /// Moves to `sample` (per channel, sample-accurate).
    ///
    /// Does not allocate. Decoder thread.
    /// - Throws: `WavPackError` when libwavpack cannot seek there (the context is then unusable, as
    ///   libwavpack documents).
    public func seek(toSample sample: Int64) throws(WavPackError) {
        guard WavpackSeekSample64(self.context, sample) != 0 else {
            throw WavPackError(function: "WavpackSeekSample64", message: "cannot seek to sample \(sample)")
        }
    }
}

/// The input behind a context, with the one byte libwavpack may push back.
private final class WavPackSource {
    let input: any InputStream
    var pushedBack: Int32 = -1
    /// Where libwavpack moved past the end of the stream, which `mpd`'s file input allows: reads there return
    /// nothing. `nil` while inside the stream.
    var beyondEnd: Int64?
    init(_ input: any InputStream) { self.input = input }

    /// The offset of the next byte libwavpack reads (before a pushed-back one).
    var position: Int64 { (self.beyondEnd ?? Int64(self.input.offset)) - (self.pushedBack >= 0 ? 1 : 0) }
}

private func wavPackSource(_ id: UnsafeMutableRawPointer?) -> WavPackSource? {
    guard let id else { return nil }
    return Unmanaged<WavPackSource>.fromOpaque(id).takeUnretainedValue()
}

/// Full reads (libwavpack takes a short read for the end), after the pushed-back byte; does not allocate.
private let readBytes: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, Int32) -> Int32 = {
    id, data, count in
    guard let source = wavPackSource(id), let data, count > 0 else { return 0 }
    if source.beyondEnd != nil { return 0 }
    var done = 0
    if source.pushedBack >= 0 {
        data.storeBytes(of: UInt8(truncatingIfNeeded: source.pushedBack), as: UInt8.self)
        source.pushedBack = -1
        done = 1
    }
    let rest = UnsafeMutableRawBufferPointer(start: data + done, count: Int(count) - done)
    let read = (try? source.input.readFully(into: rest)) ?? 0
    return Int32(done + read)
}

/// The reading position (minus a pushed-back byte, as libwavpack expects of `ftell` after `ungetc`).
private let getPosition: @convention(c) (UnsafeMutableRawPointer?) -> Int64 = { id in
    wavPackSource(id)?.position ?? -1
}

private func moveTo(_ source: WavPackSource, _ target: Int64) -> Int32 {
    guard target >= 0 else { return -1 }
    source.pushedBack = -1
    if target == source.beyondEnd ?? Int64(source.input.offset) { return 0 }
    guard source.input.isSeekable else { return -1 }
    if let size = source.input.size, UInt64(target) > size {
        source.beyondEnd = target
        return 0
    }
    do {
        try source.input.seek(to: UInt64(target))
    } catch {
        return -1
    }
    source.beyondEnd = nil
    return 0
}

private let setPositionAbsolute: @convention(c) (UnsafeMutableRawPointer?, Int64) -> Int32 = { id, position in
    guard let source = wavPackSource(id) else { return -1 }
    return moveTo(source, position)
}

private let setPositionRelative: @convention(c) (UnsafeMutableRawPointer?, Int64, Int32) -> Int32 = {
    id, delta, whence in
    guard let source = wavPackSource(id) else { return -1 }
    let base: Int64
    switch whence {
    case SEEK_SET: base = 0
    case SEEK_CUR: base = source.position
    case SEEK_END:
        guard let size = source.input.size else { return -1 }
        base = Int64(size)
    default: return -1
    }
    let (target, overflow) = base.addingReportingOverflow(delta)
    return overflow ? -1 : moveTo(source, target)
}

/// `ungetc` of one byte; a second push-back before a read fails (EOF).
private let pushBackByte: @convention(c) (UnsafeMutableRawPointer?, Int32) -> Int32 = { id, byte in
    guard let source = wavPackSource(id), source.pushedBack < 0, byte >= 0 else { return EOF }
    source.pushedBack = byte & 0xFF
    return byte
}

/// The stream's length, 0 when unknown (as `mpd` answers).
private let getLength: @convention(c) (UnsafeMutableRawPointer?) -> Int64 = { id in
    guard let size = wavPackSource(id)?.input.size, size <= UInt64(Int64.max) else { return 0 }
    return Int64(size)
}

private let canSeek: @convention(c) (UnsafeMutableRawPointer?) -> Int32 = { id in
    wavPackSource(id)?.input.isSeekable == true ? 1 : 0
}

/// The reader libwavpack calls; no writing, truncating or closing (the contexts own their streams). Allocated
/// once and never freed, since every context keeps the pointer.
/// nonisolated(unsafe): libwavpack wants a mutable pointer, but nothing writes through it after this.
nonisolated(unsafe) private let streamReader: UnsafeMutablePointer<WavpackStreamReader64> = {
    let reader = UnsafeMutablePointer<WavpackStreamReader64>.allocate(capacity: 1)
    reader.initialize(
        to: WavpackStreamReader64(
            read_bytes: readBytes, write_bytes: nil, get_pos: getPosition, set_pos_abs: setPositionAbsolute,
            set_pos_rel: setPositionRelative, push_back_byte: pushBackByte, get_length: getLength,
            can_seek: canSeek, truncate_here: nil, close: nil))
    return reader
}()
