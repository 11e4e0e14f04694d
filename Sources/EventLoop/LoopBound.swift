// SPDX-License-Identifier: GPL-3.0-or-later

/// A reference to a loop-confined object that may travel through other threads but is only opened on
/// the loop: the way a worker thread hands its result back to the object that started it.
///
/// `@unchecked Sendable`: `value` is only reachable through `get()`, which traps off the loop thread.
public struct LoopBound<Value: AnyObject>: @unchecked Sendable {
    private let value: Value
    private let loop: EventLoop

    /// Wraps `value`, which belongs to `loop`. Call on the loop thread.
    public init(_ value: Value, loop: EventLoop) {
        loop.preconditionOnLoop()
        self.value = value
        self.loop = loop
    }

    /// The object; traps unless called on the loop thread.
    public func get() -> Value {
        self.loop.preconditionOnLoop()
        return self.value
    }

    /// Runs `body` with the object on the loop thread, soon. Safe from any thread.
    public func execute(_ body: @escaping @Sendable (Value) -> Void) {
        let bound = self
        self.loop.execute { body(bound.get()) }
    }
}
