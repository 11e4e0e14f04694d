// SPDX-License-Identifier: GPL-3.0-or-later

import CLinux
import Glibc

/// A thread of the server's own (decoder, outputs, library update), started with a name the system shows in
/// `top -H`, gdb and `/proc/PID/task/*/comm`.
///
/// The name is set by the new thread itself before `body` runs, cut to the 15 bytes Linux keeps (at a UTF-8
/// character boundary). The stack is the system's default, as for any `pthread_create`.
public struct NamedThread: Sendable {
    /// The pthread handle; only used to join.
    private let handle: pthread_t

    /// Starts a thread named `name` that runs `body`. Any thread.
    ///
    /// The thread must be joined with ``join()`` exactly once; use ``detach(_:_:)`` for one nobody waits for.
    /// The corresponding C functions are `pthread_create` and `pthread_setname_np`.
    public init(_ name: String, _ body: @escaping @Sendable () -> Void) {
        self.handle = Self.create(name, body)
    }

    /// Starts a detached thread named `name` that runs `body` and ends with it. Any thread.
    ///
    /// The corresponding C function is `pthread_detach`.
    public static func detach(_ name: String, _ body: @escaping @Sendable () -> Void) {
        pthread_detach(Self.create(name, body))
    }

    /// Waits for the thread to end. Any thread but this one, once.
    ///
    /// The corresponding C function is `pthread_join`.
    public func join() { pthread_join(self.handle, nil) }

    /// Lets the thread end on its own without being joined: instead of ``join()``, once. Any thread.
    ///
    /// The corresponding C function is `pthread_detach`.
    public func detach() { pthread_detach(self.handle) }

    /// The longest name Linux keeps, in bytes, without the terminating zero.
    static let maximumNameLength = 15

    /// `name` cut to ``maximumNameLength`` bytes without splitting a character's UTF-8 encoding.
    static func systemName(_ name: String) -> String {
        var cut = String.UnicodeScalarView()
        var length = 0
        for scalar in name.unicodeScalars {
            length += UTF8.width(scalar)
            if length > Self.maximumNameLength { break }
            cut.append(scalar)
        }
        return String(cut)
    }

    private static func create(_ name: String, _ body: @escaping @Sendable () -> Void) -> pthread_t {
        // Unmanaged: the retained start is released by the new thread.
        let context = Unmanaged.passRetained(ThreadStart(name: Self.systemName(name), body: body)).toOpaque()
        var handle = pthread_t()
        let result = pthread_create(
            &handle, nil,
            { context in
                Unmanaged<ThreadStart>.fromOpaque(context!).takeRetainedValue().run()
                return nil
            }, context)
        precondition(result == 0, "pthread_create failed: \(result)")
        return handle
    }
}

/// What a new thread runs: its name, then its body. Handed to the thread once, used only there.
private final class ThreadStart: Sendable {
    let name: String
    let body: @Sendable () -> Void

    init(name: String, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }

    func run() {
        _ = pthread_setname_np(pthread_self(), self.name)
        self.body()
    }
}
