// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import RawText

/// Brings the tree of a mounted storage's database up to date with the storage, as `mpd`'s update walks a
/// storage without a local path: every directory is listed again (as `mpd` lists every one, and as `Updater` does
/// for the music directory: a file changed in place leaves its directory's time as it was); a song whose
/// modification time and size are unchanged is kept (unless the job discards what it knows, as `rescan`), any
/// other file the format plugins take is read; playlist files are listed as playlists; what is gone is removed. A
/// file that cannot be read is left out, and tried again by the next update. A directory's `.mpdignore` (read
/// from the storage) leaves out what its patterns match there and below, as in the music directory.
///
/// The music directory itself is walked by `Updater`, which also knows symlinks, containers and cue sheets; a
/// mounted storage has none of those here.
public struct StorageUpdater: Sendable {
    /// The storage walked.
    public let storage: any Storage
    /// Reads songs (through the input streams of the storage's files).
    public let reader: any SongInfoReader
    /// Where failures go.
    public let logger: Logger

    /// Creates an updater of `storage`.
    public init(storage: any Storage, reader: any SongInfoReader, logger: Logger) {
        self.storage = storage
        self.reader = reader
        self.logger = logger
    }

    /// Updates `tree` (the storage's database as it was) below `uri` ("" for everything, else a directory or
    /// file path relative to the storage's root); `discard`: read every song again. Returns the new tree and
    /// whether any song or playlist was added, changed or removed.
    public func update(_ tree: TreeDirectory, uri: String, discard: Bool) -> (tree: TreeDirectory, modified: Bool) {
        // The job reads with a reader of its own (``SongInfoReader/startReading()``): the files of a storage with
        // local paths (UDisks2) are then read by the update's scan workers, as the music directory's are.
        let reader = discard ? self.reader.startRereading() : self.reader.startReading()
        let job = StorageUpdater(storage: self.storage, reader: reader, logger: self.logger)
        defer { reader.readingFinished() }
        return job.run(tree, uri: uri, discard: discard)
    }

    private func run(_ tree: TreeDirectory, uri: String, discard: Bool) -> (tree: TreeDirectory, modified: Bool) {
        var tree = tree
        var modified = false
        let components = uri.split(separator: "/").map(String.init)
        if components.isEmpty {
            if let status = self.status(""), status.kind == .directory {
                tree.modificationTime = status.modificationTime
                self.walk(&tree, path: "", exclude: ExcludeList(), discard: discard, modified: &modified)
            }
        } else {
            self.updatePath(&tree, components: components[...], parent: "", discard: discard, modified: &modified)
        }
        if modified { tree.pruneEmpty() }
        return (tree, modified)
    }

    private static func join(_ parent: String, _ name: String) -> String { parent.isEmpty ? name : parent + "/" + name }

    private func status(_ path: String) -> StorageFileStatus? {
        do {
            return try self.storage.status(path)
        } catch {
            self.logger.warning("cannot stat", ["uri": self.storage.playableURI(path), "error": "\(error)"])
            return nil
        }
    }

    /// One named path below `directory` (at `parent`): the directories on the way must exist on the storage.
    private func updatePath(
        _ directory: inout TreeDirectory, components: ArraySlice<String>, parent: String, discard: Bool,
        modified: inout Bool
    ) {
        guard let name = components.first else { return }
        let path = Self.join(parent, name)
        guard let status = try? self.storage.status(path) else {
            if directory.removeEntry(named: name, includingPlaylist: true) { modified = true }
            return
        }
        guard components.count > 1 else {
            // As `mpd` updates one path of a storage: the path itself is taken whatever the `.mpdignore` files say,
            // and a directory there is walked with the patterns of its parent's `.mpdignore` alone.
            let exclude = self.excludeList(in: parent, inheriting: ExcludeList())
            self.visit(
                &directory, name: name, path: path, status: status, exclude: exclude, discard: discard,
                modified: &modified)
            return
        }
        guard status.kind == .directory else { return }
        if directory.children[ByteString(name)] == nil {
            var child = TreeDirectory(name: name, rank: directory.children.count)
            child.modificationTime = status.modificationTime
            directory.children[ByteString(name)] = child
        }
        self.updatePath(
            &directory.children[ByteString(name)]!, components: components.dropFirst(), parent: path,
            discard: discard, modified: &modified)
    }

    /// `inherited` with the patterns of the `.mpdignore` in the storage's directory `path`, if it has one (an
    /// error other than its absence is logged).
    private func excludeList(in path: String, inheriting inherited: ExcludeList) -> ExcludeList {
        let file = Self.join(path, ".mpdignore")
        guard let status = try? self.storage.status(file), status.kind == .regular else { return inherited }
        return self.readExcludeList(file, inheriting: inherited)
    }

    private func readExcludeList(_ file: String, inheriting inherited: ExcludeList) -> ExcludeList {
        do {
            return ExcludeList(inheriting: inherited, data: try self.storage.contents(of: file))
        } catch {
            self.logger.warning("cannot read", ["uri": self.storage.playableURI(file), "error": "\(error)"])
            return inherited
        }
    }

    /// Lists the directory at `path` again and visits each entry but those its `.mpdignore` (or one above it,
    /// `inherited`) excludes; what they exclude is removed.
    private func walk(
        _ directory: inout TreeDirectory, path: String, exclude inherited: ExcludeList, discard: Bool,
        modified: inout Bool
    ) {
        let entries: [(name: String, status: StorageFileStatus?)]
        do {
            entries = try self.storage.entries(in: path)
        } catch {
            self.logger.warning("cannot list", ["uri": self.storage.playableURI(path), "error": "\(error)"])
            return
        }
        let exclude =
            entries.contains { $0.name == ".mpdignore" }
            ? self.readExcludeList(Self.join(path, ".mpdignore"), inheriting: inherited) : inherited
        var seen: Set<ByteString> = []
        for (name, listed) in entries where !RawText.contains(UInt8(ascii: "\n"), in: name) && !exclude.matches(name) {
            let child = Self.join(path, name)
            guard let status = listed ?? self.status(child) else { continue }
            seen.insert(ByteString(name))
            self.visit(
                &directory, name: name, path: child, status: status, exclude: exclude, discard: discard,
                modified: &modified)
        }
        for name in Array(directory.children.keys) where !seen.contains(name) {
            directory.children.removeValue(forKey: name)
            modified = true
        }
        for name in Array(directory.songs.keys) where !seen.contains(name) {
            directory.songs.removeValue(forKey: name)
            modified = true
        }
        let before = directory.playlists.count
        directory.playlists.removeAll { !seen.contains(ByteString($0.name)) }
        if directory.playlists.count != before { modified = true }
    }

    /// One entry of a directory: a sub-directory (walked), a song (read unless known), or a playlist file.
    private func visit(
        _ directory: inout TreeDirectory, name: String, path: String, status: StorageFileStatus,
        exclude: ExcludeList, discard: Bool, modified: inout Bool
    ) {
        switch status.kind {
        case .directory:
            if directory.songs.removeValue(forKey: ByteString(name)) != nil { modified = true }
            var child =
                directory.children[ByteString(name)] ?? TreeDirectory(name: name, rank: directory.children.count)
            child.modificationTime = status.modificationTime
            self.walk(&child, path: path, exclude: exclude, discard: discard, modified: &modified)
            directory.children[ByteString(name)] = child
        case .regular:
            if directory.children.removeValue(forKey: ByteString(name)) != nil { modified = true }
            let suffix = Self.suffix(of: name)
            if let suffix, self.reader.supports(suffix: suffix) {
                self.visitSong(
                    &directory, name: name, path: path, status: status, discard: discard, modified: &modified)
            } else if let suffix, self.reader.listsPlaylist(suffix: suffix) {
                if directory.setPlaylist(TreePlaylist(name: name, modificationTime: status.modificationTime)) {
                    modified = true
                }
            } else if directory.removeEntry(named: name, includingPlaylist: true) {
                modified = true
            }
        case .other:
            if directory.removeEntry(named: name, includingPlaylist: true) { modified = true }
        }
    }

    private func visitSong(
        _ directory: inout TreeDirectory, name: String, path: String, status: StorageFileStatus, discard: Bool,
        modified: inout Bool
    ) {
        // Known and unchanged: the same time and, where the song's size is known, the same size. A song read back
        // from mpd's database format has no size (-1): its time alone decides, as in mpd, so an update after a
        // restart does not read every song again.
        if !discard, let known = directory.songs[ByteString(name)], known.modificationTime == status.modificationTime,
            known.size == status.size || known.size < 0
        {
            return
        }
        do {
            // As mpd reads a song (`Song::UpdateFile`): its status is asked again, and it must be a regular file;
            // the song keeps that status (for WebDAV a PROPFIND of Depth 0, not the listing's).
            let fresh = try self.storage.status(path)
            guard fresh.kind == .regular else {
                if directory.songs.removeValue(forKey: ByteString(name)) != nil { modified = true }
                return
            }
            // Through the song's input stream, as mpd scans it (only as far as the plugin's scan reads).
            let info = try self.storage.readSongInfo(path, reader: self.reader)
            directory.songs[ByteString(name)] = TreeSong(
                name: name, modificationTime: fresh.modificationTime, size: fresh.size, info: info)
            modified = true
        } catch {
            self.logger.warning("cannot read song", ["uri": self.storage.playableURI(path), "error": "\(error)"])
            if directory.songs.removeValue(forKey: ByteString(name)) != nil { modified = true }
        }
    }

    /// The suffix of a file name (after its last dot, not a leading one), if any.
    static func suffix(of name: String) -> String? {
        guard let dot = name.utf8.lastIndex(of: UInt8(ascii: ".")), dot != name.utf8.startIndex else { return nil }
        let suffix = String(name[name.utf8.index(after: dot)...])
        return suffix.isEmpty ? nil : suffix
    }
}
