// SPDX-License-Identifier: GPL-3.0-or-later

import Foundation

extension Thread {
    /// Starts a thread named `name` that runs `body`. Loop thread.
    ///
    /// The name is set from inside: on Linux, Foundation passes a name set before `start()` on to nothing the
    /// system shows (top -H, gdb, /proc/PID/task/*/comm).
    static func startNamed(_ name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            Thread.current.name = name
            body()
        }
        thread.start()
    }
}
