// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Model
import Synchronization
import Testing

@testable import Playback

/// The mixers' lifecycle, as `mpd`'s mixer control (src/mixer/MixerControl.cxx, MixerAll.cxx, output/Control.cxx):
/// nothing opened at start-up, a global mixer on its first use (and not again after a failure, until its output opens
/// or is disabled), any mixer when its output opens, one that is not global closed with its output; failures logged
/// under the mixer domain with `mpd`'s words.
@Suite struct PlayerMixerLifecycleTests {
    /// A mixer that counts its opens and closes, and fails to open or read while told to. Any thread.
    final class ScriptedMixer: Mixer, Sendable {
        let isGlobal: Bool
        let opens = Atomic<Int>(0)
        let closes = Atomic<Int>(0)
        let failOpen = Atomic<Bool>(false)
        let failRead = Atomic<Bool>(false)
        let level = Atomic<Int>(70)

        init(global: Bool) { self.isGlobal = global }

        func open() throws(OutputError) {
            if self.failOpen.load(ordering: .relaxed) { throw OutputError("failed to attach to mix: No such device") }
            self.opens.add(1, ordering: .relaxed)
        }
        func close() { self.closes.add(1, ordering: .relaxed) }
        func volume() throws(OutputError) -> Int {
            if self.failRead.load(ordering: .relaxed) { throw OutputError("snd_mixer_handle_events() failed") }
            return self.level.load(ordering: .relaxed)
        }
        func setVolume(_ volume: Int) throws(OutputError) { self.level.store(volume, ordering: .relaxed) }
    }

    /// The lines logged, in order.
    final class LogLines: Sendable {
        private let lines = Mutex<[String]>([])
        var logger: Logger {
            Logger(label: "player", threshold: .info) { _, line in self.lines.withLock { $0.append(line) } }
        }
        var all: [String] { self.lines.withLock { $0 } }
        func matching(_ part: String) -> [String] { self.all.filter { $0.contains(part) } }
    }

    private func harness(_ mixer: ScriptedMixer, _ output: CaptureOutput, log: LogLines = LogLines()) throws
        -> PlayerHarness
    {
        try PlayerHarness(
            outputs: [(nullConfiguration("Card", mixer: .hardware), output, mixer)], logger: log.logger)
    }

    private func playing(_ harness: PlayerHarness) {
        harness.withPlayer { $0.play(fakeSong(1, base: 0, frames: 441_000), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.songStarted(token: 1)) })
    }

    @Test func aGlobalMixerOpensOnItsFirstUseNotAtStartUp() throws {
        let mixer = ScriptedMixer(global: true)
        let harness = try self.harness(mixer, CaptureOutput(sync: false))
        #expect(mixer.opens.load(ordering: .relaxed) == 0)
        #expect(harness.withPlayer { $0.volume } == 70)
        #expect(harness.withPlayer { $0.setVolume(40) } == .changed)
        #expect(harness.withPlayer { $0.volume } == 40)
        #expect(mixer.opens.load(ordering: .relaxed) == 1)
    }

    /// A global mixer that cannot open: the first read logs mpd's line and shows no volume, later reads try no more
    /// and log nothing; a set fails with the kept failure each time (logged each time); the output opening opens it.
    @Test func aGlobalMixerThatFailsIsOpenedAgainWhenItsOutputOpens() throws {
        let mixer = ScriptedMixer(global: true)
        mixer.failOpen.store(true, ordering: .relaxed)
        let log = LogLines()
        let harness = try self.harness(mixer, CaptureOutput(sync: true), log: log)
        #expect(harness.withPlayer { $0.volume } == nil)
        #expect(harness.withPlayer { $0.volume } == nil)
        #expect(
            log.matching("mixer: ") == [
                "mixer: Failed to read mixer for 'Card': failed to attach to mix: No such device"
            ])
        let failure = VolumeChange.failed("Failed to set mixer for 'Card'; failed to attach to mix: No such device")
        #expect(harness.withPlayer { $0.setVolume(30) } == failure)
        #expect(log.matching("mixer: ").count == 2)
        #expect(log.all.last == "mixer: Failed to set mixer for 'Card': failed to attach to mix: No such device")
        mixer.failOpen.store(false, ordering: .relaxed)
        // Still the failure kept: a read does not try again.
        #expect(harness.withPlayer { $0.volume } == nil)
        #expect(mixer.opens.load(ordering: .relaxed) == 0)
        self.playing(harness)
        #expect(eventually { harness.withPlayer { $0.volume } == 70 })
        #expect(mixer.opens.load(ordering: .relaxed) == 1)
        harness.withPlayer { $0.stop() }
        // A global mixer stays open when its output closes.
        #expect(harness.withPlayer { $0.volume } == 70)
        #expect(mixer.closes.load(ordering: .relaxed) == 0)
    }

    /// The output opening and its mixer failing to: mpd's line in the output domain.
    @Test func aMixerFailingToOpenWithItsOutputIsLogged() throws {
        let mixer = ScriptedMixer(global: false)
        mixer.failOpen.store(true, ordering: .relaxed)
        let log = LogLines()
        let harness = try self.harness(mixer, CaptureOutput(sync: true), log: log)
        self.playing(harness)
        #expect(eventually { !log.matching("output: ").isEmpty })
        #expect(
            log.matching("output: ") == [
                "output: Failed to open mixer for 'Card': failed to attach to mix: No such device"
            ])
        #expect(harness.withPlayer { $0.volume } == nil)
    }

    /// A failed read closes the mixer and keeps the failure: no volume and no line after, sets fail with it; disabling
    /// the output forgets nothing (mpd's `mixer_close` of a closed mixer keeps its failure); its output opening opens it.
    @Test func aFailedReadClosesTheMixerUntilItsOutputOpens() throws {
        let mixer = ScriptedMixer(global: true)
        let log = LogLines()
        let harness = try self.harness(mixer, CaptureOutput(sync: true), log: log)
        #expect(harness.withPlayer { $0.volume } == 70)
        mixer.failRead.store(true, ordering: .relaxed)
        #expect(harness.withPlayer { $0.volume } == nil)
        #expect(mixer.closes.load(ordering: .relaxed) == 1)
        mixer.failRead.store(false, ordering: .relaxed)
        #expect(harness.withPlayer { $0.volume } == nil)
        #expect(log.matching("mixer: ") == ["mixer: Failed to read mixer for 'Card': snd_mixer_handle_events() failed"])
        #expect(
            harness.withPlayer { $0.setVolume(10) }
                == .failed("Failed to set mixer for 'Card'; snd_mixer_handle_events() failed"))
        harness.withPlayer {
            _ = $0.setOutput(id: 0, enabled: false)
            _ = $0.setOutput(id: 0, enabled: true)
        }
        #expect(harness.withPlayer { $0.volume } == nil)
        #expect(mixer.opens.load(ordering: .relaxed) == 1)
        self.playing(harness)
        #expect(eventually { harness.withPlayer { $0.volume } == 70 })
        #expect(mixer.opens.load(ordering: .relaxed) == 2)
    }

    /// Disabling an output closes its mixer, global or not; the next read opens a global one again.
    @Test func disablingAnOutputClosesItsMixer() throws {
        let mixer = ScriptedMixer(global: true)
        let harness = try self.harness(mixer, CaptureOutput(sync: false))
        #expect(harness.withPlayer { $0.volume } == 70)
        harness.withPlayer { _ = $0.setOutput(id: 0, enabled: false) }
        #expect(mixer.closes.load(ordering: .relaxed) == 1)
        #expect(harness.withPlayer { $0.volume } == nil)
        harness.withPlayer { _ = $0.setOutput(id: 0, enabled: true) }
        #expect(harness.withPlayer { $0.volume } == 70)
        #expect(mixer.opens.load(ordering: .relaxed) == 2)
    }

    /// A mixer that is not global (pulse, sndio): closed until its output opens, closed again when the output pauses
    /// without a pause mode, and when it stops; never opened by a read.
    @Test func aMixerThatIsNotGlobalFollowsItsOutput() throws {
        let mixer = ScriptedMixer(global: false)
        let output = CaptureOutput(sync: true, hasPauseMode: false)
        let harness = try self.harness(mixer, output)
        #expect(harness.withPlayer { $0.volume } == nil)
        #expect(harness.withPlayer { $0.setVolume(20) } == .changed)
        #expect(mixer.opens.load(ordering: .relaxed) == 0)
        self.playing(harness)
        #expect(eventually { harness.withPlayer { $0.volume } == 70 })
        harness.withPlayer { $0.setPaused(true) }
        #expect(harness.withPlayer { $0.volume } == nil)
        #expect(mixer.closes.load(ordering: .relaxed) == 1)
        // The resume is answered once the output opened again, and its mixer with it.
        harness.withPlayer { $0.setPaused(false) }
        harness.waitForOutputs()
        #expect(harness.withPlayer { $0.volume } == 70)
        harness.withPlayer { $0.stop() }
        #expect(harness.withPlayer { $0.volume } == nil)
        #expect(mixer.closes.load(ordering: .relaxed) == 2)
    }

    /// Through a pause, the mixer of an output with a pause mode stays open.
    @Test func aPauseModeKeepsTheMixerOpen() throws {
        let mixer = ScriptedMixer(global: false)
        let harness = try self.harness(mixer, CaptureOutput(sync: true))
        self.playing(harness)
        #expect(eventually { harness.withPlayer { $0.volume } == 70 })
        harness.withPlayer { $0.setPaused(true) }
        harness.waitForOutputs()
        #expect(harness.withPlayer { $0.volume } == 70)
        #expect(mixer.closes.load(ordering: .relaxed) == 0)
    }

    @Test func mixerControlKeepsMPDsStates() throws {
        let mixer = ScriptedMixer(global: false)
        let control = MixerControl(mixer)
        // Not open, no failure: a set is taken by nobody, a read says none.
        try control.setVolume(10)
        #expect(try control.volume() == -1)
        mixer.failOpen.store(true, ordering: .relaxed)
        #expect(throws: OutputError("failed to attach to mix: No such device")) { try control.open() }
        #expect(throws: OutputError("failed to attach to mix: No such device")) { try control.setVolume(10) }
        // Closing a mixer that is not open keeps its failure.
        control.close()
        #expect(throws: OutputError("failed to attach to mix: No such device")) { try control.setVolume(10) }
        mixer.failOpen.store(false, ordering: .relaxed)
        try control.open()
        try control.open()
        #expect(mixer.opens.load(ordering: .relaxed) == 1)
        #expect(try control.volume() == 70)
        control.autoClose()
        #expect(!control.isOpen)
        let global = MixerControl(ScriptedMixer(global: true))
        #expect(try global.volume() == 70)
        global.autoClose()
        #expect(global.isOpen)
    }
}
