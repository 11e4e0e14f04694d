// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Posix
import RawText

/// The stored playlists: `NAME.m3u` files in `playlist_directory`, with `mpd`'s names, listing and errors.
///
/// Every change replaces the file atomically and durably (temporary file, fsync, rename, directory
/// fsync) before it returns, so a change is on disk before the client's `OK` and a crash leaves the
/// previous version. A failed write leaves the previous file in place.
///
/// A value type holding only settings; the methods do blocking file I/O. The server calls them off the
/// loop thread, one at a time (on its playlist worker).
public struct PlaylistDirectory: Sendable {
    /// The suffix of playlist files.
    public static let suffix = ".m3u"

    /// A stored playlist as `listplaylists` shows it.
    public struct Info: Sendable, Hashable {
        /// The name, without the suffix.
        public var name: String
        /// The file's modification time, seconds since the epoch.
        public var modificationTime: Int64
    }

    /// The directory, absolute; `nil` disables stored playlists.
    public var path: String?
    /// The music directory, absolute, for relative song paths.
    public var musicDirectory: String?
    /// `save_absolute_paths_in_playlists`.
    public var absolutePaths: Bool
    /// `max_playlist_length`: the most entries a playlist holds.
    public var maximumLength: Int

    /// Creates the settings.
    public init(path: String?, musicDirectory: String?, absolutePaths: Bool = false, maximumLength: Int = 16384) {
        self.path = path
        self.musicDirectory = musicDirectory
        self.absolutePaths = absolutePaths
        self.maximumLength = maximumLength
    }

    /// Whether stored playlists are enabled.
    public var isEnabled: Bool { self.path != nil }

    /// `mpd`'s rule: not empty, no `/`, `\n` or `\r`.
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && !name.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == 10 || $0 == 13 })
    }

    /// The file of playlist `name`.
    ///
    /// - Throws: `Stored playlists are disabled`, `Bad playlist name` (also for a name `filesystem_charset`
    ///   cannot take, as `mpd`'s `spl_map_to_fs`).
    public func file(_ name: String) throws(StoredPlaylistError) -> String {
        guard let path = self.path else { throw .disabled }
        guard Self.isValidName(name), FileSystemCharset.converts(name) else { throw .badName }
        return path + "/" + name + Self.suffix
    }

    // MARK: - Reading

    /// Every stored playlist, in directory order: regular files (links followed) named `NAME.m3u` with a
    /// non-empty UTF-8 name without a newline.
    ///
    /// - Throws: `Stored playlists are disabled`, or an I/O error when the directory cannot be read.
    public func list() throws(StoredPlaylistError) -> [Info] {
        guard let path = self.path else { throw .disabled }
        let names: [String]
        do {
            names = try DirectoryEntries.names(in: path)
        } catch {
            throw StoredPlaylistError(.io, "Failed to open \(path): \(error.errno)")
        }
        var found: [Info] = []
        for file in names where file.hasSuffix(Self.suffix) && file.count > Self.suffix.count {
            guard !file.contains("\n"), !RawText.containsEscape(file),
                let status = try? FileStatus(path: path + "/" + file), status.kind == .regular
            else { continue }
            let name = String(file.dropLast(Self.suffix.count))
            found.append(Info(name: name, modificationTime: status.modificationTime))
        }
        return found
    }

    /// The raw content of playlist `name`.
    ///
    /// - Throws: `No such playlist` when it does not exist; an I/O error when it cannot be read.
    public func content(_ name: String) throws(StoredPlaylistError) -> [UInt8] {
        let file = try self.file(name)
        do {
            return try readFile(atPath: file)
        } catch {
            if error.errno == .noSuchFile { throw .noSuchList }
            throw StoredPlaylistError(.io, "Failed to open \(file): \(error.errno)")
        }
    }

    /// The entries of playlist `name` for editing (see `PlaylistFile.editableEntries`).
    ///
    /// - Throws: `No such playlist`, name and I/O errors.
    public func load(_ name: String) throws(StoredPlaylistError) -> [String] {
        PlaylistFile.editableEntries(
            try self.content(name), musicDirectory: self.musicDirectory, limit: self.maximumLength)
    }

    // MARK: - Changing

    /// Replaces playlist `name` (created when missing) with `uris`.
    ///
    /// - Throws: name errors, or an I/O error with the previous file intact.
    public func save(_ name: String, uris: [String]) throws(StoredPlaylistError) {
        let file = try self.file(name)
        try Self.replace(
            file,
            with: PlaylistFile.content(uris, absolutePaths: self.absolutePaths, musicDirectory: self.musicDirectory),
            verb: "create")
    }

    /// Creates playlist `name` holding `uris`.
    ///
    /// - Throws: `Playlist already exists` (kind `exists`), name and I/O errors.
    public func create(_ name: String, uris: [String]) throws(StoredPlaylistError) {
        try self.create(name) { content in
            for uri in uris { content.append(uri) }
        }
    }

    /// Creates playlist `name` holding the lines `write` appends (the queue's songs, for `save`), called only when
    /// the name is valid and free.
    ///
    /// - Throws: `Playlist already exists` (kind `exists`), name and I/O errors.
    public func create(_ name: String, writing write: (inout PlaylistFile.Builder) -> Void) throws(StoredPlaylistError)
    {
        let file = try self.file(name)
        if (try? FileStatus(path: file)) != nil { throw StoredPlaylistError(.exists, "Playlist already exists") }
        var content = PlaylistFile.Builder(absolutePaths: self.absolutePaths, musicDirectory: self.musicDirectory)
        write(&content)
        try Self.replace(file, with: content.bytes, verb: "create")
    }

    /// Appends `uris` to playlist `name`, creating it when missing. The lines already there (comments
    /// included) are kept byte for byte, as `mpd`'s append keeps them.
    ///
    /// - Throws: `Stored playlist is too large`, name and I/O errors.
    public func append(_ name: String, uris: [String]) throws(StoredPlaylistError) {
        let file = try self.file(name)
        var bytes: [UInt8]
        do {
            bytes = try readFile(atPath: file)
        } catch {
            guard error.errno == .noSuchFile else {
                throw StoredPlaylistError(.io, "Failed to append to \(file): \(error.errno)")
            }
            bytes = []
        }
        // mpd refuses to append once the file could hold the maximum of longest paths.
        if bytes.count / (Int(PATH_MAX) + 1) >= self.maximumLength {
            throw StoredPlaylistError(.tooLarge, "Stored playlist is too large")
        }
        bytes += PlaylistFile.content(uris, absolutePaths: self.absolutePaths, musicDirectory: self.musicDirectory)
        try Self.replace(file, with: bytes, verb: "append to")
    }

    /// Empties playlist `name`.
    ///
    /// - Throws: `No such playlist`, name and I/O errors.
    public func clear(_ name: String) throws(StoredPlaylistError) {
        let file = try self.file(name)
        guard (try? FileStatus(path: file)) != nil else { throw .noSuchList }
        try Self.replace(file, with: [], verb: "create")
    }

    /// Deletes playlist `name`.
    ///
    /// - Throws: `No such playlist`, name and I/O errors.
    public func delete(_ name: String) throws(StoredPlaylistError) {
        let file = try self.file(name)
        guard FileSystemCharset.withFilePath(file, { Glibc.unlink($0) }) == 0 else {
            let error = Errno.current
            if error == .noSuchFile { throw .noSuchList }
            throw StoredPlaylistError(.io, "Failed to delete \(file): \(error)")
        }
        try Self.syncDirectory(of: file)
    }

    /// Renames playlist `from` to `to`.
    ///
    /// - Throws: `Playlist exists already` (kind `exists`), `No such playlist`, name and I/O errors.
    public func rename(_ from: String, to: String) throws(StoredPlaylistError) {
        let source = try self.file(from)
        let target = try self.file(to)
        if (try? FileStatus(path: target)) != nil { throw StoredPlaylistError(.exists, "Playlist exists already") }
        do {
            try AtomicFile.rename(source, to: target)
        } catch {
            if error.errno == .noSuchFile { throw .noSuchList }
            throw StoredPlaylistError(.io, "Failed to rename \(source): \(error.errno)")
        }
        try Self.syncDirectory(of: target)
    }

    // MARK: - Files

    private static func replace(_ file: String, with bytes: [UInt8], verb: String) throws(StoredPlaylistError) {
        do {
            try AtomicFile.write(bytes, toPath: file)
        } catch {
            let what: String
            switch error.stage {
            case .create: what = "Failed to \(verb)"
            case .write: what = "Failed to write to"
            case .commit: what = "Failed to commit"
            }
            throw StoredPlaylistError(.io, "\(what) \(file): \(error.error.errno)")
        }
    }

    private static func syncDirectory(of file: String) throws(StoredPlaylistError) {
        do {
            try AtomicFile.syncDirectory(containing: file)
        } catch {
            throw StoredPlaylistError(.io, "Failed to commit \(file): \(error.errno)")
        }
    }
}
