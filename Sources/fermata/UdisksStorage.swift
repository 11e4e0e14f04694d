// SPDX-License-Identifier: GPL-3.0-or-later

import DBus
import Input
import Library
import Model
import Posix
import Synchronization

/// A UDisks2 file system mounted with `mount udisks://ID[/PATH]`, as `mpd`'s udisks storage plugin reads it: the
/// object whose drive (else block device) has the id `ID` among UDisks2's managed objects, mounted through
/// UDisks2 (`Filesystem.Mount`) unless it names a mount point already, and read as a local directory (`PATH`
/// below the mount point). The system bus is connected when the storage is made (its error is `mount`'s); the
/// object is found and mounted on the first use (an update's walk, off the loop), again after a failure; the file
/// system is unmounted through UDisks2 when the storage is closed (`unmount`, before its reply; at exit), or when a
/// storage never closed (`listfiles`'s) goes, on a thread of its own.
struct UdisksStorage: Storage {
    let uri: String
    private let volume: UdisksVolume

    /// A storage for `uri` (a `udisks://` URI: the plugin's check was made). Connects to the system bus: call it off
    /// the loop.
    init(uri: String, logger: Logger) throws(DBusError) {
        self.uri = uri
        let rest = uri.utf8.dropFirst("udisks://".utf8.count)
        let slash = rest.firstIndex(of: UInt8(ascii: "/")) ?? rest.endIndex
        let inside = rest[slash...].drop { $0 == UInt8(ascii: "/") }
        self.volume = UdisksVolume(
            uri: uri, id: String(Substring(rest[..<slash])), inside: String(Substring(inside)),
            bus: try DBusConnection(), logger: logger)
    }

    /// The local path of `path`: the mount point's, mounting first.
    private func local(_ path: String) throws -> String {
        let base = try self.volume.mountWait()
        return path.isEmpty ? base : base + "/" + path
    }

    func status(_ path: String) throws -> StorageFileStatus {
        let status = try FileStatus(path: try self.local(path))
        let kind: StorageFileStatus.Kind =
            switch status.kind {
            case .regular: .regular
            case .directory: .directory
            case .symbolicLink, .other: .other
            }
        return StorageFileStatus(kind: kind, size: status.size, modificationTime: status.modificationTime)
    }

    func names(in path: String) throws -> [String] { try DirectoryEntries.names(in: try self.local(path)) }

    /// Its songs are local files under the mount point, scanned as files (mpd's udisks storage maps them to local
    /// paths, so its update scans files, not streams).
    func readSongInfo(_ path: String, reader: any SongInfoReader) throws -> SongInfo {
        try reader.readInfo(path: try self.local(path))
    }

    func contents(of path: String) throws -> [UInt8] {
        // At most the limit the other storages read through their streams.
        try readFileRange(atPath: try self.local(path), offset: 0, count: storageFileLimit).bytes
    }

    /// The local path of a song `playableURI` gave before its file system was mounted, mounting it (decoder thread);
    /// `cancellation` gives the mount up (the loop leaves the song).
    static func localPath(of url: String, cancellation: InputCancellation) -> String? {
        UdisksVolume.localPath(of: url, cancellation: cancellation)
    }

    /// Unmounts the file system through UDisks2 when this storage mounted it or found it mounted (mpd does either).
    func close() { self.volume.unmountWait() }

    /// The song's file under the mount point, which the player opens as a local file; the storage's URI with the
    /// path when it is not mounted (yet), which the player's decoder thread mounts first
    /// (``localPath(of:cancellation:)``), as `mpd` maps a song before playing it (this never waits on the bus: the
    /// loop asks).
    func playableURI(_ path: String) -> String {
        if let base = self.volume.mountedPath { return path.isEmpty ? base : base + "/" + path }
        return path.isEmpty ? self.uri : self.uri + (self.uri.hasSuffix("/") ? "" : "/") + path
    }
}

/// The UDisks2 object behind a `udisks://` storage and where it is mounted; unmounted through UDisks2 when it goes.
private final class UdisksVolume: Sendable {
    private struct State {
        /// The object's path on the bus, once found.
        var objectPath: String?
        /// The local directory of the storage (the mount point, and the path inside it), once mounted.
        var mounted: String?
        /// Closed (unmounted for good): an update still walking it does not mount it again.
        var closed = false
    }

    private let uri: String
    private let id: String
    private let inside: String
    private let bus: DBusConnection
    private let logger: Logger
    private let state = Mutex(State())
    /// Guards `busy`: one caller at a time talks to the bus to mount or unmount; a waiting caller whose mount is
    /// cancelled stops waiting.
    private let turn = Condition()
    private let busy = Atomic(false)

    init(uri: String, id: String, inside: String, bus: DBusConnection, logger: Logger) {
        (self.uri, self.id, self.inside, self.bus, self.logger) = (uri, id, inside, bus, logger)
        Self.live.withLock { volumes in
            volumes.removeAll { $0.volume == nil }
            volumes.append(Weak(volume: self))
        }
    }

    private struct Weak: Sendable { weak var volume: UdisksVolume? }
    /// The volumes of the storages alive now, for ``localPath(of:)``.
    private static let live = Mutex<[Weak]>([])

    /// The local path of `url`, a song's URI under a live (not closed) udisks storage's URI (what
    /// ``UdisksStorage/playableURI(_:)`` gives before the file system is mounted), mounting it first, as `mpd` maps
    /// such a song before playing it; `nil` for any other URL, when the mount fails (logged) or when `cancellation`
    /// gives it up (not logged). Blocks until then: the decoder thread calls it.
    static func localPath(of url: String, cancellation: InputCancellation) -> String? {
        guard url.hasPrefix("udisks://") else { return nil }
        let volumes = Self.live.withLock { $0.compactMap(\.volume) }
        for volume in volumes where !volume.isClosed {
            let base = volume.uri.hasSuffix("/") ? volume.uri : volume.uri + "/"
            guard url.hasPrefix(base) else { continue }
            do {
                return try volume.mountWait(cancellation: cancellation) + "/" + url.dropFirst(base.count)
            } catch {
                if !error.isInterrupted { volume.logger.error("Failed to mount '\(volume.uri)': \(error)") }
                return nil
            }
        }
        return nil
    }

    private var isClosed: Bool { self.state.withLock { $0.closed } }

    /// The local directory, when mounted.
    var mountedPath: String? { self.state.withLock { $0.mounted } }

    /// The local directory, finding and mounting the object first when needed (blocking: off the loop only). One
    /// caller at a time talks to the bus; `mountedPath` does not wait for it. With `cancellation`, its cancellation
    /// ends the wait, for the bus or for another caller's turn, at once (``DBusError/interrupted``).
    func mountWait(cancellation: InputCancellation? = nil) throws(DBusError) -> String {
        let wake = cancellation == nil ? nil : try UdisksWake()
        defer { wake?.close() }
        cancellation?.onCancel { [turn = self.turn] in
            wake?.signal()
            turn.lock()
            turn.broadcast()
            turn.unlock()
        }
        try self.takeTurn(unless: cancellation)
        defer { self.endTurn() }
        let known = self.state.withLock { $0 }
        if let mounted = known.mounted { return mounted }
        if known.closed { throw DBusError("Storage '\(self.uri)' is unmounted") }
        let mountPoint: String
        do throws(DBusError) {
            if let path = known.objectPath {
                mountPoint = try self.mount(path, wake: wake)
            } else {
                let reply = try self.call(UDisks2.path, UDisks2.objectManager, "GetManagedObjects", wake: wake)
                // The last object with that id, as mpd keeps it.
                guard let object = try UDisks2.objects(inReply: reply).last(where: { $0.id == self.id }) else {
                    throw DBusError("No such UDisks2 object: \(self.id)")
                }
                self.state.withLock { $0.objectPath = object.path }
                // Already mounted: mounting again would fail (UDisks2's AlreadyMounted).
                if let mounted = object.mountPoint {
                    mountPoint = mounted
                } else {
                    mountPoint = try self.mount(object.path, wake: wake)
                }
            }
        } catch {
            // A mount given up on may complete all the same: the next attempt lists the objects again, and finds
            // the mount point then.
            if error.isInterrupted { self.state.withLock { $0.objectPath = nil } }
            throw error
        }
        let local = self.inside.isEmpty ? mountPoint : mountPoint + "/" + self.inside
        self.state.withLock { $0.mounted = local }
        return local
    }

    /// Waits until no other caller talks to the bus, then takes the turn; gives up when `cancellation` is cancelled.
    private func takeTurn(unless cancellation: InputCancellation?) throws(DBusError) {
        self.turn.lock()
        defer { self.turn.unlock() }
        while self.busy.load(ordering: .relaxed) {
            if cancellation?.isCancelled == true { throw .interrupted }
            self.turn.wait()
        }
        if cancellation?.isCancelled == true { throw .interrupted }
        self.busy.store(true, ordering: .relaxed)
    }

    private func endTurn() {
        self.turn.lock()
        self.busy.store(false, ordering: .relaxed)
        self.turn.broadcast()
        self.turn.unlock()
    }

    /// Calls `method` on UDisks2's object at `path`, given up on when `wake` is signalled (if any).
    private func call(
        _ path: String, _ interface: String, _ method: String, emptyOptions: Bool = false, wake: UdisksWake?
    ) throws(DBusError) -> [DBusValue] {
        guard let wake else {
            return try self.bus.call(
                destination: UDisks2.service, path: path, interface: interface, method: method,
                emptyOptions: emptyOptions)
        }
        return try self.bus.call(
            destination: UDisks2.service, path: path, interface: interface, method: method,
            emptyOptions: emptyOptions, interruptedBy: wake.descriptor)
    }

    private func mount(_ objectPath: String, wake: UdisksWake?) throws(DBusError) -> String {
        let reply = try self.call(objectPath, UDisks2.filesystem, "Mount", emptyOptions: true, wake: wake)
        guard case .string(let mountPoint) = reply.first else { throw DBusError("Malformed 'Mount' response") }
        return mountPoint
    }

    /// Calls `Filesystem.Unmount` when mounted, waiting for the answer; forgets the mount point whatever it is, as
    /// `mpd` does, logging a failure.
    func unmountWait() {
        // Never cancelled: cannot fail.
        try? self.takeTurn(unless: nil)
        defer { self.endTurn() }
        let (objectPath, mounted) = self.state.withLock { state in
            defer { (state.mounted, state.closed) = (nil, true) }
            return (state.objectPath, state.mounted)
        }
        guard let objectPath, mounted != nil else { return }
        Self.unmount(objectPath, bus: self.bus, logger: self.logger, uri: self.uri)
    }

    private static func unmount(_ objectPath: String, bus: DBusConnection, logger: Logger, uri: String) {
        do {
            _ = try bus.call(
                destination: UDisks2.service, path: objectPath, interface: UDisks2.filesystem, method: "Unmount",
                emptyOptions: true)
        } catch {
            logger.error("Failed to unmount '\(uri)': \(error)")
        }
    }

    /// A storage not closed (`listfiles` of a `udisks://` URI) unmounts when it goes, on a thread of its own.
    deinit {
        let (bus, logger, uri) = (self.bus, self.logger, self.uri)
        let (objectPath, mounted) = self.state.withLock { ($0.objectPath, $0.mounted) }
        guard let objectPath, mounted != nil else { return }
        // The last reference may go on the loop, which never waits on the bus.
        NamedThread.detach("udisks") { Self.unmount(objectPath, bus: bus, logger: logger, uri: uri) }
    }
}

/// The eventfd a cancelled mount is woken through; closed under its lock, so a late cancellation never writes to a
/// descriptor reused since.
private final class UdisksWake: Sendable {
    private let fd: Mutex<FileDescriptor?>
    /// The descriptor, while open.
    let descriptor: Int32

    init() throws(DBusError) {
        do {
            let fd = try EventFD.eventfd()
            self.fd = Mutex(fd)
            self.descriptor = fd.rawValue
        } catch {
            throw DBusError("\(error)")
        }
    }

    func signal() { self.fd.withLock { fd in fd.map(EventFD.signal) } }

    func close() {
        self.fd.withLock { fd in
            fd?.close()
            fd = nil
        }
    }
}
