// SPDX-License-Identifier: GPL-3.0-or-later

import CDBus
import Glibc
import Synchronization

/// A failure of libdbus or of a method call, in the words `mpd` reports it.
public struct DBusError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    /// The caller gave up on the call (the `interruptedBy` descriptor of
    /// ``DBusConnection/call(destination:path:interface:method:emptyOptions:interruptedBy:)`` was readable).
    public let isInterrupted: Bool

    public init(_ description: String) { (self.description, self.isInterrupted) = (description, false) }

    private init(interrupted description: String) { (self.description, self.isInterrupted) = (description, true) }

    /// A call given up on before its reply came.
    public static let interrupted = DBusError(interrupted: "Interrupted")
}

/// A value read from a D-Bus message, as far as the callers need to tell it apart.
public indirect enum DBusValue: Sendable, Equatable {
    case string(String)
    case objectPath(String)
    /// An array of bytes (`ay`), read whole.
    case bytes([UInt8])
    case array([DBusValue])
    case dictEntry(DBusValue, DBusValue)
    case variant(DBusValue)
    /// Any other type, by its D-Bus type code.
    case other(Int32)
}

/// A message that came in on a connection (``DBusConnection/receive(orWakeOn:)``).
public enum DBusIncoming: Sendable, Equatable {
    case signal(path: String, interface: String, member: String, arguments: [DBusValue])
    /// The reply to the call sent with `serial`.
    case reply(serial: UInt32, arguments: [DBusValue])
    /// An error reply to the call sent with `serial`, its message.
    case error(serial: UInt32, message: String)
    /// Any other message.
    case other
}

/// A private connection to the D-Bus system bus (`DBUS_SYSTEM_BUS_ADDRESS`, else the standard socket), made and
/// used with blocking calls: call it from a thread that may wait, never the event loop. Calls from several threads
/// are serialised.
public final class DBusConnection: Sendable {
    private struct Handle: @unchecked Sendable { let pointer: OpaquePointer }
    private let handle: Mutex<Handle>

    /// Connects to the system bus, or to the bus at `address` (tests, which leave the process's environment
    /// alone); throws `DBus connection error: …` as `mpd` does.
    public init(address: String? = nil) throws(DBusError) {
        Self.initialiseThreads
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let made: OpaquePointer?
        if let address {
            made = dbus_connection_open_private(address, &error)
            if let made, dbus_bus_register(made, &error) == 0 {
                dbus_connection_close(made)
                dbus_connection_unref(made)
                throw DBusError("DBus connection error: " + Self.message(of: error))
            }
        } else {
            made = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error)
        }
        guard let connection = made, dbus_error_is_set(&error) == 0 else {
            throw DBusError("DBus connection error: " + Self.message(of: error))
        }
        dbus_connection_set_exit_on_disconnect(connection, 0)
        self.handle = Mutex(Handle(pointer: connection))
    }

    deinit {
        self.handle.withLock { handle in
            dbus_connection_close(handle.pointer)
            dbus_connection_unref(handle.pointer)
        }
    }

    /// libdbus's locking, for connections used from several threads; once per process.
    private static let initialiseThreads: Void = { _ = dbus_threads_init_default() }()

    private static func message(of error: CDBus.DBusError) -> String {
        error.message.map { String(cString: $0) } ?? "unknown error"
    }

    /// Calls `method` of `interface` on the object at `path` of `destination`, with an empty `a{sv}` (options) as
    /// its only argument when `emptyOptions`, waiting for the reply (libdbus's default timeout). Returns the
    /// reply's arguments; an error reply throws its message.
    public func call(
        destination: String, path: String, interface: String, method: String, emptyOptions: Bool = false
    ) throws(DBusError) -> [DBusValue] {
        let message = try Self.methodCall(destination, path, interface, method, emptyOptions: emptyOptions)
        defer { dbus_message_unref(message) }
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let answer = self.handle.withLock { handle in
            dbus_connection_send_with_reply_and_block(handle.pointer, message, -1, &error).map(Handle.init)
        }
        guard let reply = answer?.pointer, dbus_error_is_set(&error) == 0 else {
            throw DBusError(Self.message(of: error))
        }
        defer { dbus_message_unref(reply) }
        return Self.arguments(of: reply)
    }

    /// As ``call(destination:path:interface:method:emptyOptions:)``, but gives up as soon as `wake` (a descriptor,
    /// an eventfd another thread signals) is readable: throws ``DBusError/interrupted`` then, and the reply, should
    /// it come, is dropped. Waits on the connection's socket and `wake` only, at most libdbus's default timeout
    /// (25 s), then throws libdbus's no-reply error. Other messages that come in meanwhile are dispatched (to no
    /// handler: dropped).
    public func call(
        destination: String, path: String, interface: String, method: String, emptyOptions: Bool = false,
        interruptedBy wake: Int32
    ) throws(DBusError) -> [DBusValue] {
        let message = try Self.methodCall(destination, path, interface, method, emptyOptions: emptyOptions)
        defer { dbus_message_unref(message) }
        let sent = self.handle.withLock { handle -> Handle? in
            var pending: OpaquePointer? = nil
            guard dbus_connection_send_with_reply(handle.pointer, message, &pending, -1) != 0, let pending else {
                return nil
            }
            dbus_connection_flush(handle.pointer)
            return Handle(pointer: pending)
        }
        guard let pending = sent?.pointer else { throw DBusError("Disconnected from the bus") }
        defer { dbus_pending_call_unref(pending) }
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        deadline.tv_sec += Self.defaultTimeoutSeconds
        while true {
            let (answer, fd) = self.handle.withLock { handle -> (Handle?, Int32) in
                _ = dbus_connection_read_write(handle.pointer, 0)
                while dbus_connection_dispatch(handle.pointer) == DBUS_DISPATCH_DATA_REMAINS {}
                var fd: Int32 = -1
                _ = dbus_connection_get_unix_fd(handle.pointer, &fd)
                guard dbus_pending_call_get_completed(pending) != 0 else { return (nil, fd) }
                return (dbus_pending_call_steal_reply(pending).map(Handle.init), fd)
            }
            if let reply = answer?.pointer {
                defer { dbus_message_unref(reply) }
                return try Self.result(of: reply)
            }
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let left = (deadline.tv_sec - now.tv_sec) * 1000 + (deadline.tv_nsec - now.tv_nsec) / 1_000_000
            guard fd >= 0, left > 0 else {
                dbus_pending_call_cancel(pending)
                throw DBusError(fd >= 0 ? Self.noReply : "Disconnected from the bus")
            }
            var fds = [
                pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, Int32(left))
            if ready < 0 && errno != EINTR { throw DBusError(String(cString: strerror(errno))) }
            if ready > 0 && fds[1].revents != 0 {
                dbus_pending_call_cancel(pending)
                throw .interrupted
            }
        }
    }

    /// libdbus's default timeout of a call (`DBUS_TIMEOUT_USE_DEFAULT`).
    private static let defaultTimeoutSeconds = 25
    /// libdbus's message for a call whose reply did not come in time.
    private static let noReply =
        "Did not receive a reply. Possible causes include: the remote application did not send a reply, the message "
        + "bus security policy blocked the reply, the reply timeout expired, or the network connection was broken."

    /// A reply's arguments; an error reply throws its message, as libdbus sets it.
    private static func result(of reply: OpaquePointer) throws(DBusError) -> [DBusValue] {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        if dbus_set_error_from_message(&error, reply) != 0 { throw DBusError(Self.message(of: error)) }
        return Self.arguments(of: reply)
    }

    /// Sends a call of `method` (no arguments) without waiting; its reply comes through ``receive(orWakeOn:)``
    /// with the serial returned.
    public func send(destination: String, path: String, interface: String, method: String) throws(DBusError)
        -> UInt32
    {
        let message = try Self.methodCall(destination, path, interface, method, emptyOptions: false)
        defer { dbus_message_unref(message) }
        var serial: UInt32 = 0
        let sent = self.handle.withLock { handle in
            guard dbus_connection_send(handle.pointer, message, &serial) != 0 else { return false }
            dbus_connection_flush(handle.pointer)
            return true
        }
        guard sent else { throw DBusError("Out of memory") }
        return serial
    }

    /// Asks the bus for the signals `rule` matches (waits for the bus's answer); throws `DBus AddMatch error: …`.
    public func addMatch(_ rule: String) throws(DBusError) {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        self.handle.withLock { handle in dbus_bus_add_match(handle.pointer, rule, &error) }
        if dbus_error_is_set(&error) != 0 { throw DBusError("DBus AddMatch error: " + Self.message(of: error)) }
    }

    /// The next message that came in (a signal, a reply to ``send(destination:path:interface:method:)``), waiting
    /// for one; `nil` once `wake` (a descriptor, an eventfd) is readable or the connection is lost. For a thread that
    /// owns the connection: a call waiting meanwhile would wait for it.
    public func receive(orWakeOn wake: Int32) -> DBusIncoming? {
        while true {
            let (message, fd, open) = self.handle.withLock { handle -> (Handle?, Int32, Bool) in
                let open = dbus_connection_read_write(handle.pointer, 0) != 0
                var fd: Int32 = -1
                _ = dbus_connection_get_unix_fd(handle.pointer, &fd)
                return (dbus_connection_pop_message(handle.pointer).map(Handle.init), fd, open)
            }
            if let message = message?.pointer {
                defer { dbus_message_unref(message) }
                return Self.incoming(message)
            }
            guard open, fd >= 0 else { return nil }
            var fds = [
                pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, -1)
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 || fds[1].revents != 0 { return nil }
        }
    }

    private static func incoming(_ message: OpaquePointer) -> DBusIncoming {
        let text = { (value: UnsafePointer<CChar>?) in value.map { String(cString: $0) } ?? "" }
        switch dbus_message_get_type(message) {
        case DBUS_MESSAGE_TYPE_SIGNAL:
            return .signal(
                path: text(dbus_message_get_path(message)), interface: text(dbus_message_get_interface(message)),
                member: text(dbus_message_get_member(message)), arguments: Self.arguments(of: message))
        case DBUS_MESSAGE_TYPE_METHOD_RETURN:
            return .reply(serial: dbus_message_get_reply_serial(message), arguments: Self.arguments(of: message))
        case DBUS_MESSAGE_TYPE_ERROR:
            // The error's text, else its name, as libdbus reports an error reply.
            let arguments = Self.arguments(of: message)
            let description: String
            if case .string(let first) = arguments.first {
                description = first
            } else {
                description = text(dbus_message_get_error_name(message))
            }
            return .error(serial: dbus_message_get_reply_serial(message), message: description)
        default:
            return .other
        }
    }

    /// A method call message (owned by the caller), with an empty `a{sv}` argument when `emptyOptions`.
    private static func methodCall(
        _ destination: String, _ path: String, _ interface: String, _ method: String, emptyOptions: Bool
    ) throws(DBusError) -> OpaquePointer {
        guard let message = dbus_message_new_method_call(destination, path, interface, method) else {
            throw DBusError("dbus_message_new_method_call() failed")
        }
        if emptyOptions {
            var iterator = DBusMessageIter()
            var options = DBusMessageIter()
            dbus_message_iter_init_append(message, &iterator)
            guard dbus_message_iter_open_container(&iterator, fermata_dbus_type_array, "{sv}", &options) != 0,
                dbus_message_iter_close_container(&iterator, &options) != 0
            else {
                dbus_message_unref(message)
                throw DBusError("Out of memory")
            }
        }
        return message
    }

    private static func arguments(of message: OpaquePointer) -> [DBusValue] {
        var iterator = DBusMessageIter()
        guard dbus_message_iter_init(message, &iterator) != 0 else { return [] }
        return Self.values(&iterator)
    }

    /// The values from `iterator` to the end of its container.
    private static func values(_ iterator: inout DBusMessageIter) -> [DBusValue] {
        var values: [DBusValue] = []
        while true {
            let type = dbus_message_iter_get_arg_type(&iterator)
            if type == fermata_dbus_type_invalid { break }
            values.append(Self.value(&iterator, type: type))
            dbus_message_iter_next(&iterator)
        }
        return values
    }

    private static func value(_ iterator: inout DBusMessageIter, type: Int32) -> DBusValue {
        switch type {
        case fermata_dbus_type_string, fermata_dbus_type_object_path:
            var text: UnsafePointer<CChar>? = nil
            dbus_message_iter_get_basic(&iterator, &text)
            let string = text.map { String(cString: $0) } ?? ""
            return type == fermata_dbus_type_string ? .string(string) : .objectPath(string)
        case fermata_dbus_type_array:
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &inner)
            if dbus_message_iter_get_element_type(&iterator) == fermata_dbus_type_byte {
                var bytes: UnsafePointer<UInt8>? = nil
                var count: Int32 = 0
                if dbus_message_iter_get_arg_type(&inner) == fermata_dbus_type_byte {
                    dbus_message_iter_get_fixed_array(&inner, &bytes, &count)
                }
                return .bytes(bytes.map { Array(UnsafeBufferPointer(start: $0, count: Int(count))) } ?? [])
            }
            return .array(Self.values(&inner))
        case fermata_dbus_type_dict_entry:
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &inner)
            let pair = Self.values(&inner)
            return pair.count == 2 ? .dictEntry(pair[0], pair[1]) : .other(type)
        case fermata_dbus_type_variant:
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &inner)
            return Self.values(&inner).first.map { .variant($0) } ?? .other(type)
        default:
            return .other(type)
        }
    }
}
