// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// `mpd`'s software volume (its `PcmVolume`), which both its ReplayGain filter and its software mixer apply:
/// a volume in steps of 1/1024, multiplied into integer samples and shifted back with `mpd`'s dither (a
/// noise-shaped error feedback with a linear congruential noise), or multiplied into float samples.
///
/// Bit for bit what `mpd` 0.23 computes. Not thread-safe: one per output thread and stage (the dither keeps
/// state from sample to sample). `apply` does not allocate.
struct PCMVolume {
    /// The volume of 100 %.
    static let unity = 1024

    /// `mpd`'s `pcm_float_to_volume`: the factor in 1/1024 steps, rounded half up (in `Float`, as `mpd`).
    static func steps(_ factor: Float) -> Int {
        let value = factor * Float(Self.unity) + 0.5
        guard value.isFinite, value > 0 else { return 0 }
        return Int(min(value, Float(Int32.max)))
    }

    private var dither = PCMDither()

    /// `mpd`'s 16-to-24-bit volume (`PcmVolumeConvert`): each 16-bit sample × `volume`, shifted right by 2 into a
    /// 24-bit sample in a 32-bit word, without dither (no bits are lost). No allocation.
    static func widen16To24(_ source: UnsafeRawPointer, samples: Int, volume: Int, into target: UnsafeMutableRawPointer)
    {
        for index in 0..<samples {
            let sample = Int64(source.loadUnaligned(fromByteOffset: index * 2, as: Int16.self)) * Int64(volume)
            target.storeBytes(of: Int32(truncatingIfNeeded: sample >> 2), toByteOffset: index * 4, as: Int32.self)
        }
    }

    /// Forgets the dither's state (a new stream). Output thread.
    mutating func reset() { self.dither = PCMDither() }

    /// Scales `samples` samples of `format` from `source` into `target` (the same layout; they may be the same
    /// memory) by `volume` / 1024. DSD is copied unchanged (as `mpd`, which leaves it alone).
    ///
    /// Audio path: no allocation, no lock.
    mutating func apply(
        _ source: UnsafeRawPointer, format: SampleFormat, samples: Int, volume: Int,
        into target: UnsafeMutableRawPointer
    ) {
        if volume == 0, format != .dsd {
            // mpd's special case: silence.
            target.initializeMemory(as: UInt8.self, repeating: 0, count: samples * format.bytesPerSample)
            return
        }
        let volume64 = Int64(volume)
        switch format {
        case .s8:
            for index in 0..<samples {
                let sample = Int64(source.load(fromByteOffset: index, as: Int8.self)) * volume64
                let value = self.dither.shift(sample, bits: 8 + 10, by: 10)
                target.storeBytes(of: Int8(truncatingIfNeeded: value), toByteOffset: index, as: Int8.self)
            }
        case .s16:
            for index in 0..<samples {
                let sample = Int64(source.loadUnaligned(fromByteOffset: index * 2, as: Int16.self)) * volume64
                let value = self.dither.shift(sample, bits: 16 + 10, by: 10)
                target.storeBytes(of: Int16(truncatingIfNeeded: value), toByteOffset: index * 2, as: Int16.self)
            }
        case .s24, .s32:
            let bits = format == .s24 ? 24 : 32
            for index in 0..<samples {
                let sample = Int64(source.loadUnaligned(fromByteOffset: index * 4, as: Int32.self)) * volume64
                let value = self.dither.shift(sample, bits: bits + 10, by: 10)
                target.storeBytes(of: Int32(truncatingIfNeeded: value), toByteOffset: index * 4, as: Int32.self)
            }
        case .float:
            let factor = Float(volume) / Float(Self.unity)
            for index in 0..<samples {
                let sample = source.loadUnaligned(fromByteOffset: index * 4, as: Float.self)
                target.storeBytes(of: sample * factor, toByteOffset: index * 4, as: Float.self)
            }
        case .dsd:
            if UnsafeRawPointer(target) != source { target.copyMemory(from: source, byteCount: samples) }
        }
    }
}

/// `mpd`'s `PcmDither`: drops the low bits of a sample with error feedback (the last three errors, weighted
/// 1, −½, ½) and triangular noise from a linear congruential generator, clipping to the source's range.
struct PCMDither {
    private var error0: Int32 = 0
    private var error1: Int32 = 0
    private var error2: Int32 = 0
    private var random: Int32 = 0

    /// `sample` of `bits` significant bits shifted right by `scale` bits, dithered. No allocation.
    mutating func shift(_ input: Int64, bits: Int, by scale: Int) -> Int64 {
        let minimum = -(Int64(1) << (bits - 1))
        let maximum = (Int64(1) << (bits - 1)) - 1
        let round = Int64(1) << (scale - 1)
        let mask = (Int64(1) << scale) - 1
        // mpd adds the errors in 32-bit arithmetic.
        var sample = input + Int64(self.error0 &- self.error1 &+ self.error2)
        self.error2 = self.error1
        self.error1 = self.error0 / 2
        var output = sample + round
        let next = UInt32(bitPattern: self.random) &* 0x0019_660D &+ 0x3C6E_F35F
        output += (Int64(next) & mask) - (Int64(UInt32(bitPattern: self.random)) & mask)
        self.random = Int32(bitPattern: next)
        if output > maximum {
            output = maximum
            if sample > maximum { sample = maximum }
        } else if output < minimum {
            output = minimum
            if sample < minimum { sample = minimum }
        }
        output &= ~mask
        self.error0 = Int32(truncatingIfNeeded: sample - output)
        return output >> scale
    }
}
