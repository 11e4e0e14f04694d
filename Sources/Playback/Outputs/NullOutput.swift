// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import Synchronization

/// `type "null"`: discards PCM, paced in real time unless `sync "no"` (then as fast as the decoder goes).
///
/// Used on its output thread, except `interrupt()` (any thread). `@unchecked Sendable`: the timer is confined
/// to the output thread; `interrupted` and the wake-up are thread-safe.
public final class NullOutput: AudioOutput, @unchecked Sendable {
    public let plugin = "null"
    /// Whether writes are paced in real time (`sync`, default yes).
    public let sync: Bool
    private var timer: OutputTimer
    private let clock: any PlaybackClock
    private let interrupted = Atomic<Bool>(false)
    private let wakeup = PlayerWakeup()

    /// Creates the output, paced by `clock`.
    public init(sync: Bool = true, clock: any PlaybackClock = SystemClock()) {
        self.sync = sync
        self.clock = clock
        self.timer = OutputTimer(clock: clock)
    }

    public func open(_ format: AudioFormat) throws(OutputError) -> AudioFormat {
        self.timer.open(format)
        return format
    }

    public func close() { self.timer.reset() }

    /// Accepts everything; with `sync`, after the previous write would have been heard (a pause holds what it
    /// took and nobody heard yet: ``pause()``).
    public func play(_ data: UnsafeRawBufferPointer) throws(OutputError) -> Int {
        if self.sync {
            self.timer.wait(thenAdd: data.count, wakeup: self.wakeup, interrupted: self.interrupted)
            self.interrupted.store(false, ordering: .releasing)
        }
        return data.count
    }

    public var delayFrames: Int { self.sync ? self.timer.delayFrames : 0 }

    public func drain() throws(OutputError) -> Bool {
        guard self.sync else { return true }
        return self.timer.drain(wakeup: self.wakeup, interrupted: self.interrupted)
    }

    public func cancel() { self.timer.reset() }

    /// A pause mode, where `mpd`'s null output has none (mpd closes it at a pause): nothing outside the process can
    /// tell the two apart, and closing dropped what the output had taken and nobody had heard yet, so a pause and a
    /// resume right after `play` could move on to the next song (CI-44), which mpd's player, feeding its outputs
    /// chunk by chunk, does not. Holds the clock (``holdPaused()``).
    public var hasPauseMode: Bool { true }
    public func pause() -> Bool { self.holdPaused() }

    /// The null output's pause, and that of a device that paces itself with a null output (a test's capture): holds
    /// the clock (what was written and not heard yet is heard after the pause, as a device keeps its buffer over a
    /// pause) and waits a little, so the output thread does not spin. Returns `true` (stays paused).
    public func holdPaused() -> Bool {
        self.timer.hold()
        if !self.interrupted.load(ordering: .acquiring) {
            self.clock.sleep(
                until: self.clock.now() + 100_000_000, on: self.wakeup,
                unless: { self.interrupted.load(ordering: .acquiring) })
        }
        self.interrupted.store(false, ordering: .releasing)
        return true
    }

    public func interrupt() {
        self.interrupted.store(true, ordering: .releasing)
        self.wakeup.signal()
    }
}

/// The `null` output plugin: parameter `sync` (`yes`/`no`, default yes); no hardware mixer.
public struct NullOutputPlugin: OutputPlugin {
    public let name = "null"

    /// Creates the plugin.
    public init() {}

    public func makeOutput(_ configuration: OutputConfiguration) throws(OutputError) -> any AudioOutput {
        NullOutput(sync: try configuration.bool("sync", default: true))
    }

    public func makeHardwareMixer(
        _ configuration: OutputConfiguration, onChange: @escaping @Sendable () -> Void
    ) throws(OutputError) -> (any Mixer)? { nil }
}
