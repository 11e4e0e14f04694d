// SPDX-License-Identifier: GPL-3.0-or-later

import Curl
import Input
import Library
import Model

/// A WebDAV directory mounted with `mount http[s]://…`, as `mpd`'s curl storage plugin reads it: a PROPFIND of
/// Depth 0 tells one file's status, one of Depth 1 lists a directory (with each entry's status), and a path below
/// the mount is appended to its URI with each segment escaped (`mpd`'s `MapUTF8`). Nothing is checked when it is
/// made, as in `mpd`; its requests block the update thread that makes them, never the event loop.
///
/// As in `mpd`, the PROPFIND requests do not use the `input { plugin "curl" }` settings; scanning a song (as far as
/// its plugin's stream scan reads) and playing it go through the input plugins, as any
/// URL is opened: curl with those settings, or libavformat's http when curl is disabled.
struct WebDAVStorage: Storage {
    let uri: String
    /// Opens a song's URL (the daemon's input plugins).
    private let open: RemoteOpener

    /// A storage for `uri` (an `http://` or `https://` URI): no traffic until it is used.
    init(uri: String, open: @escaping RemoteOpener) {
        self.uri = uri
        self.open = open
    }

    func playableURI(_ path: String) -> String {
        guard !path.isEmpty else { return self.uri }
        let escaped = WebDAVPath.escape(path)
        if self.uri.isEmpty { return escaped }
        return self.uri.hasSuffix("/") ? self.uri + escaped : self.uri + "/" + escaped
    }

    /// The status of the last resource the reply names with status 200 (`mpd` takes each in turn); anything else
    /// (none) is neither a file nor a directory.
    func status(_ path: String) throws -> StorageFileStatus {
        var status = StorageFileStatus(kind: .other, size: 0, modificationTime: 0)
        for resource in try WebDAVRequest.perform(url: self.playableURI(path), depth: 0) where resource.status == 200 {
            status = Self.status(of: resource)
        }
        return status
    }

    func names(in path: String) throws -> [String] { try self.entries(in: path).map(\.name) }

    /// The entries of a Depth 1 listing of the directory (its URL ending in a slash), those with status 200 and a
    /// name directly in it, last first, as `mpd` takes them.
    func entries(in path: String) throws -> [(name: String, status: StorageFileStatus?)] {
        var url = self.playableURI(path)
        if !url.hasSuffix("/") { url += "/" }
        let base = WebDAVPath.basePath(of: url)
        var entries: [(name: String, status: StorageFileStatus?)] = []
        for resource in try WebDAVRequest.perform(url: url, depth: 1) where resource.status == 200 {
            guard let name = WebDAVPath.name(ofHref: resource.href, basePath: base) else { continue }
            entries.append((String(decoding: name, as: UTF8.self), Self.status(of: resource)))
        }
        return entries.reversed()
    }

    /// Through the input plugins, as `mpd` opens a `.mpdignore` of a storage.
    func contents(of path: String) throws -> [UInt8] {
        try self.open(self.playableURI(path), InputCancellation()).readToEnd(limit: storageFileLimit)
    }

    /// A resource's status: a collection is a directory, anything else a regular file. A missing or unreadable
    /// `getlastmodified` is before the epoch (-1), which `mpd` does not show.
    private static func status(of resource: WebDAVResource) -> StorageFileStatus {
        StorageFileStatus(
            kind: resource.isCollection ? .directory : .regular, size: Int64(truncatingIfNeeded: resource.length),
            modificationTime: resource.modificationTime ?? -1)
    }
}
