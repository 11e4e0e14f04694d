// SPDX-License-Identifier: GPL-3.0-or-later

import Synchronization

/// Settings and border bookkeeping shared by the loop, the decoder thread and every output thread.
///
/// `@unchecked Sendable`: atomics and immutable values only.
final class PlayerShared: @unchecked Sendable {
    /// `PlayerEndState` raw values: whether the decoder reached the end of the stream.
    let endState = Atomic<Int>(PlayerEndState.running.rawValue)
    /// `borderPause` (single mode).
    let borderPause = Atomic<Bool>(false)
    /// The token of the song whose start was last announced (`songStarted` is posted once per hand-over).
    let announcedToken = Atomic<UInt64>(0)
    /// The token of the song the outputs last paused in front of (`pausedAtBorder` is posted once).
    let borderPausedToken = Atomic<UInt64>(0)
    /// `ReplayGainMode` as an index into `allCases`.
    let replayGainMode = Atomic<Int>(0)
    /// Preamp, missing preamp and limit.
    let replayGain: ReplayGainSettings
    /// Nanoseconds a failed output waits before it tries again.
    let retryNanoseconds: UInt64

    init(replayGain: ReplayGainSettings, retryNanoseconds: UInt64) {
        self.replayGain = replayGain
        self.retryNanoseconds = retryNanoseconds
    }

    /// The ReplayGain mode now. Any thread.
    var mode: ReplayGainMode { ReplayGainMode.allCases[self.replayGainMode.load(ordering: .relaxed)] }
}
