// SPDX-License-Identifier: GPL-3.0-or-later

/// What a storage (the music directory, an SMB share, an NFS export) tells of one of its files: the status
/// libsmbclient and libnfs give, in the form `Library`'s `Storage` walks.
public struct StorageFileStatus: Sendable, Hashable {
    /// The kind of a file.
    public enum Kind: Sendable, Hashable {
        case regular, directory, other
    }

    /// Regular file, directory, or anything else.
    public var kind: Kind
    /// Size in bytes.
    public var size: Int64
    /// Modification time, seconds since the epoch.
    public var modificationTime: Int64

    /// Creates a status.
    public init(kind: Kind, size: Int64, modificationTime: Int64) {
        self.kind = kind
        self.size = size
        self.modificationTime = modificationTime
    }
}
