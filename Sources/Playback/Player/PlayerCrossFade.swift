// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Model

/// `crossfade`, `mixrampdb` and `mixrampdelay`, and how long the overlap between two songs is, as `mpd` 0.23
/// decides it once per song change (`player/CrossFade`).
///
/// A value type; the decoder thread computes a transition with it when it opens the queued song.
struct PlayerCrossFade: Equatable {
    /// Songs shorter than this never cross-fade.
    static let minimumSongSeconds: Double = 20

    /// What the decision needs to know about one side of the song change.
    struct Song {
        /// The song's length (range applied), `nil` when unknown.
        var seconds: Double?
        /// The format the outputs get.
        var format: AudioFormat
        /// The ReplayGain adjustment applied to it, in dB (0 without ReplayGain).
        var replayGainDB: Double
        /// `mixramp_start` (for the song fading in).
        var mixRampStart: String?
        /// `mixramp_end` (for the song fading out).
        var mixRampEnd: String?
    }

    /// `crossfade` in seconds (0: off).
    var seconds: Double = 0
    /// `mixrampdb`.
    var mixRampDB: Double = 0
    /// `mixrampdelay` in seconds; not positive (or NaN) means no MixRamp.
    var mixRampDelay: Double = -1

    /// Whether the song change is mixed by plain addition (MixRamp) rather than faded: whenever
    /// `mixrampdelay` is positive, as in `mpd` (even when the tags were missing and the length fell back to
    /// `crossfade`).
    var adds: Bool { self.mixRampDelay > 0 }

    private func canCrossFade(_ seconds: Double?) -> Bool {
        guard let seconds else { return false }
        return seconds >= Self.minimumSongSeconds && self.seconds < seconds
    }

    /// How many chunks of the old song overlap the new one: 0 when the songs do not cross-fade (off, a song
    /// shorter than 20 s or than the fade or of unknown length, different formats, MixRamp tags that never
    /// reach `mixrampdb` or an overlap shorter than `mixrampdelay`).
    ///
    /// - Parameters:
    ///   - chunkSeconds: the length of one full chunk of the new song.
    ///   - maxChunks: the most the pipe can overlap; a longer overlap is cut to it and `capped` is set.
    func chunks(from previous: Song, to next: Song, chunkSeconds: Double, maxChunks: Int) -> (chunks: Int, capped: Bool)
    {
        guard self.seconds > 0, self.canCrossFade(previous.seconds), self.canCrossFade(next.seconds),
            previous.format == next.format, chunkSeconds > 0
        else { return (0, false) }
        var chunks = 0
        if self.mixRampDelay <= 0 || next.mixRampStart == nil || previous.mixRampEnd == nil {
            chunks = Int(lround(self.seconds / chunkSeconds))
        } else if let start = next.mixRampStart, let end = previous.mixRampEnd {
            let current = Self.interpolate(start, requiredDB: self.mixRampDB - next.replayGainDB)
            let before = Self.interpolate(end, requiredDB: self.mixRampDB - previous.replayGainDB)
            let overlap = current + before
            if current >= 0, before >= 0, self.mixRampDelay <= overlap {
                chunks = Int(lround((overlap - self.mixRampDelay) / chunkSeconds))
            }
        }
        return chunks > maxChunks ? (maxChunks, true) : (max(0, chunks), false)
    }

    /// The time at which a MixRamp profile (`"dB seconds;dB seconds;…"`, dB rising) reaches `requiredDB`,
    /// interpolated linearly between its points; the first point's time when every point is louder; −1 when
    /// it never gets there or the text does not parse.
    static func interpolate(_ ramp: String, requiredDB: Double) -> Double {
        let required = Float(requiredDB)
        let text = ramp.utf8CString
        return text.withUnsafeBufferPointer { buffer -> Double in
            let base = UnsafeMutablePointer(mutating: buffer.baseAddress!)
            var offset = 0
            var end: UnsafeMutablePointer<CChar>?
            /// `strtof` at `offset`: the value and the offset after it (`offset` itself when nothing parsed).
            func number() -> (Float, Int) {
                let value = strtof(base + offset, &end)
                return (value, end.map { $0 - base } ?? offset)
            }
            var lastDB: Float = 0
            var lastSeconds: Float = 0
            var haveLast = false
            while true {
                let (decibels, afterDB) = number()
                guard afterDB != offset, text[afterDB] == 0x20 else { break }
                offset = afterDB + 1
                let (seconds, afterSeconds) = number()
                guard afterSeconds != offset, text[afterSeconds] == 0x3B || text[afterSeconds] == 0 else { break }
                offset = text[afterSeconds] == 0x3B ? afterSeconds + 1 : afterSeconds
                if decibels == required { return Double(seconds) }
                if decibels < required {
                    lastDB = decibels
                    lastSeconds = seconds
                    haveLast = true
                    continue
                }
                guard haveLast else { return Double(seconds) }
                return Double(lastSeconds + (required - lastDB) * (seconds - lastSeconds) / (decibels - lastDB))
            }
            return -1
        }
    }
}

/// One song change's cross-fade as the decoder publishes it for the outputs: the sequence number of the new
/// song's first chunk, how many chunks before it the fade starts, and whether the songs are added (MixRamp)
/// rather than faded.
struct PlayerFadePlan: Equatable {
    var border: UInt64
    var chunks: Int
    var adds: Bool

    /// Packed into one word: border (40 bits) · chunks (23 bits) · adds (1 bit).
    var packed: UInt64 { self.border << 24 | UInt64(min(self.chunks, (1 << 23) - 1)) << 1 | (self.adds ? 1 : 0) }

    init(border: UInt64, chunks: Int, adds: Bool) {
        self.border = border
        self.chunks = chunks
        self.adds = adds
    }

    init(packed: UInt64) {
        self.border = packed >> 24
        self.chunks = Int((packed >> 1) & ((1 << 23) - 1))
        self.adds = packed & 1 == 1
    }
}
