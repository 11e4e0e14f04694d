// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Model
import Sndfile

/// Decodes a sound file with libsndfile into the sample format `mpd`'s sndfile plugin uses: 16-bit for 8- and
/// 16-bit files (`sf_readf_short`), float for float and double files (`sf_readf_float`), 32-bit for the
/// rest (`sf_readf_int`).
///
/// Confined to the decoding thread. `decode(into:)` and `seek(toFrame:)` do not allocate.
public final class SndfileDecoder: Decoder {
    /// `rate:16:channels`, `rate:f:channels` or `rate:32:channels`.
    public let format: AudioFormat
    /// The frame count libsndfile reports.
    public let totalFrames: UInt64?
    private let handle: SndfileHandle

    /// Opens the sound file `input` holds (the decoder keeps `input`).
    ///
    /// - Throws: `FormatError.notRecognized` when libsndfile does not recognise it (`mpd`'s plugin declines: the
    ///   next plugin is tried); `.unsupportedFormat` when its
    ///   rate or channel count is one `mpd` refuses (rate 0 or ≥ 2³⁰, no channels or more than 8).
    public init(input: any InputStream) throws(FormatError) {
        do {
            self.handle = try SndfileHandle(input: input)
        } catch {
            throw .notRecognized(path: input.uri)
        }
        guard let format = SndfileFormat.audioFormat(self.handle) else {
            throw .unsupportedFormat("\(self.handle.sampleRate) Hz, \(self.handle.channels) channels")
        }
        self.format = format
        self.totalFrames = UInt64(self.handle.frames)
    }

    /// Decodes whole frames into `buffer` (which must be aligned for the sample type, as the player's is).
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: frames written; 0 at the end, or where libsndfile cannot read on (as in `mpd`).
    /// - Throws: `FormatError.unsupportedFormat` for a misaligned buffer.
    public func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        let sampleSize = self.format.sampleFormat.bytesPerSample
        guard Int(bitPattern: base) % sampleSize == 0 else { throw .unsupportedFormat("misaligned buffer") }
        let samples = buffer.count / sampleSize
        // Unsafe binding: the player's buffer is raw bytes that now hold samples of this type (alignment checked).
        let frames: Int
        switch self.format.sampleFormat {
        case .s16:
            frames = self.handle.readFrames(
                into: UnsafeMutableBufferPointer(
                    start: base.bindMemory(to: Int16.self, capacity: samples), count: samples))
        case .float:
            frames = self.handle.readFrames(
                into: UnsafeMutableBufferPointer(
                    start: base.bindMemory(to: Float.self, capacity: samples), count: samples))
        default:
            frames = self.handle.readFrames(
                into: UnsafeMutableBufferPointer(
                    start: base.bindMemory(to: Int32.self, capacity: samples), count: samples))
        }
        // Like mpd, a short or failed read ends the song: no error is reported.
        return frames
    }

    /// Seeks to `frame` (sample-accurate, `sf_seek`).
    ///
    /// Does not allocate. Decoder thread.
    /// - Throws: `FormatError.decoder` when the file cannot seek or `frame` is past the end.
    @discardableResult
    public func seek(toFrame frame: UInt64) throws(FormatError) -> UInt64 {
        guard self.handle.isSeekable else { throw .decoder("sf_seek: not seekable") }
        do {
            return UInt64(try self.handle.seek(toFrame: Int64(clamping: frame)))
        } catch {
            throw .decoder("\(error)")
        }
    }
}
