// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Synchronization

/// Settings and border bookkeeping shared by the loop, the decoder thread and every output thread.
///
/// `@unchecked Sendable`: atomics and immutable values only.
final class PlayerShared: @unchecked Sendable {
    /// `PlayerEndState` raw values: whether the decoder reached the end of the stream.
    let endState = Atomic<Int>(PlayerEndState.running.rawValue)
    /// The generation the loop last flushed the pipe for (stored while every output is held).
    let generation = Atomic<UInt64>(0)
    /// `borderPause` (single mode).
    let borderPause = Atomic<Bool>(false)
    /// The token of the song whose start was last announced (`songStarted` is posted once per hand-over).
    let announcedToken = Atomic<UInt64>(0)
    /// The token of the song the outputs last paused in front of (`pausedAtBorder` is posted once).
    let borderPausedToken = Atomic<UInt64>(0)
    /// The tag revision last announced (`streamTag` is posted once per revision, by the first output to play
    /// a chunk of it).
    let announcedTagRevision = Atomic<UInt64>(0)
    /// Tags the decoder read from a stream and no output has played yet, oldest first (a few at most).
    private let pendingTags = Mutex<[(revision: UInt64, tags: [TagItem])]>([])
    /// How many unplayed tag revisions are kept: a stream changing its title faster than the pipe plays
    /// loses the oldest.
    static let pendingTagLimit = 8

    /// `ReplayGainMode` as an index into `allCases`.
    let replayGainMode = Atomic<Int>(0)
    /// Preamp, missing preamp and limit.
    let replayGain: ReplayGainSettings
    /// Nanoseconds a failed output waits before it tries again.
    let retryNanoseconds: UInt64
    /// The clock those nanoseconds pass on.
    let clock: any PlaybackClock
    /// `audio_output_format`: what every song is converted to before the outputs (`nil`: nothing forced).
    let outputFormatMask: AudioFormatMask?
    /// What the outputs resample with (the `resampler` block).
    let resampler: Resampler
    /// `crossfade`, `mixrampdb`, `mixrampdelay` (bit patterns of `Double`s).
    private let crossFadeSeconds = Atomic<UInt64>(0)
    private let mixRampDB = Atomic<UInt64>(0)
    private let mixRampDelay = Atomic<UInt64>((-1.0).bitPattern)
    /// The last cross-fade plans the decoder published (a small ring; `fadePlanCount` counts them).
    private let fadePlans: [FadePlanSlot] = (0..<4).map { _ in FadePlanSlot() }
    private let fadePlanCount = Atomic<Int>(0)

    init(
        replayGain: ReplayGainSettings, retryNanoseconds: UInt64, outputFormatMask: AudioFormatMask? = nil,
        resampler: Resampler = .standard, clock: any PlaybackClock = SystemClock()
    ) {
        self.replayGain = replayGain
        self.retryNanoseconds = retryNanoseconds
        self.clock = clock
        self.outputFormatMask = outputFormatMask
        self.resampler = resampler
    }

    /// Keeps a stream's new tags until an output plays the first chunk of `revision`. Decoder thread, when a
    /// stream's tags change (never per period).
    func publishTags(_ tags: [TagItem], revision: UInt64) {
        self.pendingTags.withLock { pending in
            if pending.count >= Self.pendingTagLimit { pending.removeFirst() }
            pending.append((revision, tags))
        }
        self.recentStreamTags.withLock { recent in
            if recent.count >= Self.pendingTagLimit { recent.removeFirst() }
            recent.append((revision, tags))
        }
    }

    /// The tags of `revision`, once an output played it; every older revision is dropped (played over, or
    /// flushed). The loop.
    func takeTags(revision: UInt64) -> [TagItem]? {
        self.pendingTags.withLock { pending in
            let tags = pending.last { $0.revision == revision }?.tags
            pending.removeAll { $0.revision <= revision }
            return tags
        }
    }

    /// The tags of the songs the decoder opened last (a few), for outputs that send tags.
    private let recentSongTags = Mutex<[(token: UInt64, tags: [TagItem])]>([])

    /// Keeps the tags of a song the decoder opened. Decoder thread, once per song.
    func publishSongTags(_ tags: [TagItem], token: UInt64) {
        self.recentSongTags.withLock { recent in
            if recent.count >= 4 { recent.removeFirst() }
            recent.append((token, tags))
        }
    }

    /// The tags of the song with `token`, if it was opened lately. Output thread, once per song.
    func songTags(token: UInt64) -> [TagItem]? {
        self.recentSongTags.withLock { recent in recent.last { $0.token == token }?.tags }
    }

    /// The stream tags the decoder read last (a few), for outputs that send tags: unlike `pendingTags`, kept
    /// after the loop took them, for every output to find.
    private let recentStreamTags = Mutex<[(revision: UInt64, tags: [TagItem])]>([])

    /// A stream's tags of `revision`, if they are recent. Output thread, once per revision.
    func streamTags(revision: UInt64) -> [TagItem]? {
        self.recentStreamTags.withLock { recent in recent.last { $0.revision == revision }?.tags }
    }

    /// The ReplayGain mode now. Any thread.
    var mode: ReplayGainMode { ReplayGainMode.allCases[self.replayGainMode.load(ordering: .relaxed)] }

    // MARK: - Cross-fade

    /// The cross-fade settings now. Any thread.
    var crossFade: PlayerCrossFade {
        get {
            PlayerCrossFade(
                seconds: Double(bitPattern: self.crossFadeSeconds.load(ordering: .relaxed)),
                mixRampDB: Double(bitPattern: self.mixRampDB.load(ordering: .relaxed)),
                mixRampDelay: Double(bitPattern: self.mixRampDelay.load(ordering: .relaxed)))
        }
        set {
            self.crossFadeSeconds.store(newValue.seconds.bitPattern, ordering: .relaxed)
            self.mixRampDB.store(newValue.mixRampDB.bitPattern, ordering: .relaxed)
            self.mixRampDelay.store(newValue.mixRampDelay.bitPattern, ordering: .relaxed)
        }
    }

    /// Publishes the cross-fade of a song change. Decoder thread, once per song change.
    func publish(_ plan: PlayerFadePlan) {
        let count = self.fadePlanCount.load(ordering: .relaxed)
        self.fadePlans[count % self.fadePlans.count].value.store(plan.packed, ordering: .releasing)
        self.fadePlanCount.store(count + 1, ordering: .releasing)
    }

    /// Forgets every plan (the pipe was flushed). Loop thread, with the decoder parked and the outputs held.
    func clearFadePlans() {
        for slot in self.fadePlans { slot.value.store(0, ordering: .releasing) }
    }

    /// The cross-fade of the next song change after chunk `cursor` (the newest plan when a border was planned
    /// twice), `nil` when it does not cross-fade. Output thread; no allocation, no lock.
    func fadePlan(after cursor: UInt64) -> PlayerFadePlan? {
        let count = self.fadePlanCount.load(ordering: .acquiring)
        var best: PlayerFadePlan?
        for age in 0..<self.fadePlans.count {
            let index = ((count - 1 - age) % self.fadePlans.count + self.fadePlans.count) % self.fadePlans.count
            let plan = PlayerFadePlan(packed: self.fadePlans[index].value.load(ordering: .acquiring))
            guard plan.border > cursor else { continue }
            if best.map({ plan.border < $0.border }) ?? true { best = plan }
        }
        return best.flatMap { $0.chunks > 0 ? $0 : nil }
    }
}

/// One published cross-fade plan. `@unchecked Sendable`: a single atomic.
private final class FadePlanSlot: @unchecked Sendable {
    let value = Atomic<UInt64>(0)
}
