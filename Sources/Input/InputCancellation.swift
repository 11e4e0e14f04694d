// SPDX-License-Identifier: GPL-3.0-or-later

import Synchronization

/// Interrupts a blocking open or read of a remote input from another thread: the player cancels the song
/// being opened or decoded when it must move on (`stop`, `play` of another song), so the event loop never
/// waits on a stalled server.
///
/// One per opened song. Any thread.
public final class InputCancellation: Sendable {
    private struct State {
        var isCancelled = false
        var handler: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    /// A cancellation that has not happened.
    public init() {}

    /// Whether `cancel()` was called.
    public var isCancelled: Bool { self.state.withLock { $0.isCancelled } }

    /// Cancels: calls the handler (once). Any thread.
    public func cancel() {
        let handler = self.state.withLock { state -> (@Sendable () -> Void)? in
            guard !state.isCancelled else { return nil }
            state.isCancelled = true
            defer { state.handler = nil }
            return state.handler
        }
        handler?()
    }

    /// Sets what `cancel()` calls (the input's own interruption), replacing an earlier handler; called at
    /// once when already cancelled.
    public func onCancel(_ handler: @escaping @Sendable () -> Void) {
        let late = self.state.withLock { state -> Bool in
            if state.isCancelled { return true }
            state.handler = handler
            return false
        }
        if late { handler() }
    }
}
