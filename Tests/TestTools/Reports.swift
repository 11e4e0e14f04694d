// SPDX-License-Identifier: GPL-3.0-or-later

import Synchronization

/// Messages a component reported through a `reportFailure`-style closure (a library that cannot be loaded),
/// collected for the test to count.
public final class Reports: Sendable {
    private let messages = Mutex<[String]>([])

    /// An empty collection.
    public init() {}

    /// The closure to hand the component.
    public var reporter: @Sendable (String) -> Void { { message in self.messages.withLock { $0.append(message) } } }
    /// What was reported, in order.
    public var all: [String] { self.messages.withLock { $0 } }
}
