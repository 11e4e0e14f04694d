// SPDX-License-Identifier: GPL-3.0-or-later

import Configuration
import Model
import Posix
import Snapcast
import Zeroconf

extension Daemon {
    /// Starts announcing `_mpd._tcp` on the TCP port among `listeners` (the bound ones), as `zeroconf_enabled`
    /// and `zeroconf_name` say; `nil` when disabled or when only Unix sockets are bound. Main thread, after the
    /// listeners are bound and the signal mask is set. Never fails: zeroconf problems are logged, not fatal.
    static func startZeroconf(settings: Settings, listeners: [SocketAddress], logger: Logger) -> ZeroconfPublisher? {
        Self.log(settings.reports(at: .zeroconf), logger: logger)
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

/// Announces an output's service (the snapcast output's `_snapcast._tcp`) through a publisher of its own, as `mpd`'s
/// outputs do whatever `zeroconf_enabled` says.
struct OutputZeroconf: ServiceAnnouncer {
    let logger: Logger

    func announce(name: String, type: String, port: UInt16, listeners: [SocketAddress]) -> (@Sendable () -> Void)? {
        guard
            let service = ZeroconfService(
                nameTemplate: name, hostName: ZeroconfService.currentHostName(), listeners: listeners,
                preferredPort: port, type: type)
        else { return nil }
        let publisher = ZeroconfPublisher(service: service, logger: self.logger.labelled("zeroconf"))
        publisher.start()
        return { publisher.stop() }
    }
}
