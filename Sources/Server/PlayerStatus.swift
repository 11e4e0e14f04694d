// SPDX-License-Identifier: GPL-3.0-or-later

/// The playback state `status` reports.
///
/// Issue 4 replaces this with the real queue and player; until then the queue is empty, playback is
/// stopped and the options keep `mpd`'s start-up values.
struct PlayerStatus {
    /// `single` mode.
    enum SingleMode {
        case off, on, oneshot

        var wireValue: String {
            switch self {
            case .off: "0"
            case .on: "1"
            case .oneshot: "oneshot"
            }
        }
    }

    /// The player state.
    enum State: String {
        case stop, play, pause
    }

    var repeatMode = false
    var random = false
    var single = SingleMode.off
    var consume = false
    /// `mpd` starts the queue version at 1.
    var queueVersion: UInt32 = 1
    var queueLength = 0
    var mixRampDB = 0.0
    var state = State.stop
    var playTimeSeconds: UInt64 = 0
}
