// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Model

/// `audio_output_format` on the decoder's side, where `mpd` applies it: each song's decoded PCM is converted
/// (sample format, channels, rate through the configured ``Resampler``; DSD made PCM) to the song's format with
/// the mask applied before it reaches the chunk pipe, so ReplayGain, the filter chain, the software volume and
/// each output's own conversion all work on the converted samples, as `mpd`'s outputs get its decoder's
/// `out_audio_format`.
///
/// The converted frames are staged and handed out in whole pipe chunks of the converted format
/// (`PlayerChunkPipe.chunkFrames`), so a chunk is made of whole `mpd` chunks of that format, as `mpd`'s decoder
/// fills its chunks after converting; only a song's last chunk is shorter. Like `mpd`'s decoder, it never plays
/// what the resampler still holds when a song ends.
///
/// Made when a song opens (allocates); ``decode(_:)``, ``take(into:capacityFrames:)`` and ``reset(songFrame:)``
/// do not allocate. Not thread-safe: owned by the decoder thread.
final class PlayerDecoderConversion {
    /// The decoder's format and the converted one.
    let input: AudioFormat
    let output: AudioFormat
    /// Decoded frames, in the input format, that ``scratch`` holds at most.
    let inputFrames: Int
    /// Where the decoder writes before the conversion.
    let scratch: UnsafeMutableRawBufferPointer
    /// Whether the decoder reached the song's end (what is staged is all that is left).
    var inputEnded = false
    /// The position in converted frames of the next frame handed out.
    private(set) var outputFrame: UInt64 = 0

    private var converter = PlayerPCMConverter()
    private var staged: UnsafeMutableRawBufferPointer
    private var stagedBytes = 0

    /// A conversion from `input` to `output` for chunks of `chunkBytes` bytes.
    ///
    /// - Throws: `OutputError` when the formats cannot be converted (`mpd`'s decoder fails the song then).
    init(input: AudioFormat, output: AudioFormat, chunkBytes: Int, resampler: Resampler) throws(OutputError) {
        self.input = input
        self.output = output
        self.inputFrames = max(1, chunkBytes / max(1, input.frameSize))
        // The resampler takes what the decoder gave at once, as `mpd`'s decoder converts what its plugin submits.
        try self.converter.configure(
            input: input, output: output, maxFrames: self.inputFrames, resampler: resampler,
            resamplingPerChunk: false)
        self.scratch = .allocate(byteCount: self.inputFrames * input.frameSize, alignment: 16)
        // One conversion's output (at most the converter's room) and less than a chunk left over before it.
        let room = max(self.converter.capacityBytes, self.inputFrames * output.frameSize * 8)
        self.staged = .allocate(byteCount: room + chunkBytes + output.frameSize, alignment: 16)
    }

    deinit {
        self.scratch.deallocate()
        self.staged.deallocate()
    }

    /// The converted frames waiting to be handed out.
    var stagedFrames: Int { self.stagedBytes / self.output.frameSize }

    /// `songFrame` (in input frames from the song's start) in converted frames.
    func outputFrames(_ songFrame: UInt64) -> UInt64 {
        songFrame * UInt64(self.output.sampleRate) / UInt64(max(1, self.input.sampleRate))
    }

    /// A converted frame's position in input frames (what the chunks' positions count in).
    func songFrame(ofOutputFrame frame: UInt64) -> UInt64 {
        frame * UInt64(self.input.sampleRate) / UInt64(max(1, self.output.sampleRate))
    }

    /// Converts `frames` frames the decoder wrote to ``scratch`` and stages the result.
    func decode(_ frames: Int) {
        let converted = self.converter.convert(
            UnsafeRawBufferPointer(rebasing: self.scratch[0..<(frames * self.input.frameSize)]), frames: frames,
            fromGain: 1, toGain: 1)
        let room = self.staged.count - self.stagedBytes
        // The decoder thread drains the stage below one chunk before each conversion: the room always suffices.
        assert(converted.count <= room, "the stage overflowed: \(converted.count) bytes, room for \(room)")
        let bytes = min(converted.count, room)
        if bytes > 0 {
            (self.staged.baseAddress! + self.stagedBytes).copyMemory(from: converted.baseAddress!, byteCount: bytes)
        }
        self.stagedBytes += bytes
    }

    /// Hands out up to `capacityFrames` staged frames into `target`; returns how many.
    func take(into target: UnsafeMutableRawBufferPointer, capacityFrames: Int) -> Int {
        let frames = min(self.stagedFrames, capacityFrames)
        let bytes = frames * self.output.frameSize
        guard bytes > 0 else { return 0 }
        target.baseAddress!.copyMemory(from: self.staged.baseAddress!, byteCount: bytes)
        let rest = self.stagedBytes - bytes
        if rest > 0 {
            // Overlapping: memmove.
            memmove(self.staged.baseAddress!, self.staged.baseAddress! + bytes, rest)
        }
        self.stagedBytes = rest
        self.outputFrame += UInt64(frames)
        return frames
    }

    /// Forgets what is staged and what the resampler holds (a seek, as `mpd` resets its converter), and goes on
    /// from `songFrame` (input frames).
    func reset(songFrame: UInt64) {
        self.converter.reset()
        self.stagedBytes = 0
        self.inputEnded = false
        self.outputFrame = self.outputFrames(songFrame)
    }
}
