// SPDX-License-Identifier: GPL-3.0-or-later

import CNFS
import Glibc
import Input
import Model

/// A failure of libnfs, in `mpd`'s words ("nfs_mount_async() failed: …", or libnfs's own text for a failed
/// call), or a cancelled wait.
public enum NFSError: Error, Sendable, Hashable {
    /// What `mpd` reports.
    case failed(String)
    /// The connection's ``InputCancellation`` fired while it waited on the server.
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

/// One mounted NFS export, as `mpd`'s `NfsConnection`: libnfs's asynchronous calls driven by `poll` on the
/// caller's thread, so a wait on a silent server ends as soon as the ``InputCancellation`` fires (no helper
/// thread, nothing left blocked in the library). After a cancellation or a lost connection every call fails.
///
/// Confined to one thread at a time.
final class NFSConnection {
    /// `struct nfs_context *`, which only this module sees.
    private let context: OpaquePointer
    /// Filled in by the callback of the call in flight; one call at a time.
    private let completion = Completion()
    /// Written to when the cancellation fires; it outlives this connection when the cancellation does.
    private let wakeup: Wakeup
    private let cancellation: InputCancellation
    private var isBroken = false

    /// How long one call may wait on the server: `mpd`'s mount timeout, applied to every call.
    private static let timeoutMilliseconds: Int32 = 60_000

    /// Connects to `server` and mounts `export`.
    init(server: String, export: String, cancellation: InputCancellation) throws(NFSError) {
        guard let context = nfs_init_context() else { throw .failed("nfs_init_context() failed") }
        self.context = context
        nfs_set_timeout(context, Self.timeoutMilliseconds)
        self.cancellation = cancellation
        let wakeup = Wakeup()
        self.wakeup = wakeup
        cancellation.onCancel { wakeup.signal() }
        try self.call("nfs_mount_async()", expecting: .nothing, describesFailure: true) { context, callback, data in
            nfs_mount_async(context, server, export, callback, data)
        }
    }

    deinit {
        // Completes whatever is still in flight (with an error) and frees every file handle.
        nfs_destroy_context(self.context)
    }

    /// The largest read the server takes in one call.
    var readMaximum: Int { Int(clamping: nfs_get_readmax(self.context)) }

    /// Opens `path` (inside the export) read-only.
    func open(_ path: String) throws(NFSError) -> OpaquePointer {
        try self.call("nfs_open_async()", expecting: .handle) { context, callback, data in
            nfs_open_async(context, path, O_RDONLY, callback, data)
        }
        guard let handle = self.completion.handle else { throw .failed("nfs_open_async() failed: no file handle") }
        return handle
    }

    /// Closes an open file without waiting: NFSv3 has no close call, so libnfs only frees the handle.
    func close(_ handle: OpaquePointer) {
        _ = nfs_close_async(self.context, handle, nfsIgnoredCallback, nil)
    }

    /// The size, kind and modification time of an open file.
    func status(_ handle: OpaquePointer) throws(NFSError) -> StorageFileStatus {
        try self.call("nfs_fstat64_async()", expecting: .status) { context, callback, data in
            nfs_fstat64_async(context, handle, callback, data)
        }
        return StorageFileStatus(self.completion.status)
    }

    /// The size, kind and modification time of the file or directory at `path` (inside the export).
    func status(path: String) throws(NFSError) -> StorageFileStatus {
        try self.call("nfs_stat64_async()", expecting: .status) { context, callback, data in
            nfs_stat64_async(context, path, callback, data)
        }
        return StorageFileStatus(self.completion.status)
    }

    /// The names in the directory at `path` (inside the export), in the server's order, without `.` and `..`.
    func names(in path: String) throws(NFSError) -> [String] {
        try self.call("nfs_opendir_async()", expecting: .handle) { context, callback, data in
            nfs_opendir_async(context, path, callback, data)
        }
        guard let directory = self.completion.handle else { throw .failed("nfs_opendir_async() failed") }
        defer { nfs_closedir(self.context, directory) }
        var names: [String] = []
        // libnfs read the whole directory before the callback: nfs_readdir does not wait.
        while let entry = nfs_readdir(self.context, directory) {
            guard let name = entry.pointee.name else { continue }
            let text = String(cString: name)
            if text != "." && text != ".." { names.append(text) }
        }
        return names
    }

    /// Reads at most `buffer.count` bytes (at most ``readMaximum``) at `offset`.
    ///
    /// - Returns: bytes read; 0 at the end of the file.
    func read(_ handle: OpaquePointer, at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws(NFSError)
        -> Int
    {
        self.completion.destination = buffer
        defer { self.completion.destination = nil }
        try self.call("nfs_pread_async()", expecting: .bytes) { context, callback, data in
            nfs_pread_async(context, handle, offset, UInt64(buffer.count), callback, data)
        }
        return self.completion.count
    }

    /// Starts one asynchronous call and serves the connection until its callback ran.
    ///
    /// - Parameters:
    ///   - name: the call, for `mpd`'s "NAME failed: …" when it cannot start.
    ///   - describesFailure: whether a failure reported by the callback is worded "NAME failed: …" (the mount) or
    ///     is libnfs's text alone (every other call).
    private func call(
        _ name: String, expecting expected: Completion.Result, describesFailure: Bool = false,
        _ start: (OpaquePointer, nfs_cb, UnsafeMutableRawPointer) -> Int32
    ) throws(NFSError) {
        guard !self.isBroken else {
            throw self.cancellation.isCancelled ? .cancelled : .failed("NFS connection closed")
        }
        let completion = self.completion
        completion.reset(expecting: expected)
        let data = Unmanaged.passUnretained(completion).toOpaque()
        guard start(self.context, nfsCompletionCallback, data) == 0 else {
            throw .failed("\(name) failed: \(self.lastError)")
        }
        try self.serve(until: completion)
        if let failure = completion.failure {
            throw .failed(describesFailure ? "\(name) failed: \(self.lastError)" : failure)
        }
    }

    /// Polls the connection's socket and the wakeup until `completion` finished, the cancellation fired or the
    /// connection failed. Allocates nothing.
    private func serve(until completion: Completion) throws(NFSError) {
        while !completion.isFinished {
            if self.cancellation.isCancelled {
                self.isBroken = true
                throw .cancelled
            }
            // The connection's socket, then the wakeup; a second at most, so libnfs checks its timeouts.
            var descriptors = (
                pollfd(
                    fd: nfs_get_fd(self.context), events: Int16(truncatingIfNeeded: nfs_which_events(self.context)),
                    revents: 0),
                pollfd(fd: self.wakeup.descriptor, events: Int16(POLLIN), revents: 0)
            )
            let ready = withUnsafeMutableBytes(of: &descriptors) {
                poll($0.baseAddress!.assumingMemoryBound(to: pollfd.self), 2, 1000)
            }
            if ready < 0 && errno != EINTR {
                self.isBroken = true
                throw .failed("poll() failed: \(String(cString: strerror(errno)))")
            }
            if descriptors.1.revents != 0 { continue }  // the cancellation, seen at the top
            let result = nfs_service(self.context, Int32(ready > 0 ? descriptors.0.revents : 0))
            // As mpd: a callback that ran tells the outcome (a refused mount is the mount's failure); else a failed
            // service is the connection's.
            if completion.isFinished { break }
            if result < 0 {
                self.isBroken = true
                throw .failed("NFS connection has failed: \(self.lastError)")
            }
            if nfs_get_fd(self.context) < 0 {
                self.isBroken = true
                throw .failed("NFS socket disappeared: \(self.lastError)")
            }
        }
    }

    private var lastError: String {
        guard let text = nfs_get_error(self.context) else { return "<unknown>" }
        return String(cString: text)
    }
}

/// What the call in flight left: its result, or libnfs's text for its failure.
private final class Completion {
    /// What the callback's `data` points to when the call succeeded.
    enum Result {
        /// Nothing (a mount).
        case nothing
        /// `struct nfsfh *` (an open) or `struct nfsdir *` (an opendir).
        case handle
        /// `struct nfs_stat_64 *` (a status).
        case status
        /// The bytes read, `err` of them (a read), copied to `destination`.
        case bytes
    }

    var expected = Result.nothing
    var isFinished = false
    var failure: String?
    /// Where a read's bytes go; `nil` once the reader stopped waiting.
    var destination: UnsafeMutableRawBufferPointer?
    var count = 0
    var handle: OpaquePointer?
    var status = nfs_stat_64()

    func reset(expecting expected: Result) {
        self.expected = expected
        self.isFinished = false
        self.failure = nil
        self.count = 0
        self.handle = nil
    }

    /// The callback's `err` (bytes read, or a negative errno) and `data` (the result, or an error text).
    func finish(_ result: Int32, _ data: UnsafeMutableRawPointer?) {
        self.isFinished = true
        guard result >= 0 else {
            if let data, data.load(as: UInt8.self) != 0 {
                self.failure = String(cString: data.assumingMemoryBound(to: CChar.self))
            } else {
                self.failure = String(cString: strerror(-result))
            }
            return
        }
        guard let data else { return }
        switch self.expected {
        case .nothing: break
        case .handle: self.handle = OpaquePointer(data)
        case .status: self.status = data.load(as: nfs_stat_64.self)
        case .bytes:
            guard let destination = self.destination else { return }
            let count = min(Int(result), destination.count)
            if count > 0 { destination.baseAddress!.copyMemory(from: data, byteCount: count) }
            self.count = count
        }
    }
}

/// libnfs's callback for every call: hands the result to the ``Completion`` it was started with.
private let nfsCompletionCallback: nfs_cb = { result, _, data, completion in
    guard let completion else { return }
    Unmanaged<Completion>.fromOpaque(completion).takeUnretainedValue().finish(result, data)
}

/// A callback that wants nothing from its call.
private let nfsIgnoredCallback: nfs_cb = { _, _, _, _ in }

/// An eventfd the cancellation writes to, so that `poll` returns at once.
private final class Wakeup: Sendable {
    let descriptor: Int32 = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))

    func signal() {
        var one: UInt64 = 1
        _ = write(self.descriptor, &one, 8)
    }

    deinit { if self.descriptor >= 0 { close(self.descriptor) } }
}
