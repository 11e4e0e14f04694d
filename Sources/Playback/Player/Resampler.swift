// SPDX-License-Identifier: GPL-3.0-or-later

import Samplerate
import Soxr

/// The resampler the outputs use when a song's rate differs from the device's, as `mpd`'s `resampler` block
/// picks it: libsamplerate (Debian's `mpd` default, `Fastest Sinc Interpolator`) or libsoxr with a recipe.
public enum Resampler: Sendable, Hashable {
    /// libsoxr with one of its recipes (`plugin "soxr"`).
    case soxr(SoxrResampler.Quality)
    /// libsamplerate with one of its converters (`plugin "libsamplerate"`).
    case libsamplerate(SamplerateResampler.Converter)

    /// What Debian's `mpd` 0.23.12 resamples with when nothing is configured.
    public static let standard = Resampler.libsamplerate(.fastestSinc)

    /// A converter for one stream. Allocates; output thread, when a stream opens.
    ///
    /// - Throws: the library's refusal, as its message.
    func makeConverter(inputRate: Int, outputRate: Int, channels: Int) throws(OutputError) -> any PCMRateConverter {
        switch self {
        case .soxr(let quality):
            do throws(SoxrError) {
                return try SoxrResampler(
                    inputRate: inputRate, outputRate: outputRate, channels: channels, quality: quality)
            } catch {
                throw OutputError("soxr initialization has failed: \(error.message)")
            }
        case .libsamplerate(let converter):
            do throws(SamplerateError) {
                return try SamplerateResampler(
                    inputRate: inputRate, outputRate: outputRate, channels: channels, converter: converter)
            } catch {
                throw OutputError(error.message)
            }
        }
    }
}

/// One stream's rate converter over interleaved float frames, as the output's PCM converter drives it. Owned by
/// one output thread; no call allocates once the first `convert` has run.
protocol PCMRateConverter: AnyObject {
    /// The most frames `convert` may return for `frames` frames in.
    func maxOutputFrames(forInput frames: Int) -> Int
    /// Resamples `frames` frames into `output` (room for `capacity`); the frames written, none on failure (which
    /// would be a library bug: its arguments were checked at creation).
    func convert(_ input: UnsafePointer<Float>, frames: Int, into output: UnsafeMutablePointer<Float>, capacity: Int)
        -> Int
    /// The tail the converter holds at the end of a stream, written into `output`; the frames written.
    func flushTail(into output: UnsafeMutablePointer<Float>, capacity: Int) -> Int
    /// Forgets the signal so far.
    func reset()
}

extension SoxrResampler: PCMRateConverter {
    /// Takes at most what `mpd`'s soxr resampler asks libsoxr for per call: the input's frames times the rate
    /// ratio (in `float`), truncated, plus one; the rest stays in libsoxr until the next call. Without a flush
    /// (`audio_output_format`'s resampling in the decoder) that decides where the song ends.
    func convert(_ input: UnsafePointer<Float>, frames: Int, into output: UnsafeMutablePointer<Float>, capacity: Int)
        -> Int
    {
        let ratio = Float(self.outputRate) / Float(self.inputRate)
        let wanted = Int(Float(frames) * ratio) + 1
        return (try? self.process(input, frames: frames, into: output, capacity: min(capacity, wanted))) ?? 0
    }

    /// libsoxr's filter tail, as `mpd`'s soxr resampler flushes it.
    func flushTail(into output: UnsafeMutablePointer<Float>, capacity: Int) -> Int {
        (try? self.flush(into: output, capacity: capacity)) ?? 0
    }
}

extension SamplerateResampler: PCMRateConverter {
    func convert(_ input: UnsafePointer<Float>, frames: Int, into output: UnsafeMutablePointer<Float>, capacity: Int)
        -> Int
    {
        (try? self.process(input, frames: frames, into: output, capacity: capacity)) ?? 0
    }

    /// Nothing: `mpd`'s libsamplerate resampler never ends the input, so its tail is not played.
    func flushTail(into output: UnsafeMutablePointer<Float>, capacity: Int) -> Int { 0 }
}
