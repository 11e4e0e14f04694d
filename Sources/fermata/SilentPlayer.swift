// SPDX-License-Identifier: GPL-3.0-or-later

import Playback

/// A stand-in player that plays nothing and stays stopped, with no mixer and no outputs.
///
/// Only here so the daemon builds before the real `Player` exists; `Daemon.makePlayer` is the one caller.
/// Loop-confined.
final class SilentPlayer: PlayerControl {
    var onEvent: (PlayerEvent) -> Void = { _ in }
    var borderPause = false
    var crossfadeSeconds = 0.0
    var mixRampDB = 0.0
    var mixRampDelay = -1.0
    var replayGainMode = ReplayGainMode.off

    func play(_ song: PlayableSong, atSeconds seconds: Double) {}
    func queue(_ song: PlayableSong?) {}
    func setPaused(_ paused: Bool) {}
    func stop() {}
    func seek(token: UInt64, toSeconds seconds: Double) -> Bool { false }
    var snapshot: PlayerSnapshot { PlayerSnapshot() }
    var volume: Int? { nil }
    func setVolume(_ volume: Int) -> Bool { false }
    var outputs: [OutputDescription] { [] }
    func setOutput(id: Int, enabled: Bool) -> Bool { false }
    func setOutputAttribute(id: Int, name: String, value: String) throws(OutputError) -> Bool { false }
    func shutdown() {}
}
