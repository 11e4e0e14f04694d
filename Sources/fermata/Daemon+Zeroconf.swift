// SPDX-License-Identifier: GPL-3.0-or-later

import Configuration
import Model
import Posix
import Zeroconf

extension Daemon {
    /// Starts announcing `_mpd._tcp` on the TCP port among `listeners` (the bound ones), as `zeroconf_enabled`
    /// and `zeroconf_name` say; `nil` when disabled or when only Unix sockets are bound. Main thread, after the
    /// listeners are bound and the signal mask is set. Never fails: zeroconf problems are logged, not fatal.
    static func startZeroconf(settings: Settings, listeners: [SocketAddress], logger: Logger) -> ZeroconfPublisher? {
        guard settings.zeroconfEnabled else { return nil }
        let logger = logger.labelled("zeroconf")
        guard
            let service = ZeroconfService(
                nameTemplate: settings.zeroconfName, hostName: ZeroconfService.currentHostName(), listeners: listeners,
                preferredPort: UInt16(clamping: settings.port))
        else {
            logger.warning("no TCP listener; zeroconf disabled")
            return nil
        }
        let publisher = ZeroconfPublisher(service: service, logger: logger)
        publisher.start()
        return publisher
    }
}
