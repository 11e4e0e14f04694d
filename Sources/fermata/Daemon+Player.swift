// SPDX-License-Identifier: GPL-3.0-or-later

import Configuration
import Model
import Network
import Playback

extension Daemon {
    /// The player the server's queue drives: the one place that picks it. Called once, on the loop thread.
    ///
    /// Until the real `Player` (decoder and output threads) is merged this returns `SilentPlayer`, which plays
    /// nothing; replace the body with the real player's construction.
    static func makePlayer(settings: Settings, loop: EventLoop, logger: Logger) -> any PlayerControl {
        SilentPlayer()
    }
}
