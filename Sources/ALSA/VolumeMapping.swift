// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

/// What the volume mapping needs from a mixer control: its ranges and its current value in dB (hundredths) and in
/// raw register steps, and setters for both. ``ALSAMixer`` implements it on a simple mixer element (front left
/// channel to read, every channel to set); tests use a model of one.
protocol VolumeControl {
    /// The playback dB range in hundredths of a dB; `nil` when the control has none.
    func dBRange() -> (min: Int, max: Int)?
    /// The raw register range; `nil` when unavailable.
    func rawRange() -> (min: Int, max: Int)?
    /// The current level in hundredths of a dB.
    func dB() -> Int?
    /// The current raw register value.
    func raw() -> Int?
    /// Sets every channel to `value` hundredths of a dB, rounding to a register step in `direction`
    /// (> 0 up, < 0 down, 0 nearest). Returns 0 or a negative errno.
    func setDB(_ value: Int, direction: Int) -> Int32
    /// Sets every channel's raw register value. Returns 0 or a negative errno.
    func setRaw(_ value: Int) -> Int32
}

/// The volume curve `mpd`'s ALSA mixer uses (the same as alsamixer's "mapped volume"): percent values feel even
/// on controls with a wide dB range. Pure functions; any thread.
///
/// - A control with a dB range of more than 24 dB maps volume `v` (0…1) to a gain of `v³` in amplitude terms,
///   with the control's minimum as 0 unless that minimum is "mute".
/// - A narrower dB range is linear in dB.
/// - A control without dB information is linear in its raw steps.
enum VolumeMapping {
    /// The widest range (in hundredths of a dB) still mapped linearly in dB.
    static let maximumLinearDBRange = 2400

    /// alsa-lib's `SND_CTL_TLV_DB_GAIN_MUTE`: a minimum that means silence.
    static let muteDB = -9_999_999

    /// The control's level as 0…1.
    static func normalizedVolume(of control: some VolumeControl) -> Double {
        guard let (min, max) = control.dBRange(), min < max else {
            guard let (min, max) = control.rawRange(), min != max, let value = control.raw() else { return 0 }
            return Double(value - min) / Double(max - min)
        }
        guard let value = control.dB() else { return 0 }
        if max - min <= Self.maximumLinearDBRange { return Double(value - min) / Double(max - min) }
        var normalized = pow(10, Double(value - max) / 6000)
        if min != Self.muteDB {
            let floor = pow(10, Double(min - max) / 6000)
            normalized = (normalized - floor) / (1 - floor)
        }
        return normalized
    }

    /// Sets the control to `volume` (0…1), rounding in `direction`; 0 and 1 set the exact ends of the range.
    ///
    /// - Returns: 0 or a negative errno.
    static func setNormalizedVolume(_ volume: Double, on control: some VolumeControl, direction: Int) -> Int32 {
        guard let (min, max) = control.dBRange(), min < max else {
            guard let (min, max) = control.rawRange() else { return -Int32(EINVAL) }
            if volume <= 0 { return control.setRaw(min) }
            if volume >= 1 { return control.setRaw(max) }
            return control.setRaw(Self.round(volume * Double(max - min), direction) + min)
        }
        if volume <= 0 { return control.setDB(min, direction: direction) }
        if volume >= 1 { return control.setDB(max, direction: direction) }
        if max - min <= Self.maximumLinearDBRange {
            return control.setDB(Self.round(volume * Double(max - min), direction) + min, direction: direction)
        }
        var scaled = volume
        if min != Self.muteDB {
            let floor = pow(10, Double(min - max) / 6000)
            scaled = volume * (1 - floor) + floor
        }
        return control.setDB(Self.round(6000 * log10(scaled), direction) + max, direction: direction)
    }

    /// A percentage from a normalized volume, rounded half away from zero.
    static func percent(_ normalized: Double) -> Int { Int((100 * normalized).rounded()) }

    /// Rounds up (`direction` > 0), down (< 0) or to the nearest, ties to even (0), as C's `lrint` does.
    static func round(_ value: Double, _ direction: Int) -> Int {
        if direction > 0 { return Int(value.rounded(.up)) }
        if direction < 0 { return Int(value.rounded(.down)) }
        return Int(value.rounded(.toNearestOrEven))
    }
}

/// `mpd`'s answer to controls too coarse for 101 distinct values: after `setvol N`, as long as the control still
/// reads what that call left it at, report `N` rather than the rounded read-back. Pure value; owned by one mixer.
struct VolumeMemo: Equatable {
    /// The percentage last set, or -1.
    private(set) var desired = -1
    /// What the control read right after that, or -1.
    private(set) var resulting = -1

    /// Records a `setvol`.
    mutating func didSet(desired: Int, resulting: Int) {
        self.desired = desired
        self.resulting = resulting
    }

    /// The volume to report for a read-back percentage.
    func report(_ read: Int) -> Int { self.resulting >= 0 && read == self.resulting ? self.desired : read }

    /// A change event from the control: the volume to report, forgetting the last `setvol` when the control moved.
    mutating func observe(_ read: Int) -> Int {
        if self.resulting >= 0 && read == self.resulting { return self.desired }
        self = VolumeMemo()
        return read
    }
}
