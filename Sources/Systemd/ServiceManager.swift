// SPDX-License-Identifier: GPL-3.0-or-later

import CSystemd

/// Telling the service manager (systemd) how the service is doing, through libsystemd's `sd_notify`.
///
/// Without `NOTIFY_SOCKET` in the environment (not started by systemd as a `Type=notify` service) every call does
/// nothing. Any thread.
public enum ServiceManager {
    /// Reports that start-up is complete (`READY=1`): the sockets listen and the first client can be served.
    ///
    /// - Returns: Whether a service manager was told (`false` when none listens, or the message could not be sent).
    @discardableResult
    public static func notifyReady() -> Bool {
        sd_notify(0, "READY=1") > 0
    }
}
