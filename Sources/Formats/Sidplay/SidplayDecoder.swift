// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Sidplay

/// Plays one song of a SID tune as `mpd`'s sidplay plugin does: 48000 Hz, 16-bit, mono (stereo for tunes of
/// two or more SID chips), rendered 4096 samples at a time; with a known length the song ends after the
/// chunk in which libsidplayfp's whole-second clock reaches it, else it plays until stopped.
///
/// Confined to the decoding thread. `decode(into:)` and `seek(toFrame:)` do not allocate.
final class SidplayDecoder: Decoder {
    /// `48000:16:1` or `48000:16:2`.
    let format: AudioFormat
    /// The length the database (or `default_songlength`) gives, if any.
    let totalFrames: UInt64?
    /// `status` shows the decoder's length: with `default_songlength` the library has none.
    var totalFramesOverrideLibrary: Bool { self.totalFrames != nil }
    private let player: SidPlayer
    private let channels: Int
    /// The whole second at which the song ends (`mpd`'s `end`); 0: never.
    private let endSecond: Int
    /// `mpd`'s buffer of 4096 samples.
    private static let chunkSamples = 4096
    private var chunk: RenderedChunk
    /// The song reached its end (or libsidplayfp stopped) after the last chunk.
    private var ended = false

    /// Plays the tune's selected song for `milliseconds` (`nil`: until stopped).
    init(player: SidPlayer, milliseconds: Int?) {
        self.player = player
        self.channels = player.channels
        self.format = AudioFormat(
            sampleRate: SidplayFormat.sampleRate, sampleFormat: .s16, channels: self.channels)
        self.totalFrames = milliseconds.map { UInt64($0) * UInt64(SidplayFormat.sampleRate) / 1000 }
        self.endSecond = (milliseconds ?? 0) / 1000
        self.chunk = RenderedChunk(samples: Self.chunkSamples, channels: self.channels)
    }

    deinit { self.chunk.deallocate() }

    /// Delivers rendered frames, rendering the next chunk when none is left.
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: frames written; 0 at the end of the song.
    func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        if self.chunk.pending == 0 {
            if self.ended { return 0 }
            let samples = self.player.play(into: self.chunk.samples)
            guard samples > 0 else {
                self.ended = true
                return 0
            }
            self.chunk.rendered(frames: samples / self.channels)
            self.ended = self.endSecond > 0 && self.player.seconds >= self.endSecond
        }
        return self.chunk.deliver(into: buffer)
    }

    /// Seeks as `mpd` does: to the whole second of `frame`, by restarting the song when it lies behind and
    /// rendering (and dropping) chunks until the clock reaches it (or, unlike `mpd`, which then spins forever,
    /// until 2 s more than the target's samples were rendered without the clock getting there).
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: `frame` (`mpd` reports the seek target as the new position).
    @discardableResult
    func seek(toFrame frame: UInt64) throws(FormatError) -> UInt64 {
        let target = Int(clamping: frame / UInt64(SidplayFormat.sampleRate))
        var now = self.player.seconds
        if target < now {
            self.player.stop()
            now = 0
        }
        // mpd renders until the clock reaches the target; a tune can stop libsidplayfp's clock while it still
        // renders (a fuzzed play address did), on which mpd's loop never ends: give up after 2 s more than the
        // target's samples.
        var budget = (target + 2) * SidplayFormat.sampleRate * self.channels
        while now < target && budget > 0 {
            let samples = self.player.play(into: self.chunk.samples)
            guard samples > 0 else { break }
            budget -= samples
            now = self.player.seconds
        }
        self.chunk.drop()
        self.ended = self.endSecond > 0 && self.player.seconds >= self.endSecond
        return frame
    }
}
