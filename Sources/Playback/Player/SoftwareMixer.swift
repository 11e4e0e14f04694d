// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Synchronization

/// `mixer_type "software"`: a volume the output thread applies to the samples (ramped per chunk, so changes
/// make no zipper noise).
///
/// Any thread (its state is one atomic).
public final class SoftwareMixer: Mixer {
    private let level: Atomic<Int>

    /// Creates a mixer at `volume` (100: unity).
    public init(volume: Int = 100) { self.level = Atomic(min(100, max(0, volume))) }

    public func open() throws(OutputError) {}
    public func close() {}

    /// The volume 0...100. Any thread.
    public func volume() throws(OutputError) -> Int { self.level.load(ordering: .relaxed) }

    /// Sets the volume 0...100. Any thread.
    public func setVolume(_ volume: Int) throws(OutputError) {
        self.level.store(min(100, max(0, volume)), ordering: .relaxed)
    }

    /// The current volume in `mpd`'s software volume steps of 1/1024 (see `PCMVolume`). Output thread; no
    /// allocation.
    var steps: Int { Self.steps(volume: self.level.load(ordering: .relaxed)) }

    /// `mpd`'s curve for `volume` (0...100): (e^(v/25) − 1) / (e^4 − 1) with its constant for e^4, in steps.
    static func steps(volume: Int) -> Int {
        if volume >= 100 { return PCMVolume.unity }
        if volume <= 0 { return 0 }
        let curve = (exp(Double(volume) / 25) - 1) / (Double(Float(54.598_150_033_1)) - 1)
        return PCMVolume.steps(Float(curve))
    }
}
