// SPDX-License-Identifier: GPL-3.0-or-later

import FAAD
import Glibc
import Input
import Model

/// Decodes raw AAC with libfaad as `mpd`'s faad plugin does: ADTS frames (found by `ADTSScanner`) to signed
/// 16-bit, 5.1 mixed down to stereo, mono as stereo; the song ends at the first frame libfaad rejects or whose
/// channel count or rate changes. Cannot seek.
///
/// Confined to the decoding thread. `decode(into:)` does not allocate (the input buffer is allocated here).
public final class FAADStreamDecoder: Decoder {
    /// `rate:16:channels`.
    public let format: AudioFormat
    /// The duration mpd's scan finds, in frames of `format` (`nil` when unknown).
    public let totalFrames: UInt64?
    /// `false`: mpd's faad plugin tells its player the stream cannot seek.
    public var isSeekable: Bool { false }
    /// The rate of the frame decoded last, in kbit/s (its bytes × 8 × channels × rate / samples / 1000, rounded).
    public private(set) var bitRate = 0
    private let buffer: FAADInputBuffer
    private let decoder: FAADDecoder
    /// Samples of the last frame delivered, and how many it has (all channels).
    private var pendingOffset = 0
    private var pendingCount = 0
    private var ended = false

    /// Opens the stream `input` reads (kept by the decoder).
    ///
    /// - Throws: `FormatError.notRecognized` when it has no ADTS frame (mpd then tries its next plugin),
    ///   `.decoder` when libfaad rejects it, `.unsupportedFormat` for a rate or channel count mpd refuses.
    public init(input: any InputStream) throws(FormatError) {
        let buffer = FAADInputBuffer(input: input, capacity: ADTSScanner.bufferCapacity)
        let milliseconds = ADTSScanner.songDuration(buffer)
        guard ADTSScanner.findFrame(buffer) > 0 else { throw .notRecognized(path: input.uri) }
        let decoder: FAADDecoder
        let stream: FAADStreamFormat
        do {
            decoder = try FAADDecoder(configuration: .mpd)
            stream = try decoder.initialize(buffer.bytes)
        } catch {
            throw .decoder("\(error)")
        }
        guard FAADFormat.isValid(stream) else {
            throw .unsupportedFormat("\(stream.sampleRate) Hz, \(stream.channels) channels")
        }
        buffer.consume(stream.consumed)
        self.buffer = buffer
        self.decoder = decoder
        self.format = AudioFormat(sampleRate: stream.sampleRate, sampleFormat: .s16, channels: stream.channels)
        self.totalFrames = milliseconds.map { $0 * UInt64(stream.sampleRate) / 1000 }
    }

    /// Decodes into `buffer` (whole frames of `format.frameSize` bytes).
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: frames written; 0 at the end (also after a frame libfaad rejects, where mpd stops).
    public func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        let channels = self.format.channels
        let capacity = buffer.count / (2 * channels) * channels
        guard capacity > 0 else { return 0 }
        while self.pendingOffset >= self.pendingCount {
            guard !self.ended, ADTSScanner.findFrame(self.buffer) > 0 else { return 0 }
            let info = self.decoder.decode(self.buffer.bytes)
            // A frame that consumes nothing would be found again forever (mpd would spin on it): the end too.
            guard info.error == 0, info.channels == channels, info.sampleRate == self.format.sampleRate,
                info.bytesConsumed > 0
            else {
                self.ended = true
                return 0
            }
            self.buffer.consume(info.bytesConsumed)
            if info.samples > 0 {
                let bits = Double(info.bytesConsumed) * 8.0 * Double(info.channels) * Double(self.format.sampleRate)
                self.bitRate = Int(lround(bits / Double(info.samples) / 1000))
            }
            self.pendingOffset = 0
            self.pendingCount = info.samples - info.samples % channels
        }
        let count = min(capacity, self.pendingCount - self.pendingOffset)
        let offset = self.pendingOffset
        self.decoder.withOutput { output in
            let bytes = UnsafeRawBufferPointer(rebasing: output[(offset * 2)..<((offset + count) * 2)])
            if let source = bytes.baseAddress, let target = buffer.baseAddress {
                target.copyMemory(from: source, byteCount: bytes.count)
            }
        }
        self.pendingOffset += count
        return count / channels
    }

    /// mpd's faad plugin cannot seek.
    ///
    /// - Throws: always `FormatError.decoder("Not seekable")`.
    @discardableResult
    public func seek(toFrame frame: UInt64) throws(FormatError) -> UInt64 {
        throw .decoder("Not seekable")
    }
}
