// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Model
import WavPack

/// Decodes WavPack with libwavpack into the format `mpd`'s wavpack plugin delivers: 8- and 16-bit integers
/// narrowed from libwavpack's 32-bit words, 24-bit in 32-bit words and 32-bit integers as they come, floats
/// normalised to ±1.0, DSD as bytes.
///
/// Confined to the decoding thread. `decode(into:)` and `seek(toFrame:)` do not allocate (the unpacking
/// buffer for narrow formats is allocated once, at open).
public final class WavPackDecoder: Decoder {
    /// The format `decode(into:)` writes.
    public let format: AudioFormat
    /// The stream's length in frames, when known.
    public let totalFrames: UInt64?
    /// The bit rate of the block decoded last, in kbit/s (libwavpack's instant bit rate, rounded).
    public private(set) var bitRate = 0
    private let context: WavPackContext
    /// libwavpack's 32-bit words for formats narrower than 32 bits, converted into the caller's buffer.
    private let scratch: UnsafeMutableBufferPointer<Int32>
    /// Samples unpacked at a time for narrow formats: a player chunk's worth of 8-bit samples.
    private static let scratchSamples = 8192
    /// Set after a failed seek: libwavpack's context is then unusable.
    private var broken = false
    /// Whether the streams can seek (else they are unpacked in streaming mode and seeks are refused).
    private let canSeek: Bool

    /// Opens the stream `input` holds, with its correction stream if given (the decoder keeps both).
    ///
    /// - Throws: `FormatError.decoder` when libwavpack cannot open it; `.unsupportedFormat` when `mpd`
    ///   refuses its format.
    public init(input: any InputStream, correction: (any InputStream)? = nil) throws(FormatError) {
        var flags: WavPackContext.OpenFlags = [.dsdNative, .normalize]
        self.canSeek = input.isSeekable && (correction?.isSeekable ?? true)
        if !self.canSeek { flags.insert(.streaming) }
        do {
            self.context = try WavPackContext(input: input, correction: correction, flags: flags)
        } catch {
            throw .decoder("\(error)")
        }
        guard let format = WavPackFormat.audioFormat(self.context) else {
            throw .unsupportedFormat(
                "\(self.context.sampleRate) Hz, \(self.context.channels) channels, \(self.context.bytesPerSample) bytes"
            )
        }
        self.format = format
        self.totalFrames = self.context.totalSamples.map { UInt64($0) }
        // Unsafe buffer: allocated once here so that `decode(into:)` never allocates; freed in `deinit`.
        self.scratch = .allocate(capacity: format.sampleFormat.bytesPerSample < 4 ? Self.scratchSamples : 0)
    }

    deinit { self.scratch.deallocate() }

    /// Decodes whole frames into `buffer` (aligned for the sample type, as the player's is).
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: frames written; 0 at the end (or where the data is broken, as `mpd` stops there).
    /// - Throws: `FormatError.decoder` after a failed seek; `.unsupportedFormat` for a misaligned buffer.
    public func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        if self.broken { throw .decoder("WavPack stream unusable after a failed seek") }
        guard let base = buffer.baseAddress else { return 0 }
        let sampleSize = self.format.sampleFormat.bytesPerSample
        guard Int(bitPattern: base) % sampleSize == 0 else { throw .unsupportedFormat("misaligned buffer") }
        let channels = self.format.channels
        // Unsafe binding: the player's buffer is raw bytes that now hold samples of this type (alignment checked).
        let frames: Int
        if sampleSize == 4 {
            let samples = buffer.count / 4
            frames = self.context.unpack(
                into: UnsafeMutableBufferPointer(
                    start: base.bindMemory(to: Int32.self, capacity: samples), count: samples))
        } else {
            let fit = min(buffer.count / (sampleSize * channels), self.scratch.count / channels)
            frames = self.context.unpack(into: UnsafeMutableBufferPointer(rebasing: self.scratch[..<(fit * channels)]))
            let samples = frames * channels
            switch self.format.sampleFormat {
            case .s16:
                let output = base.bindMemory(to: Int16.self, capacity: samples)
                for index in 0..<samples { output[index] = Int16(truncatingIfNeeded: self.scratch[index]) }
            default:
                let output = base.bindMemory(to: UInt8.self, capacity: samples)
                for index in 0..<samples { output[index] = UInt8(truncatingIfNeeded: self.scratch[index]) }
            }
        }
        if frames > 0 { self.bitRate = Int((self.context.instantBitRate() / 1000).rounded()) }
        return frames
    }

    /// Seeks to `frame` (sample-accurate).
    ///
    /// Does not allocate. Decoder thread.
    /// - Throws: `FormatError.decoder` when the stream cannot seek, or libwavpack fails to (then every later
    ///   call fails, as `mpd` stops decoding).
    @discardableResult
    public func seek(toFrame frame: UInt64) throws(FormatError) -> UInt64 {
        if self.broken { throw .decoder("WavPack stream unusable after a failed seek") }
        // As mpd: a stream that cannot seek refuses the seek and plays on.
        guard self.canSeek else { throw .decoder("WavPack stream cannot seek") }
        do {
            try self.context.seek(toSample: Int64(clamping: frame))
        } catch {
            self.broken = true
            throw .decoder("\(error)")
        }
        return frame
    }
}
