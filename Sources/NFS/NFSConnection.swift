// SPDX-License-Identifier: GPL-3.0-or-later

import CNFS
import Glibc
import Input
import Model
import Synchronization

/// A failure of libnfs, in `mpd`'s words ("nfs_mount_async() failed: …", or libnfs's own text for a failed
/// call), or a cancelled wait.
public enum NFSError: Error, Sendable, Hashable {
    /// What `mpd` reports.
    case failed(String)
    /// The waiter's ``InputCancellation`` fired while it waited on the server.
    case cancelled
}

extension StorageFileStatus {
    /// libnfs's status of a file.
    init(_ status: nfs_stat_64) {
        let type = status.nfs_mode & UInt64(Glibc.S_IFMT)
        self.init(
            kind: type == UInt64(Glibc.S_IFREG) ? .regular : type == UInt64(Glibc.S_IFDIR) ? .directory : .other,
            size: Int64(clamping: status.nfs_size), modificationTime: Int64(clamping: status.nfs_mtime))
    }
}

/// One connection to an NFS export, shared by every stream and storage call of that server and export, as
/// `mpd`'s `NfsConnection` (``NFSConnectionPool`` hands it out). It mounts the export on its first call.
///
/// libnfs's asynchronous calls are driven by `poll` on the threads that wait for them: one of them at a time (the
/// driver) polls the socket and runs libnfs's callbacks, the others sleep on their ``NFSWaiter``'s eventfd until a
/// callback ran or the driver left. A waiter whose cancellation fires stops waiting at once and abandons its call
/// (a late answer is dropped, a late file handle closed), so a silent server holds only the waiters and one
/// stream's cancellation never breaks another's use of the connection. A failed mount or a lost connection fails
/// every call; the pool then makes a new connection for the next lease.
///
/// Any thread; every use of libnfs happens under one lock, never held while waiting.
final class NFSConnection: NFSPooledConnection, @unchecked Sendable {
    /// `struct nfs_context *` and what goes with it, only touched under the lock.
    /// Unchecked: only touched under the lock.
    private struct State: @unchecked Sendable {
        let context: OpaquePointer
        /// The mount, while it is in flight.
        var mount: Completion?
        var isMounted = false
        /// Why every call fails from now on.
        var failure: String?
        /// The waiter that polls the socket, if any.
        var driver: ObjectIdentifier?
        /// Whom to wake when a callback ran or the driver left.
        var waiters: [ObjectIdentifier: Wakeup] = [:]

        /// Wakes every waiter but `except`.
        func wakeWaiters(except: ObjectIdentifier? = nil) {
            for (identifier, wakeup) in self.waiters where identifier != except { wakeup.signal() }
        }

        var lastError: String {
            guard let text = nfs_get_error(self.context) else { return "<unknown>" }
            return String(cString: text)
        }
    }

    let server: String
    let export: String
    private let state: Mutex<State>

    /// How long one call may wait on the server: `mpd`'s mount timeout, applied to every call.
    private static let timeoutMilliseconds: Int32 = 60_000

    /// A connection to `server` for `export`: no traffic until the first call.
    ///
    /// - Parameter mountPort: the MOUNT protocol's port instead of the portmapper's answer (libnfs's `mountport`
    ///   URL argument), for tests.
    init(server: String, export: String, mountPort: UInt16? = nil) throws(NFSError) {
        guard let context = nfs_init_context() else { throw .failed("nfs_init_context() failed") }
        nfs_set_timeout(context, Self.timeoutMilliseconds)
        if let mountPort {
            // Parsing a URL sets its arguments on the context.
            guard let url = nfs_parse_url_dir(context, "nfs://\(server)\(export)?mountport=\(mountPort)") else {
                nfs_destroy_context(context)
                throw .failed("Malformed nfs:// URI")
            }
            nfs_destroy_url(url)
        }
        self.server = server
        self.export = export
        self.state = Mutex(State(context: context))
    }

    deinit {
        // Nobody uses it any more: completes whatever is still in flight (with an error) and frees every handle.
        self.state.withLock { nfs_destroy_context($0.context) }
    }

    /// Whether the mount failed or the connection was lost: every call fails.
    var isBroken: Bool { self.state.withLock { $0.failure != nil } }

    /// The largest read the server takes in one call (after the mount).
    var readMaximum: Int { self.state.withLock { Int(clamping: nfs_get_readmax($0.context)) } }

    /// Opens `path` (inside the export) read-only.
    func open(_ path: String, waiter: NFSWaiter) throws(NFSError) -> OpaquePointer {
        let completion = try self.call("nfs_open_async()", expecting: .file, waiter: waiter) {
            context, callback, data in
            nfs_open_async(context, path, O_RDONLY, callback, data)
        }
        guard let handle = completion.handle else { throw .failed("nfs_open_async() failed: no file handle") }
        return handle
    }

    /// Closes an open file without waiting: NFSv3 has no close call, so libnfs only frees the handle.
    func close(_ handle: OpaquePointer) {
        self.state.withLock { _ = nfs_close_async($0.context, handle, nfsIgnoredCallback, nil) }
    }

    /// The size, kind and modification time of an open file.
    func status(_ handle: OpaquePointer, waiter: NFSWaiter) throws(NFSError) -> StorageFileStatus {
        let completion = try self.call("nfs_fstat64_async()", expecting: .status, waiter: waiter) {
            context, callback, data in nfs_fstat64_async(context, handle, callback, data)
        }
        return StorageFileStatus(completion.status)
    }

    /// The size, kind and modification time of the file or directory at `path` (inside the export).
    func status(path: String, waiter: NFSWaiter) throws(NFSError) -> StorageFileStatus {
        let completion = try self.call("nfs_stat64_async()", expecting: .status, waiter: waiter) {
            context, callback, data in nfs_stat64_async(context, path, callback, data)
        }
        return StorageFileStatus(completion.status)
    }

    /// The names in the directory at `path` (inside the export), in the server's order, without `.` and `..`.
    func names(in path: String, waiter: NFSWaiter) throws(NFSError) -> [String] {
        let completion = try self.call("nfs_opendir_async()", expecting: .directory, waiter: waiter) {
            context, callback, data in nfs_opendir_async(context, path, callback, data)
        }
        guard let directory = completion.handle else { throw .failed("nfs_opendir_async() failed") }
        return self.state.withLock { state in
            defer { nfs_closedir(state.context, directory) }
            var names: [String] = []
            // libnfs read the whole directory before the callback: nfs_readdir does not wait.
            while let entry = nfs_readdir(state.context, directory) {
                guard let name = entry.pointee.name else { continue }
                let text = String(cString: name)
                if text != "." && text != ".." { names.append(text) }
            }
            return names
        }
    }

    /// Reads at most `buffer.count` bytes (at most ``readMaximum``) at `offset`.
    ///
    /// - Returns: bytes read; 0 at the end of the file.
    func read(
        _ handle: OpaquePointer, at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer, waiter: NFSWaiter
    ) throws(NFSError) -> Int {
        let completion = try self.call("nfs_pread_async()", expecting: .bytes, waiter: waiter, destination: buffer) {
            context, callback, data in nfs_pread_async(context, handle, offset, UInt64(buffer.count), callback, data)
        }
        return completion.count
    }

    /// Mounts the export unless that was done, then starts one asynchronous call and waits for its callback.
    ///
    /// - Parameters:
    ///   - name: the call, for `mpd`'s "NAME failed: …" when it cannot start.
    ///   - destination: where a read's bytes go.
    private func call(
        _ name: String, expecting expected: Completion.Result, waiter: NFSWaiter,
        destination: UnsafeMutableRawBufferPointer? = nil,
        _ start: (OpaquePointer, nfs_cb, UnsafeMutableRawPointer) -> Int32
    ) throws(NFSError) -> Completion {
        try self.mount(waiter: waiter)
        let started: Result<Completion, NFSError> = self.state.withLock { state in
            if let failure = state.failure { return .failure(.failed(failure)) }
            let completion = Completion(expecting: expected, destination: destination)
            // Retained until its callback ran, which may be after its waiter gave up.
            let data = Unmanaged.passRetained(completion).toOpaque()
            guard start(state.context, nfsCompletionCallback, data) == 0 else {
                Unmanaged<Completion>.fromOpaque(data).release()
                return .failure(.failed("\(name) failed: \(state.lastError)"))
            }
            // The driver polls for what libnfs wants now (the request is queued for writing).
            if let driver = state.driver { state.waiters[driver]?.signal() }
            return .success(completion)
        }
        let completion = try started.get()
        try self.wait(for: completion, waiter: waiter)
        if let failure = completion.failure { throw .failed(failure) }
        return completion
    }

    /// Mounts the export, or waits for the mount another waiter started.
    ///
    /// - Throws: `mpd`'s "nfs_mount_async() failed: …" for this and every later call when the mount failed.
    private func mount(waiter: NFSWaiter) throws(NFSError) {
        let pending: Result<Completion?, NFSError> = self.state.withLock { state in
            if let failure = state.failure { return .failure(.failed(failure)) }
            if state.isMounted { return .success(nil) }
            if let mount = state.mount { return .success(mount) }
            let completion = Completion(expecting: .mount, destination: nil)
            let data = Unmanaged.passRetained(completion).toOpaque()
            guard nfs_mount_async(state.context, self.server, self.export, nfsCompletionCallback, data) == 0 else {
                Unmanaged<Completion>.fromOpaque(data).release()
                state.failure = "nfs_mount_async() failed: \(state.lastError)"
                return .failure(.failed(state.failure!))
            }
            state.mount = completion
            return .success(completion)
        }
        guard let mount = try pending.get() else { return }
        try self.wait(for: mount, waiter: waiter)
        try self.state.withLock { state throws(NFSError) in
            if state.mount === mount {
                state.mount = nil
                state.isMounted = mount.failure == nil
            }
            // As mpd: the mount's callback tells its outcome, before a connection failure seen in the same turn.
            if let failure = mount.failure {
                state.failure = failure
                throw .failed(failure)
            }
            if let failure = state.failure { throw .failed(failure) }
        }
    }

    /// What a waiter does next.
    private enum Step {
        case finished
        case failed(NFSError)
        /// Poll the connection's socket (for these events) and the waiter's eventfd.
        case drive(descriptor: Int32, events: Int16)
        /// Poll the waiter's eventfd only.
        case sleep
    }

    /// Waits until `completion` finished, the waiter's cancellation fired or the connection failed, driving the
    /// connection when nobody else does. Allocates nothing per turn.
    private func wait(for completion: Completion, waiter: NFSWaiter) throws(NFSError) {
        let identifier = ObjectIdentifier(waiter)
        while true {
            let step: Step = self.state.withLock { state in
                let failure: NFSError?
                if completion.isFinished {
                    failure = nil
                } else if waiter.cancellation.isCancelled {
                    completion.abandon()
                    failure = .cancelled
                } else if let text = state.failure {
                    failure = .failed(text)
                } else {
                    state.waiters[identifier] = waiter.wakeup
                    if state.driver == nil { state.driver = identifier }
                    guard state.driver == identifier else { return .sleep }
                    return .drive(
                        descriptor: nfs_get_fd(state.context),
                        events: Int16(truncatingIfNeeded: nfs_which_events(state.context)))
                }
                // Leaving: another waiter takes over the socket.
                state.waiters[identifier] = nil
                if state.driver == identifier {
                    state.driver = nil
                    state.wakeWaiters()
                }
                return failure.map { .failed($0) } ?? .finished
            }
            switch step {
            case .finished: return
            case .failed(let error): throw error
            case .sleep: waiter.wakeup.wait(orReadable: -1, events: 0)
            case .drive(let descriptor, let events):
                let revents = waiter.wakeup.wait(orReadable: descriptor, events: events)
                self.state.withLock { state in
                    guard state.failure == nil, state.driver == identifier else { return }
                    let result = nfs_service(state.context, Int32(revents))
                    if result < 0 {
                        state.failure = "NFS connection has failed: \(state.lastError)"
                    } else if nfs_get_fd(state.context) < 0 {
                        state.failure = "NFS socket disappeared: \(state.lastError)"
                    }
                    // As mpd: a callback that ran tells its call's outcome (a refused mount is the mount's failure).
                    if result < 0 || revents != 0 { state.wakeWaiters(except: identifier) }
                }
            }
        }
    }
}

/// Who waits for an ``NFSConnection``'s calls: a stream (or one storage call) with its cancellation and an
/// eventfd that the cancellation and the connection write to.
final class NFSWaiter: Sendable {
    let cancellation: InputCancellation
    let wakeup = Wakeup()

    /// Makes `cancellation` interrupt this waiter's waits (it replaces the cancellation's handler).
    init(cancellation: InputCancellation) {
        self.cancellation = cancellation
        let wakeup = self.wakeup
        cancellation.onCancel { wakeup.signal() }
    }
}

/// What one call left: its result, or libnfs's text for its failure. Only touched under the connection's lock
/// (libnfs runs callbacks inside `nfs_service` and `nfs_destroy_context`).
private final class Completion: @unchecked Sendable {
    /// What the callback's `data` points to when the call succeeded.
    enum Result {
        /// Nothing (the mount; its failure is worded "nfs_mount_async() failed: …" as in mpd).
        case mount
        /// `struct nfsfh *` (an open).
        case file
        /// `struct nfsdir *` (an opendir).
        case directory
        /// `struct nfs_stat_64 *` (a status).
        case status
        /// The bytes read, `err` of them (a read), copied to `destination`.
        case bytes
    }

    let expected: Result
    private(set) var isFinished = false
    /// Whether its waiter gave up: a late result is dropped (a file or directory handle closed).
    private var isAbandoned = false
    private(set) var failure: String?
    /// Where a read's bytes go; `nil` once the reader stopped waiting.
    private var destination: UnsafeMutableRawBufferPointer?
    private(set) var count = 0
    private(set) var handle: OpaquePointer?
    private(set) var status = nfs_stat_64()

    init(expecting expected: Result, destination: UnsafeMutableRawBufferPointer?) {
        self.expected = expected
        self.destination = destination
    }

    /// Its waiter stopped waiting.
    func abandon() {
        self.isAbandoned = true
        self.destination = nil
    }

    /// The callback's `err` (bytes read, or a negative errno) and `data` (the result, or an error text).
    func finish(_ result: Int32, _ data: UnsafeMutableRawPointer?, context: OpaquePointer?) {
        self.isFinished = true
        guard result >= 0 else {
            if self.expected == .mount {
                let text = context.flatMap { nfs_get_error($0) }.map { String(cString: $0) } ?? "<unknown>"
                self.failure = "nfs_mount_async() failed: \(text)"
            } else if let data, data.load(as: UInt8.self) != 0 {
                self.failure = String(cString: data.assumingMemoryBound(to: CChar.self))
            } else {
                self.failure = String(cString: strerror(-result))
            }
            return
        }
        guard let data else { return }
        switch self.expected {
        case .mount: break
        case .file, .directory:
            guard self.isAbandoned else {
                self.handle = OpaquePointer(data)
                return
            }
            guard let context else { return }
            if self.expected == .file {
                _ = nfs_close_async(context, OpaquePointer(data), nfsIgnoredCallback, nil)
            } else {
                nfs_closedir(context, OpaquePointer(data))
            }
        case .status: self.status = data.load(as: nfs_stat_64.self)
        case .bytes:
            guard let destination = self.destination else { return }
            let count = min(Int(result), destination.count)
            if count > 0 { destination.baseAddress!.copyMemory(from: data, byteCount: count) }
            self.count = count
        }
    }
}

/// libnfs's callback for every call: hands the result to the ``Completion`` it was started with and releases it.
private let nfsCompletionCallback: nfs_cb = { result, context, data, completion in
    guard let completion else { return }
    Unmanaged<Completion>.fromOpaque(completion).takeRetainedValue().finish(result, data, context: context)
}

/// A callback that wants nothing from its call.
private let nfsIgnoredCallback: nfs_cb = { _, _, _, _ in }

/// An eventfd that a cancellation or a connection writes to, so that a waiter's `poll` returns at once.
final class Wakeup: Sendable {
    let descriptor: Int32 = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))

    func signal() {
        var one: UInt64 = 1
        _ = write(self.descriptor, &one, 8)
    }

    /// Polls the eventfd and `other` (for `events`; none when negative) for a second at most (so that libnfs checks
    /// its timeouts), then empties the eventfd.
    ///
    /// - Returns: what `poll` saw on `other`.
    @discardableResult
    func wait(orReadable other: Int32, events: Int16) -> Int16 {
        var descriptors = (
            pollfd(fd: self.descriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: other, events: events, revents: 0)
        )
        let ready = withUnsafeMutableBytes(of: &descriptors) {
            poll($0.baseAddress!.assumingMemoryBound(to: pollfd.self), other < 0 ? 1 : 2, 1000)
        }
        if descriptors.0.revents != 0 {
            var value: UInt64 = 0
            _ = read(self.descriptor, &value, 8)
        }
        return ready > 0 ? descriptors.1.revents : 0
    }

    deinit { if self.descriptor >= 0 { close(self.descriptor) } }
}
