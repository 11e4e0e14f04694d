// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

/// `replaygain_preamp`, `replaygain_missing_preamp` and `replaygain_limit`.
public struct ReplayGainSettings: Sendable, Equatable {
    /// dB added to songs that have ReplayGain values (−15…15).
    public var preampDB: Double
    /// dB applied to songs without ReplayGain values.
    public var missingPreampDB: Double
    /// Whether to lower the gain so the peak does not clip.
    public var limit: Bool

    /// Creates settings (`mpd`'s defaults: 0 dB, 0 dB, limit on).
    public init(preampDB: Double = 0, missingPreampDB: Double = 0, limit: Bool = true) {
        self.preampDB = preampDB
        self.missingPreampDB = missingPreampDB
        self.limit = limit
    }

    /// The linear scale for a chunk's song in `mode` (`.off`: 1; `.album` falls back to the track values).
    ///
    /// Output thread; no allocation.
    func scale(mode: ReplayGainMode, trackGain: Float, trackPeak: Float, albumGain: Float, albumPeak: Float) -> Float {
        guard mode != .off else { return 1 }
        let useAlbum = mode == .album && !albumGain.isNaN
        let gain = useAlbum ? albumGain : trackGain
        let peak = useAlbum ? albumPeak : trackPeak
        guard !gain.isNaN else { return Float(Self.linear(self.missingPreampDB)) }
        // As mpd: at most 15× before the peak limit.
        var scale = Float(min(15, Self.linear(Double(gain) + self.preampDB)))
        if self.limit, !peak.isNaN, peak > 0, scale * peak > 1 { scale = 1 / peak }
        return scale
    }

    private static func linear(_ decibels: Double) -> Double { pow(10, decibels / 20) }
}
