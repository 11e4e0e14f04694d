// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Library
import MPDProtocol
import Model
import Posix

/// One client's own settings, which its commands read and change: what it may do, which tags and how large a
/// binary chunk it wants, the channels it listens to and the messages waiting for it, and who is at the other end.
///
/// Loop-confined.
final class SessionSettings {
    /// The permissions this client holds now.
    var permissions: Permission
    /// The tags this client asked to see (`tagtypes`); intersected with `metadata_to_use` on output.
    var tagMask = TagMask.all
    /// The largest binary chunk this client accepts (`binarylimit`).
    var binaryLimit = 8192
    /// Channels this client is subscribed to.
    var subscriptions: [String] = []
    /// Messages received and not yet read.
    var messages: [(channel: String, text: String)] = []
    /// Tells the client that a message arrived (idle `message`); set by its ``Client``.
    var notifyMessage: () -> Void = {}
    /// Marks idle events pending for this client without waking it (it is running a command); set by its
    /// ``Client``.
    var addPendingIdle: (IdleMask) -> Void = { _ in }
    /// The partition this client's commands act on (`partition` switches it).
    var partition: Partition
    /// The cover `albumart` of a URL read last, whole, so that the client's next chunks need no new download
    /// (`mpd` keeps the last cover's stream open for each client). Its ``Client`` drops it once it expires, even
    /// while the client sends nothing.
    var lastRemoteCover: RemoteCover? {
        didSet { if self.lastRemoteCover != nil && oldValue == nil { self.remoteCoverKept() } }
    }
    /// Tells the client that a remote cover is now kept (it arms the cover's expiry); set by its ``Client``.
    var remoteCoverKept: () -> Void = {}
    /// The reading session (``SongInfoReader/startReading()``) the local files a command or a command list names
    /// outside the music directory are read in, off the loop, once one was asked for; its ``Client`` finishes it,
    /// off the loop, when the command or the list is done and no read is under way.
    private(set) var readingSession: (any SongInfoReader)?

    /// Whether the client is connected over a local socket.
    let isLocal: Bool
    /// The user id of a local client's process, when the socket tells it.
    let peerUserID: UInt32?

    /// The settings of a new client holding `permissions`.
    init(permissions: Permission, isLocal: Bool, peerUserID: UInt32?, partition: Partition) {
        self.permissions = permissions
        self.partition = partition
        self.isLocal = isLocal
        self.peerUserID = peerUserID
    }

    /// The reading session of `reader` for the running command or command list (``readingSession``), started now
    /// if there is none: a command list of many files outside the music directory starts one, so that at most one
    /// scan worker reads those only FFmpeg reads.
    func reading(with reader: any SongInfoReader) -> any SongInfoReader {
        if let session = self.readingSession { return session }
        let session = reader.startReading()
        self.readingSession = session
        return session
    }

    /// Takes the reading session away, for its ``Client`` to finish it.
    func takeReadingSession() -> (any SongInfoReader)? {
        defer { self.readingSession = nil }
        return self.readingSession
    }

    /// Whether this client may read a local file outside the music directory, as `mpd` decides: a local client
    /// running as the daemon's user, or owning the file, or the file readable by everyone.
    ///
    /// - Throws: `Access denied` (4); `Failed to access PATH: …` (52) when it cannot be examined.
    func allowFile(_ path: String) throws(AckError) { try Self.allowFile(path, peerUserID: self.peerUserID) }

    /// Whether the client at the other end, `peerUserID` (`nil`: not a local client, or unknown), may read the local
    /// file `path` (see ``allowFile(_:)``); it may look at the file, so off the loop it can be called from any thread.
    static func allowFile(_ path: String, peerUserID: UInt32?) throws(AckError) {
        guard let uid = peerUserID else { throw AckError(.permission, "Access denied") }
        if uid == geteuid() { return }
        let status: FileStatus
        do {
            status = try FileStatus(path: path)
        } catch {
            throw AckError(.system, "Failed to access \(path): \(error.errno)")
        }
        if status.owner != uid && status.mode & 0o444 != 0o444 { throw AckError(.permission, "Access denied") }
    }
}
