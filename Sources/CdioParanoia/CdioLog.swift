// SPDX-License-Identifier: GPL-3.0-or-later

import CCdioParanoia
import Model
import Synchronization

/// Where libcdio's own messages (`can't open nrg image file …`) go: our log instead of standard error.
///
/// libcdio has one process-wide handler. ``install(_:)`` sets it and chooses the logger; any thread.
public enum CdioLog {
    fileprivate static let destination = Mutex<Logger?>(nil)

    /// Sends libcdio's messages to `logger` (at `info`: the stream reports its own error for what failed).
    public static func install(_ logger: Logger) {
        Self.destination.withLock { $0 = logger }
        _ = cdio_log_set_handler { _, message in
            guard let logger = CdioLog.destination.withLock({ $0 }) else { return }
            logger.info("libcdio", ["message": message.map { String(cString: $0) } ?? ""])
        }
    }
}
