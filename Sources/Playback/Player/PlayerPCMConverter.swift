// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Model

/// Converts chunks from the decoder's format to the device's (sample format, channel count, and sample rate
/// through the configured ``Resampler``) and scales them by a gain ramp (ReplayGain × software volume), on the output thread.
///
/// In `mpd`'s `PcmConvert` order: the rate first, in the song's channels (the resamplers take and give floats),
/// then the sample format, then the channels, in the device's sample format and with `mpd`'s rules for it.
///
/// Its scratch buffers and resampler are made by `configure` (when a stream opens), never per chunk. Identical
/// formats at unity gain are copied byte for byte. DSD goes to a device that takes DSD as it is, and to any
/// other through `DSDToPCM` (PCM at the DSD format's `sampleRate`, bits per second / 8), as `mpd` converts it;
/// like `mpd`'s, the gain ramp does not apply to DSD (its volume and ReplayGain filters leave DSD alone).
///
/// The order of an output's stages is `mpd`'s (its output's chain): ReplayGain, the filter chain (`normalize`,
/// user filters), the software volume, then this conversion to the device's format (the output's `format`,
/// including its resampling). `audio_output_format` comes before all of them, on the decoder's side
/// (`PlayerDecoderConversion`, which uses this converter without gain or filters).
/// Not thread-safe: owned by one output thread (or the decoder thread, for `PlayerDecoderConversion`).
struct PlayerPCMConverter: ~Copyable {
    private(set) var input = AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2)
    private(set) var output = AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2)
    private var maxFrames = 0
    private var mixed: UnsafeMutablePointer<Float>
    /// The song fading in, while cross-fading.
    private var otherMixed: UnsafeMutablePointer<Float>
    /// Rate conversion, when the device runs at another rate than the decoder.
    private var resampler: (any PCMRateConverter)?
    /// The resampler's output (in the input's channels) and its room in frames.
    private var resampled: UnsafeMutablePointer<Float>
    private var resampledCapacity = 0
    /// The resampler's room in samples.
    private var resampledSamples = 0
    /// The converted PCM of the last chunk.
    private(set) var converted: UnsafeMutableRawBufferPointer
    /// DSD to PCM, when the input is DSD and the output is not.
    private let dsd = DSDToPCM()
    /// A chunk scaled in its own format by `mpd`'s volume code (ReplayGain, then the software volume).
    private var volumed: UnsafeMutableRawBufferPointer
    private var replayGainVolume = PCMVolume()
    private var softwareVolume = PCMVolume()
    /// `mpd`'s dither for 24- and 32-bit samples narrowed to 16 bits (its format converter's), from the stream's
    /// open on.
    private var dither = PCMDither()
    /// 16-bit input goes through `mpd`'s volume stages as 24-bit (its ReplayGain filter's `allow_convert`).
    private var widening16To24 = false
    /// The output's filter chain (`normalize`, `route`), run after ReplayGain and before the software volume and
    /// the conversion to the device's format, as `mpd`'s; empty without one. DSD goes through it too: a `route`
    /// moves its bytes, a `normalize` makes it PCM first (24 bits at the DSD rate, then 16). With one, `input` is
    /// the chain's output format and `decoded` the chunks' format.
    private var filters: [FilterStage] = []
    /// The chunks' format when `filters` is not empty.
    private var decoded = AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2)
    /// The second scratch buffer of the filter chain (a route filter writes to the other one).
    private var filtered: UnsafeMutableRawBufferPointer
    /// The frames in one of `mpd`'s chunks of the decoded format: what its compressor takes at a time.
    private var chunkFrames = 1
    /// The most frames the resampler takes per call: `chunkFrames` on an output, everything on the decoder's side.
    private var resamplerPiece = Int.max
    /// A software mixer follows the chain: it makes 16-bit samples 24-bit (`mpd`'s volume filter's conversion).
    private var softwareVolumeWidens = false

    init() {
        self.mixed = .allocate(capacity: 1)
        self.otherMixed = .allocate(capacity: 1)
        self.resampled = .allocate(capacity: 1)
        self.converted = .allocate(byteCount: 1, alignment: 16)
        self.volumed = .allocate(byteCount: 1, alignment: 16)
        self.filtered = .allocate(byteCount: 1, alignment: 16)
    }

    deinit {
        self.mixed.deallocate()
        self.otherMixed.deallocate()
        self.resampled.deallocate()
        self.converted.deallocate()
        self.volumed.deallocate()
        self.filtered.deallocate()
    }

    /// Whether the sample rate changes on the way.
    var isResampling: Bool { self.resampler != nil }

    /// The most bytes one conversion returns (after `configure`).
    var capacityBytes: Int { self.converted.count }

    /// Prepares for chunks of at most `maxFrames` frames from `input` to `output`; with `widening16To24`, 16-bit
    /// input is scaled as 24-bit (as `mpd`'s ReplayGain filter does before a software mixer); a rate change
    /// resamples with `resampler`, one `mpd` chunk per call (`resamplingPerChunk`, as an output of `mpd`'s) or all
    /// that a call converts at once. Allocates.
    ///
    /// - Throws: `OutputError` when the resampler cannot convert between the two rates.
    mutating func configure(
        input decoded: AudioFormat, output: AudioFormat, maxFrames: Int, widening16To24: Bool = false,
        filters: [PCMFilter] = [], softwareVolume: Bool = false, resampler choice: Resampler = .standard,
        resamplingPerChunk: Bool = true
    ) throws(OutputError) {
        self.widening16To24 = widening16To24 && decoded.sampleFormat == .s16
        self.filters = []
        for filter in filters {
            switch filter {
            case .null: break
            case .route(let table): self.filters.append(.route(table))
            case .normalize: self.filters.append(.normalize(NormalizeStage()))
            }
        }
        if decoded.sampleFormat == .dsd, decoded.channels > DSDToPCM.maxChannels,
            filters.contains(where: { $0 == .normalize })
        {
            throw OutputError("cannot convert DSD of \(decoded.channels) channels to PCM")
        }
        self.decoded = decoded
        self.chunkFrames = max(1, PlayerChunkPipe.mpdChunkBytes / max(1, decoded.frameSize))
        self.resamplerPiece = resamplingPerChunk ? self.chunkFrames : Int.max
        let input =
            self.filters.isEmpty
            ? decoded
            : Self.filteredFormat(
                decoded, widening16To24: self.widening16To24, filters: filters, softwareVolume: softwareVolume)
        self.softwareVolumeWidens = softwareVolume
        self.input = input
        self.output = output
        self.resampler = nil
        self.dsd.reset()
        self.replayGainVolume.reset()
        self.softwareVolume.reset()
        self.dither = PCMDither()
        var outFrames = maxFrames
        if output.sampleFormat == .dsd, input.sampleFormat != .dsd || input.sampleRate != output.sampleRate {
            throw OutputError("cannot convert \(input) to \(output)")
        }
        if input.sampleFormat == .dsd, input.channels > DSDToPCM.maxChannels {
            throw OutputError("cannot convert DSD of \(input.channels) channels to PCM")
        }
        if input.sampleRate != output.sampleRate {
            do {
                // mpd resamples before it converts the channels: in the song's.
                let resampler = try choice.makeConverter(
                    inputRate: input.sampleRate, outputRate: output.sampleRate, channels: input.channels)
                // Room for the resampler's tail too (`flush`), which outlasts one chunk's output when the rate
                // falls a lot (DSD64's 352800 Hz PCM to 44100 Hz): 100 ms.
                outFrames = max(resampler.maxOutputFrames(forInput: maxFrames), output.sampleRate / 10)
                self.resampler = resampler
            }
        }
        let channels = max(8, input.channels, output.channels)
        if maxFrames > self.maxFrames || channels > 8 {
            let frames = max(maxFrames, self.maxFrames)
            self.mixed.deallocate()
            self.otherMixed.deallocate()
            self.mixed = .allocate(capacity: frames * channels)
            self.otherMixed = .allocate(capacity: frames * channels)
            self.maxFrames = frames
        }
        let bytes = max(self.maxFrames, outFrames) * channels * 4
        if bytes > self.converted.count {
            self.converted.deallocate()
            self.converted = .allocate(byteCount: bytes, alignment: 16)
        }
        let volumedBytes = self.maxFrames * channels * 4
        if volumedBytes > self.volumed.count {
            self.volumed.deallocate()
            self.volumed = .allocate(byteCount: volumedBytes, alignment: 16)
        }
        if !self.filters.isEmpty, volumedBytes > self.filtered.count {
            self.filtered.deallocate()
            self.filtered = .allocate(byteCount: volumedBytes, alignment: 16)
        }
        if self.resampler != nil {
            if outFrames * input.channels > self.resampledSamples {
                self.resampled.deallocate()
                self.resampled = .allocate(capacity: outFrames * input.channels)
                self.resampledSamples = outFrames * input.channels
            }
            self.resampledCapacity = self.resampledSamples / input.channels
        }
    }

    /// Converts `frames` frames of `source` scaled as `mpd` scales a chunk: its ReplayGain filter's volume, then
    /// its software mixer's (each in steps of 1/1024, see `PCMVolume`), in the chunk's own format, bit for bit;
    /// then the format conversion. DSD is not scaled.
    ///
    /// Audio path: no allocation, no lock.
    /// - Returns: the converted bytes (valid until the next call); with resampling, possibly none yet.
    mutating func convert(
        _ source: UnsafeRawBufferPointer, frames: Int, replayGainSteps: Int, softwareSteps: Int
    ) -> UnsafeRawBufferPointer {
        if !self.filters.isEmpty {
            return self.convertFiltered(
                source, frames: frames, replayGainSteps: replayGainSteps, softwareSteps: softwareSteps)
        }
        var format = self.input.sampleFormat
        guard format != .dsd, replayGainSteps != PCMVolume.unity || softwareSteps != PCMVolume.unity else {
            // Unity: a 16-bit sample widened to 24 bits is the sample << 8, which the plain conversion makes too.
            return self.convert(source, frames: frames, fromGain: 1, toGain: 1)
        }
        precondition(frames <= self.maxFrames)
        let samples = frames * self.input.channels
        let target = self.volumed.baseAddress!
        var data = source.baseAddress!
        if self.widening16To24 {
            PCMVolume.widen16To24(data, samples: samples, volume: replayGainSteps, into: target)
            data = UnsafeRawPointer(target)
            format = .s24
        } else if replayGainSteps != PCMVolume.unity {
            self.replayGainVolume.apply(data, format: format, samples: samples, volume: replayGainSteps, into: target)
            data = UnsafeRawPointer(target)
        }
        if softwareSteps != PCMVolume.unity {
            self.softwareVolume.apply(data, format: format, samples: samples, volume: softwareSteps, into: target)
        }
        let scaled = UnsafeRawBufferPointer(start: target, count: samples * format.bytesPerSample)
        guard format != self.input.sampleFormat else {
            return self.convert(scaled, frames: frames, fromGain: 1, toGain: 1)
        }
        // The scaled chunk is 24-bit now: convert it from there (the input format is restored right after).
        let decoded = self.input
        self.input.sampleFormat = format
        defer { self.input = decoded }
        return self.convert(scaled, frames: frames, fromGain: 1, toGain: 1)
    }

    /// Converts `frames` frames of `source`, scaling by a gain going linearly from `fromGain` to `toGain` (a
    /// gain change glides over one chunk; `mpd` steps, which no test can time anyway).
    ///
    /// Audio path: no allocation, no lock.
    /// - Returns: the converted bytes (valid until the next call); with resampling, possibly none yet.
    mutating func convert(
        _ source: UnsafeRawBufferPointer, frames: Int, fromGain: Float, toGain: Float
    ) -> UnsafeRawBufferPointer {
        precondition(frames <= self.maxFrames)
        let isDSD = self.input.sampleFormat == .dsd
        if self.resampler == nil, self.input.sampleFormat == self.output.sampleFormat,
            self.input.channels == self.output.channels, isDSD || (fromGain == 1 && toGain == 1)
        {
            let bytes = frames * self.input.frameSize
            self.converted.baseAddress!.copyMemory(from: source.baseAddress!, byteCount: bytes)
            return UnsafeRawBufferPointer(rebasing: self.converted[0..<bytes])
        }
        if isDSD, self.output.sampleFormat == .dsd {
            // Only the channels change: each output channel takes a byte of an input channel.
            let (inChannels, outChannels) = (self.input.channels, self.output.channels)
            for frame in 0..<frames {
                for channel in 0..<outChannels {
                    self.converted[frame * outChannels + channel] = source[frame * inChannels + channel % inChannels]
                }
            }
            return UnsafeRawBufferPointer(rebasing: self.converted[0..<(frames * outChannels)])
        }
        if isDSD {
            self.scale(source, frames: frames, fromGain: 1, toGain: 1, into: self.mixed)
            return self.finish(self.mixed, frames: frames)
        }
        if self.resampler == nil, fromGain == 1, toGain == 1, let bytes = self.convertIntegers(source, frames: frames) {
            return UnsafeRawBufferPointer(rebasing: self.converted[0..<bytes])
        }
        self.scale(source, frames: frames, fromGain: fromGain, toGain: toGain, into: self.mixed)
        return self.finish(self.mixed, frames: frames)
    }

    /// Integer samples converted as `mpd`'s `PcmConvert` converts them: the sample format first (its dither from 24
    /// and 32 bits to 16, shifts otherwise), then the channels in the new format (``remix(_:frames:format:)``).
    /// `nil` when a format is not 16, 24 or 32-bit integer (the float path). Returns the bytes written to
    /// `converted`.
    private mutating func convertIntegers(_ source: UnsafeRawBufferPointer, frames: Int) -> Int? {
        let (from, to) = (self.input.sampleFormat, self.output.sampleFormat)
        func isInteger(_ format: SampleFormat) -> Bool { format == .s16 || format == .s24 || format == .s32 }
        guard isInteger(from), isInteger(to) else { return nil }
        let target = self.converted
        for index in 0..<(frames * self.input.channels) {
            // 24-bit samples are 32-bit words, sign-extended by the decoders (mpd's S24_P32).
            let value =
                from == .s16
                ? Int32(source.loadUnaligned(fromByteOffset: index * 2, as: Int16.self))
                : source.loadUnaligned(fromByteOffset: index * 4, as: Int32.self)
            switch (from, to) {
            case (.s16, .s24), (.s24, .s32):
                target.storeBytes(of: value << 8, toByteOffset: index * 4, as: Int32.self)
            case (.s16, .s32):
                target.storeBytes(of: value << 16, toByteOffset: index * 4, as: Int32.self)
            case (.s32, .s24):
                target.storeBytes(of: value >> 8, toByteOffset: index * 4, as: Int32.self)
            case (.s24, .s16), (.s32, .s16):
                let (bits, scale) = from == .s24 ? (24, 8) : (32, 16)
                let narrowed = Int16(truncatingIfNeeded: self.dither.shift(Int64(value), bits: bits, by: scale))
                target.storeBytes(of: narrowed, toByteOffset: index * 2, as: Int16.self)
            case (.s16, _):
                target.storeBytes(of: Int16(truncatingIfNeeded: value), toByteOffset: index * 2, as: Int16.self)
            default:
                target.storeBytes(of: value, toByteOffset: index * 4, as: Int32.self)
            }
        }
        return self.remix(target.baseAddress!, frames: frames, format: to)
    }

    /// Changes the channels of `frames` frames of `format` samples in `buffer` (the input's channels in, the
    /// output's out, in place) as `mpd`'s `PcmChannels` does in that format: mono copied to every channel, stereo
    /// to surround on the front pair with the rest silent, anything else averaged into every channel (integer
    /// sums divided with truncation towards zero; floats divided in float). Returns the bytes of the result.
    private func remix(_ buffer: UnsafeMutableRawPointer, frames: Int, format: SampleFormat) -> Int {
        let (from, to) = (self.input.channels, self.output.channels)
        switch format {
        case .s8, .dsd: Self.remix(buffer.assumingMemoryBound(to: Int8.self), frames: frames, from: from, to: to)
        case .s16: Self.remix(buffer.assumingMemoryBound(to: Int16.self), frames: frames, from: from, to: to)
        case .s24, .s32: Self.remix(buffer.assumingMemoryBound(to: Int32.self), frames: frames, from: from, to: to)
        case .float: Self.remix(buffer.assumingMemoryBound(to: Float.self), frames: frames, from: from, to: to)
        }
        return frames * to * format.bytesPerSample
    }

    /// `remix(_:frames:format:)` for one sample type: frames in order when they shrink, from the last when they grow,
    /// so no frame is overwritten before it is read.
    private static func remix<Sample: RemixedSample>(
        _ samples: UnsafeMutablePointer<Sample>, frames: Int, from: Int, to: Int
    ) {
        guard from != to else { return }
        if to < from {
            for frame in 0..<frames {
                let value = Sample.average(samples + frame * from, count: from)
                for channel in 0..<to { samples[frame * to + channel] = value }
            }
            return
        }
        for frame in stride(from: frames - 1, through: 0, by: -1) {
            let input = samples + frame * from
            let output = samples + frame * to
            if from == 2 {
                let (left, right) = (input[0], input[1])
                for channel in 2..<to { output[channel] = .zero }
                output[0] = left
                output[1] = right
            } else {
                let value = Sample.average(input, count: from)
                for channel in 0..<to { output[channel] = value }
            }
        }
    }

    /// Resamples (when needed) `frames` frames of float samples in the input's channels, encodes them in the
    /// output's sample format, then changes the channels: `mpd`'s order.
    private mutating func finish(_ floats: UnsafeMutablePointer<Float>, frames: Int) -> UnsafeRawBufferPointer {
        var source = floats
        var count = frames
        if let resampler = self.resampler {
            // One call per `mpd` chunk, as `mpd`'s output filters a chunk at a time: what libsoxr gives per call
            // is capped by the call's input (see `SoxrResampler.convert`).
            // A failure here would be a library bug (its arguments were checked at creation): play silence.
            let channels = self.input.channels
            count = 0
            var done = 0
            while done < frames {
                let piece = min(frames - done, self.resamplerPiece)
                count += resampler.convert(
                    floats + done * channels, frames: piece, into: self.resampled + count * channels,
                    capacity: self.resampledCapacity - count)
                done += piece
            }
            source = self.resampled
        }
        return self.encode(source, frames: count, truncating: self.convertsFromFloat)
    }

    /// Encodes `frames` frames of float samples in the input's channels in the output's sample format, then
    /// changes the channels in that format.
    private func encode(_ floats: UnsafeMutablePointer<Float>, frames: Int, truncating: Bool)
        -> UnsafeRawBufferPointer
    {
        _ = Self.encode(
            floats, count: frames * self.input.channels, format: self.output.sampleFormat, truncating: truncating,
            into: self.converted)
        let bytes = self.remix(self.converted.baseAddress!, frames: frames, format: self.output.sampleFormat)
        return UnsafeRawBufferPointer(rebasing: self.converted[0..<bytes])
    }

    /// Whether `mpd` would make the device's integer samples from float ones, which it truncates: float or DSD
    /// songs, and any resampled song (its resamplers work in float). Otherwise `mpd` narrows integer samples
    /// with its dither, whose mean the rounding here follows.
    private var convertsFromFloat: Bool {
        self.resampler != nil || self.input.sampleFormat == .float || self.input.sampleFormat == .dsd
    }

    /// The resampler's tail at the end of a stream (nothing when not resampling); after it, the resampler
    /// starts afresh.
    mutating func flush() -> UnsafeRawBufferPointer {
        guard let resampler = self.resampler else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        let count = resampler.flushTail(into: self.resampled, capacity: self.resampledCapacity)
        resampler.reset()
        return self.encode(self.resampled, frames: count, truncating: true)
    }

    /// Drops what the resampler and the DSD filter hold (seek, skip); a compressor keeps its history, as
    /// `mpd`'s. Output thread.
    mutating func reset() {
        self.resampler?.reset()
        self.dsd.reset()
        for case .normalize(let normalize) in self.filters { normalize.resetConversion() }
        self.replayGainVolume.reset()
        self.softwareVolume.reset()
    }

    /// Cross-fades: mixes a chunk of the song fading out (`source`, scaled from `fromGain` to `toGain`) with one
    /// of the song fading in (`other`, scaled by `otherGain`), as `mpd` mixes a chunk with its `other`.
    ///
    /// `ratio` is the share of the old song left (1 at the fade's first chunk, falling towards 0): the new song
    /// gets the weight sin²(π/2 · (1 − ratio)) on a 1/1024 grid and the old one the rest; a negative `ratio`
    /// (MixRamp) adds both at full level. Where the chunks differ in length, the new song's decides: an old
    /// chunk's excess is dropped, the new chunk's excess is played as it is.
    ///
    /// Audio path: no allocation, no lock.
    /// - Returns: `otherFrames` converted frames (valid until the next call).
    mutating func convertMixing(
        _ source: UnsafeRawBufferPointer, frames: Int, fromGain: Float, toGain: Float,
        other: UnsafeRawBufferPointer, otherFrames: Int, otherGain: Float, ratio: Float, softwareSteps: Int = 1024
    ) -> UnsafeRawBufferPointer {
        precondition(frames <= self.maxFrames && otherFrames <= self.maxFrames)
        // `mpd` cannot mix DSD; the song fading in is played as it is (through the filter chain, if any).
        if !self.filters.isEmpty, self.decoded.sampleFormat == .dsd {
            return self.convertFiltered(
                other, frames: otherFrames, replayGainSteps: PCMVolume.unity, softwareSteps: softwareSteps)
        }
        if self.input.sampleFormat == .dsd {
            return self.convert(other, frames: otherFrames, fromGain: 1, toGain: 1)
        }
        var oldWeight: Float = 1
        var newWeight: Float = 1
        if ratio >= 0 {
            let sine = sin(Float.pi / 2 * (1 - ratio))
            let volume = min(1024, max(0, Int(lroundf(sine * sine * 1024))))
            newWeight = Float(volume) / 1024
            oldWeight = Float(1024 - volume) / 1024
        }
        // With a filter chain the chunks are mixed in their own format, as `mpd` mixes before its filters.
        let filtering = !self.filters.isEmpty
        let conversionInput = self.input
        if filtering { self.input = self.decoded }
        self.scale(other, frames: otherFrames, fromGain: otherGain, toGain: otherGain, into: self.otherMixed)
        self.scale(source, frames: frames, fromGain: fromGain, toGain: toGain, into: self.mixed)
        let channels = self.input.channels
        for index in 0..<(min(frames, otherFrames) * channels) {
            self.otherMixed[index] = self.otherMixed[index] * newWeight + self.mixed[index] * oldWeight
        }
        guard filtering else { return self.finish(self.otherMixed, frames: otherFrames) }
        self.input = conversionInput
        // Back to the samples the chain takes (24-bit when ReplayGain widens), then the chain.
        let format: SampleFormat = self.widening16To24 ? .s24 : self.decoded.sampleFormat
        _ = Self.encode(
            self.otherMixed, count: otherFrames * channels, format: format, truncating: false, into: self.volumed)
        return self.runFilters(
            UnsafeMutableRawPointer(self.volumed.baseAddress!), format: format, frames: otherFrames,
            softwareSteps: softwareSteps)
    }

    /// `convert(_:frames:replayGainSteps:softwareSteps:)` through the filter chain, in `mpd`'s order: the
    /// ReplayGain volume in the chunk's format (widened to 24 bits before a software mixer), each filter, the
    /// software volume in the format the chain gives, then the conversion to the device's format.
    private mutating func convertFiltered(
        _ source: UnsafeRawBufferPointer, frames: Int, replayGainSteps: Int, softwareSteps: Int
    ) -> UnsafeRawBufferPointer {
        precondition(frames <= self.maxFrames)
        let samples = frames * self.decoded.channels
        var format = self.decoded.sampleFormat
        let target = self.volumed.baseAddress!
        if self.widening16To24 {
            PCMVolume.widen16To24(source.baseAddress!, samples: samples, volume: replayGainSteps, into: target)
            format = .s24
        } else if replayGainSteps != PCMVolume.unity, format != .dsd {
            self.replayGainVolume.apply(
                source.baseAddress!, format: format, samples: samples, volume: replayGainSteps, into: target)
        } else {
            // The filters work in place: never on the pipe's chunk.
            target.copyMemory(from: source.baseAddress!, byteCount: samples * format.bytesPerSample)
        }
        return self.runFilters(target, format: format, frames: frames, softwareSteps: softwareSteps)
    }

    /// Runs the filter chain on `frames` frames of the decoded channels in `format` at `start` (one of the
    /// chain's buffers), applies the software volume, and converts to the device's format. The compressor takes
    /// `mpd`'s chunks whole: the decoder fills our chunks with whole ones (`PlayerChunkPipe.chunkFrames`).
    private mutating func runFilters(
        _ start: UnsafeMutableRawPointer, format: SampleFormat, frames: Int, softwareSteps: Int
    ) -> UnsafeRawBufferPointer {
        var data = start
        var format = format
        var channels = self.decoded.channels
        for stage in self.filters {
            switch stage {
            case .normalize(let normalize):
                let samples = frames * channels
                if format == .dsd {
                    // mpd's conversion in front of the filter: DSD to 24-bit PCM at the DSD rate, then 16 bits.
                    let other = self.otherScratch(than: data)
                    normalize.translateDSD(data, frames: frames, channels: channels, into: other)
                    data = other
                    format = .s24
                }
                normalize.narrow(data, format: format, samples: samples)
                format = .s16
                // One compressor block per `mpd` chunk: ours hold whole ones but at a song's end.
                var done = 0
                while done < frames {
                    let count = min(frames - done, self.chunkFrames)
                    normalize.compressor.process(
                        data.assumingMemoryBound(to: Int16.self) + done * channels, count: count * channels)
                    done += count
                }
            case .route(let table):
                let other = self.otherScratch(than: data)
                // A silent channel of DSD is DSD's silence pattern.
                table.apply(
                    data, frames: frames, inputChannels: channels, bytesPerSample: format.bytesPerSample, into: other,
                    silence: format == .dsd ? 0x69 : 0)
                data = other
                channels = table.outputChannels
            }
        }
        let samples = frames * channels
        if self.softwareVolumeWidens, format == .s16 {
            let other = self.otherScratch(than: data)
            PCMVolume.widen16To24(data, samples: samples, volume: softwareSteps, into: other)
            data = other
            format = .s24
        } else if softwareSteps != PCMVolume.unity, format != .dsd {
            // mpd's volume leaves DSD alone.
            self.softwareVolume.apply(data, format: format, samples: samples, volume: softwareSteps, into: data)
        }
        return self.convert(
            UnsafeRawBufferPointer(start: data, count: samples * format.bytesPerSample), frames: frames, fromGain: 1,
            toGain: 1)
    }

    /// The chain's scratch buffer that `data` is not in.
    private func otherScratch(than data: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer {
        data == UnsafeMutableRawPointer(self.volumed.baseAddress!)
            ? self.filtered.baseAddress! : self.volumed.baseAddress!
    }

    /// The format the filter chain makes of `decoded` (24-bit first when ReplayGain widens 16-bit samples): 16
    /// bits after a `normalize`, a `route`'s channel count; 24 bits again when a `softwareVolume` follows and
    /// the chain ends in 16 bits (`mpd`'s volume filter widens them). The device is opened for it.
    static func filteredFormat(
        _ decoded: AudioFormat, widening16To24: Bool, filters: [PCMFilter], softwareVolume: Bool = false
    ) -> AudioFormat {
        var format = decoded
        guard !filters.isEmpty else { return format }
        if widening16To24, format.sampleFormat == .s16 { format.sampleFormat = .s24 }
        for filter in filters {
            switch filter {
            case .null: break
            case .normalize: format.sampleFormat = .s16
            case .route(let table): format.channels = table.outputChannels
            }
        }
        if softwareVolume, format.sampleFormat == .s16 { format.sampleFormat = .s24 }
        return format
    }

    /// Decodes `frames` frames of `source` to floats in the input's channels, scaled by a gain ramp.
    private func scale(
        _ source: UnsafeRawBufferPointer, frames: Int, fromGain: Float, toGain: Float,
        into target: UnsafeMutablePointer<Float>
    ) {
        let channels = self.input.channels
        if self.input.sampleFormat == .dsd {
            // `mpd` makes floats for a float output, else 24-bit integers.
            self.dsd.translate(
                source, frames: frames, channels: channels, integer24: self.output.sampleFormat != .float,
                into: target)
        } else {
            Self.decode(source, format: self.input.sampleFormat, count: frames * channels, into: target)
        }
        guard fromGain != 1 || toGain != 1 else { return }
        let step = frames > 1 ? (toGain - fromGain) / Float(frames) : 0
        var gain = fromGain
        for frame in 0..<frames {
            let samples = target + frame * channels
            for channel in 0..<channels { samples[channel] *= gain }
            gain += step
        }
    }

    private static func decode(
        _ source: UnsafeRawBufferPointer, format: SampleFormat, count: Int, into samples: UnsafeMutablePointer<Float>
    ) {
        switch format {
        case .s8:
            for index in 0..<count { samples[index] = Float(source.load(fromByteOffset: index, as: Int8.self)) / 128 }
        case .dsd:
            // Handled by `DSDToPCM` (`scale`); never reached.
            for index in 0..<count { samples[index] = 0 }
        case .s16:
            for index in 0..<count {
                samples[index] = Float(source.loadUnaligned(fromByteOffset: index * 2, as: Int16.self)) / 32768
            }
        case .s24:
            for index in 0..<count {
                // Sign-extend the low 24 bits of the 32-bit word.
                let word = source.loadUnaligned(fromByteOffset: index * 4, as: Int32.self)
                samples[index] = Float((word << 8) >> 8) / 8_388_608
            }
        case .s32:
            for index in 0..<count {
                samples[index] = Float(source.loadUnaligned(fromByteOffset: index * 4, as: Int32.self)) / 2_147_483_648
            }
        case .float:
            for index in 0..<count { samples[index] = source.loadUnaligned(fromByteOffset: index * 4, as: Float.self) }
        }
    }

    /// `value` towards zero as C converts a float to an integer (what `mpd`'s `FloatToIntegerSampleConvert` does
    /// with the float product of sample and scale), or to the nearest; NaN is 0, and values beyond `Int`
    /// saturate (clamped after).
    @inline(__always)
    private static func integer(_ value: Float, truncating: Bool) -> Int {
        if value.isNaN { return 0 }
        if value >= 9.2e18 { return Int.max }
        if value <= -9.2e18 { return Int.min }
        return truncating ? Int(value) : Int(value.rounded())
    }

    /// Float samples in `format`: scaled by 2^(bits−1) in float, then truncated towards zero as `mpd` converts
    /// float samples (`truncating`) or rounded, and clamped.
    private static func encode(
        _ samples: UnsafeMutablePointer<Float>, count: Int, format: SampleFormat, truncating: Bool,
        into target: UnsafeMutableRawBufferPointer
    ) -> Int {
        switch format {
        case .s8:
            for index in 0..<count {
                let value = Int8(clamping: Self.integer(samples[index] * 128, truncating: truncating))
                target.storeBytes(of: value, toByteOffset: index, as: Int8.self)
            }
            return count
        case .dsd:
            // `configure` refuses PCM to DSD; never reached. DSD silence.
            for index in 0..<count { target.storeBytes(of: UInt8(0x69), toByteOffset: index, as: UInt8.self) }
            return count
        case .s16:
            for index in 0..<count {
                // mpd's float to 16-bit conversion, which the fingerprint path already has.
                let value =
                    truncating
                    ? PCMToS16.fromFloat(samples[index])
                    : Int16(clamping: Self.integer(samples[index] * 32768, truncating: false))
                target.storeBytes(of: value, toByteOffset: index * 2, as: Int16.self)
            }
            return count * 2
        case .s24:
            for index in 0..<count {
                let value = Int32(
                    min(8_388_607, max(-8_388_608, Self.integer(samples[index] * 8_388_608, truncating: truncating))))
                target.storeBytes(of: value, toByteOffset: index * 4, as: Int32.self)
            }
            return count * 4
        case .s32:
            for index in 0..<count {
                let value = Int32(clamping: Self.integer(samples[index] * 2_147_483_648, truncating: truncating))
                target.storeBytes(of: value, toByteOffset: index * 4, as: Int32.self)
            }
            return count * 4
        case .float:
            for index in 0..<count { target.storeBytes(of: samples[index], toByteOffset: index * 4, as: Float.self) }
            return count * 4
        }
    }
}

/// A sample type `PlayerPCMConverter` changes the channels of, with `mpd`'s arithmetic for it.
private protocol RemixedSample {
    static var zero: Self { get }
    /// The mean of `count` samples (`mpd`'s sum in a wider type, divided by the count).
    static func average(_ samples: UnsafeMutablePointer<Self>, count: Int) -> Self
}

extension RemixedSample where Self: FixedWidthInteger {
    /// Summed as `Int`, divided with truncation towards zero.
    static func average(_ samples: UnsafeMutablePointer<Self>, count: Int) -> Self {
        var sum = 0
        for index in 0..<count { sum += Int(samples[index]) }
        return Self(truncatingIfNeeded: sum / count)
    }
}

extension Int8: RemixedSample {}
extension Int16: RemixedSample {}
extension Int32: RemixedSample {}

extension Float: RemixedSample {
    /// Summed from the first sample on (a lone `-0.0` stays one) and divided in float.
    static func average(_ samples: UnsafeMutablePointer<Float>, count: Int) -> Float {
        var sum = samples[0]
        for index in 1..<count { sum += samples[index] }
        return sum / Float(count)
    }
}

/// One stage of the filter chain on the output thread.
private enum FilterStage {
    case route(RouteTable)
    case normalize(NormalizeStage)
}

/// The `normalize` filter on the output thread: `mpd`'s conversion to 16 bits in front of it (its autoconvert
/// filter: dithered from 24 and 32 bits, truncated from float) and the compressor. Allocated when the stream
/// opens; no allocation per chunk.
private final class NormalizeStage {
    let compressor = NormalizeCompressor()
    private var dither = PCMDither()
    /// DSD made PCM in front of the filter (its own, as each of `mpd`'s conversions has).
    private let dsd = DSDToPCM()

    /// Forgets the DSD filter's history (a seek: `mpd` resets its converters, not the compressor).
    func resetConversion() { self.dsd.reset() }

    /// `frames` frames of `channels` DSD bytes at `source` as 24-bit samples (32-bit words) at `target`: `mpd`'s
    /// DSD to PCM conversion for an integer format.
    func translateDSD(
        _ source: UnsafeMutableRawPointer, frames: Int, channels: Int, into target: UnsafeMutableRawPointer
    ) {
        let floats = target.assumingMemoryBound(to: Float.self)
        self.dsd.translate(
            UnsafeRawBufferPointer(start: source, count: frames * channels), frames: frames, channels: channels,
            integer24: true, into: floats)
        // The floats are the 24-bit sums over 2^23, exactly.
        for index in 0..<(frames * channels) {
            target.storeBytes(of: Int32(floats[index] * 8_388_608), toByteOffset: index * 4, as: Int32.self)
        }
    }

    /// Makes `samples` samples of `format` at `data` 16-bit, in place (front to back: never narrower to wider).
    func narrow(_ data: UnsafeMutableRawPointer, format: SampleFormat, samples: Int) {
        switch format {
        case .s16, .dsd: return
        case .s8:
            // Widening in place: back to front.
            for index in stride(from: samples - 1, through: 0, by: -1) {
                let value = Int16(data.load(fromByteOffset: index, as: Int8.self)) << 8
                data.storeBytes(of: value, toByteOffset: index * 2, as: Int16.self)
            }
        case .s24, .s32:
            let (bits, scale) = format == .s24 ? (24, 8) : (32, 16)
            for index in 0..<samples {
                let value = data.load(fromByteOffset: index * 4, as: Int32.self)
                let narrowed = Int16(truncatingIfNeeded: self.dither.shift(Int64(value), bits: bits, by: scale))
                data.storeBytes(of: narrowed, toByteOffset: index * 2, as: Int16.self)
            }
        case .float:
            for index in 0..<samples {
                let value = PCMToS16.fromFloat(data.load(fromByteOffset: index * 4, as: Float.self))
                data.storeBytes(of: value, toByteOffset: index * 2, as: Int16.self)
            }
        }
    }
}
