// SPDX-License-Identifier: GPL-3.0-or-later

/// The dynamic compressor behind `volume_normalization` and the `normalize` filter, with the arithmetic of
/// `mpd` 0.23's (AudioCompress 2.0): each block of 16-bit samples (one of `mpd`'s chunks, all channels together)
/// is amplified towards a target level by a gain in 1/1024 steps.
///
/// Per block: the block's peak (at least 1) is stored in a ring of ``historyLength`` peaks; the loudest of the
/// ring sets the wanted gain `2^10 · target / peak`, which is smoothed with the previous block's gain
/// (`(previous · 255 + wanted) >> 8`), limited to 32× and to at least 1×, and lowered so that the loudest sample
/// cannot clip (then the ramp ends at the block's own peak). Over the block the gain moves linearly (integer
/// steps) from the previous gain to the new one; the samples are `sample · gain >> 10`, clamped to 16 bits. The
/// very first block smooths from a gain of 0 and ramps from 1×, as `mpd`'s does.
///
/// State lives across blocks and songs until ``reset()``; the ring is allocated once, so ``process(_:count:)``
/// never allocates, locks or logs. Not thread-safe: owned by one output thread.
final class NormalizeCompressor {
    /// How many blocks of peaks the compressor remembers.
    static let historyLength = 400
    /// The level the loudest recent sample is brought to (of 32767).
    static let target = 16384
    /// The largest gain, as a factor.
    static let maximumGain = 32
    /// The smoothing shift: the new gain weighs 1/2^8.
    static let smoothing = 8

    private let peaks: UnsafeMutablePointer<Int32>
    private let gains: UnsafeMutablePointer<Int32>
    private var position = 0

    init() {
        self.peaks = .allocate(capacity: Self.historyLength)
        self.gains = .allocate(capacity: Self.historyLength)
        self.peaks.initialize(repeating: 0, count: Self.historyLength)
        self.gains.initialize(repeating: 0, count: Self.historyLength)
    }

    deinit {
        self.peaks.deallocate()
        self.gains.deallocate()
    }

    /// Forgets every block (as a freshly opened filter).
    func reset() {
        self.peaks.update(repeating: 0, count: Self.historyLength)
        self.gains.update(repeating: 0, count: Self.historyLength)
        self.position = 0
    }

    /// Compresses one block of `count` samples in place. Audio path: no allocation.
    func process(_ samples: UnsafeMutablePointer<Int16>, count: Int) {
        var gain = Int(self.gains[self.position])
        var peak = 1
        var peakIndex = 0
        for index in 0..<count {
            let value = abs(Int(samples[index]))
            if value > peak {
                peak = value
                peakIndex = index
            }
        }
        let slot = (self.position + 1) % Self.historyLength
        self.peaks[slot] = Int32(peak)
        for index in 0..<Self.historyLength where Int(self.peaks[index]) > peak {
            peak = Int(self.peaks[index])
            peakIndex = 0
        }
        var newGain = (1 << 10) * Self.target / peak
        newGain = (gain * ((1 << Self.smoothing) - 1) + newGain) >> Self.smoothing
        newGain = min(newGain, Self.maximumGain << 10)
        newGain = max(newGain, 1 << 10)
        var ramp = count
        if (peak * newGain) >> 10 > 32767 {
            newGain = (32767 << 10) / peak
            ramp = peakIndex
        }
        self.gains[slot] = Int32(newGain)
        ramp = max(ramp, 1)
        if gain == 0 { gain = 1 << 10 }
        // C's division: truncated towards zero, as Swift's.
        let delta = (newGain - gain) / ramp
        for index in 0..<count {
            let sample = (Int(samples[index]) * gain) >> 10
            samples[index] = Int16(clamping: sample)
            gain = index < ramp ? gain + delta : newGain
        }
        self.position = slot
    }
}
