// SPDX-License-Identifier: GPL-3.0-or-later

/// A `window START:END` (MPDProtocol parses it): zero-based, END excluded, applied after sorting.
public struct WindowRange: Sendable, Hashable {
    /// The first index.
    public var start: Int
    /// One past the last index, or `nil` for open-ended.
    public var end: Int?

    /// Creates a window.
    public init(start: Int, end: Int?) {
        self.start = start
        self.end = end
    }

    /// Everything: the default when no `window` is given.
    public static let all = WindowRange(start: 0, end: nil)

    /// Whether this is `all`.
    public var isAll: Bool { self == .all }

    /// The indices of `count` results that the window keeps (empty when START is past the end).
    public func indices(count: Int) -> Range<Int> {
        let upper = min(self.end ?? count, count)
        return self.start >= upper ? upper..<upper : self.start..<upper
    }
}
