// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation
import Model
import Playback
import Synchronization
import TestSupport
import Testing

/// `moveoutput`'s engine: an output leaves one player (a dummy stays in its place), plays another player's songs,
/// and comes back to its dummy's place.
@Suite struct PlayerOutputMoveTests {
    /// A second player on the harness's loop, with no output of its own (shut it down at the end).
    private func otherPlayer(_ harness: PlayerHarness, slots: Int) -> UncheckedBox<Player> {
        UncheckedBox(
            harness.sync { harness in
                Player(
                    loop: harness.loop, decoders: RampDecoder.factory, outputs: [], outputSlots: slots,
                    logger: .discarding)
            })
    }

    @Test func anOutputPlaysForTheOtherPlayerAndComesBack() throws {
        let first = CaptureOutput(sync: false)
        let second = CaptureOutput(sync: false)
        let harness = try PlayerHarness(
            outputs: [(nullConfiguration("One"), first, nil), (nullConfiguration("Two"), second, nil)], outputSlots: 2)
        let other = self.otherPlayer(harness, slots: 2)
        defer { harness.sync { _ in other.value.shutdown() } }
        let finished = Atomic<Bool>(false)
        harness.sync { _ in
            other.value.onEvent = { event in
                if case .finished(token: 7) = event { finished.store(true, ordering: .relaxed) }
            }
        }

        let moved = harness.withPlayer { $0.detachOutput(named: "Two") }
        #expect(moved?.name == "Two" && moved?.enabled == true)
        #expect(harness.withPlayer { $0.detachOutput(named: "Two") } == nil)
        #expect(
            harness.withPlayer { $0.outputs.map { "\($0.id) \($0.name) \($0.plugin) \($0.enabled)" } } == [
                "0 One capture true", "1 Two dummy false",
            ])
        let box = UncheckedBox(try #require(moved))
        harness.sync { _ in other.value.attachOutput(box.value) }
        #expect(
            harness.sync { _ in other.value.outputs.map { "\($0.id) \($0.name) \($0.plugin)" } } == ["0 Two capture"])

        // The other player's song reaches the moved output, and only it.
        harness.sync { _ in other.value.play(fakeSong(7, base: 5000, frames: 4410), atSeconds: 0) }
        #expect(eventually { finished.load(ordering: .relaxed) })
        #expect(isRamp(second.samples16(), from: 5000, count: 4410))
        #expect(first.bytes.isEmpty)

        // Back where it was: in its dummy's place, enabled as it was.
        let back = UncheckedBox(try #require(harness.sync { _ in other.value.detachOutput(named: "Two") }))
        #expect(harness.sync { _ in other.value.outputs.map(\.plugin) } == ["dummy"])
        harness.withPlayer { $0.attachOutput(back.value) }
        #expect(
            harness.withPlayer { $0.outputs.map { "\($0.id) \($0.name) \($0.plugin) \($0.enabled)" } } == [
                "0 One capture true", "1 Two capture true",
            ])
    }

    @Test func theOtherPlayerAppliesTheOutputOnceItsOldThreadLetGoOfTheDevice() throws {
        let moving = CaptureOutput(sync: false)
        let harness = try PlayerHarness(outputs: [(nullConfiguration("Two"), moving, nil)], outputSlots: 1)
        let other = self.otherPlayer(harness, slots: 1)
        defer { harness.sync { _ in other.value.shutdown() } }
        // Played here first: its device is enabled.
        harness.withPlayer { $0.play(fakeSong(1, base: 0, frames: 4410), atSeconds: 0) }
        #expect(harness.waitFor { $0.contains(.finished(token: 1)) })
        harness.sync { _ in other.value.play(fakeSong(2, base: 0, frames: 10), atSeconds: 0) }
        // The loop does not wait for the old thread: when the other player says its outputs applied their flags, the
        // old thread had disabled the device, and the new one enabled it again.
        let seen = Atomic<Int>(-1)
        let applied = DispatchSemaphore(value: 0)
        harness.withPlayer { player in
            guard let moved = player.detachOutput(named: "Two") else {
                applied.signal()
                return
            }
            other.value.attachOutput(moved)
            other.value.whenOutputsApplied {
                seen.store(
                    moving.disables.load(ordering: .relaxed) * 10 + moving.enables.load(ordering: .relaxed),
                    ordering: .releasing)
                applied.signal()
            }
        }
        applied.wait()
        #expect(seen.load(ordering: .acquiring) == 12)
    }
}
