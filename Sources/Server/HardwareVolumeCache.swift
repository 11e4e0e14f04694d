// SPDX-License-Identifier: GPL-3.0-or-later

/// The volume `status`, `getvol` and `volume` read, as `mpd`'s mixer memento keeps it for a partition: a volume read
/// from the mixers is shown again, without asking them, until its clock says a second has passed, or until it is
/// invalidated (a volume set, a mixer reporting a change, an output with a mixer enabled or disabled).
///
/// The clock is `mpd`'s: it starts at zero (the first check passes) and moves only when a check finds a volume kept
/// and a second gone since the clock last moved; a read after an invalidation or after "no volume" asks the mixers
/// without moving it. So a volume read just after a mixer closed without telling anyone (a sndio output closing its
/// stream on `pause` or `stop`) can still be the one from before, for up to a second, as in `mpd`.
///
/// A value type; the partition keeps one (loop-confined).
struct HardwareVolumeCache {
    /// How long a volume read from the mixers is shown again: `mpd`'s one second.
    static let period: UInt64 = 1_000_000_000

    /// The volume last read, `nil` when none is kept (`mpd`'s -1: invalidated, or no mixer had a volume).
    private var kept: Int?
    /// When the clock last moved, in monotonic nanoseconds; 0 before it ever did.
    private var stamp: UInt64 = 0

    /// The volume: the one kept, while the clock has not run for a second, else what `read` says now (which is
    /// kept).
    mutating func volume(now: UInt64, read: () -> Int?) -> Int? {
        if let kept {
            guard now >= self.stamp &+ Self.period else { return kept }
            self.stamp = now
        }
        self.kept = read()
        return self.kept
    }

    /// Forgets the volume kept: the next read asks the mixers.
    mutating func invalidate() { self.kept = nil }
}
