// SPDX-License-Identifier: GPL-3.0-or-later

import ID3Tag
import Input
import Model

extension FormatRegistry {
    /// What the database stores about a song of a storage without local files (a mounted SMB share, NFS export
    /// or WebDAV directory), as `mpd`'s update scans it (`tag_stream_scan`): the first plugin whose stream scan
    /// takes it (`scanningPlugin`: none of those that only scan files), then, when that found no tag of
    /// `enabledTags`, the generic scan's (APE, else ID3) when the stream seeks and knows its size, as for a
    /// file, but over HTTP only an ID3v2 tag at the start (`GenericTags.read(input:)`). Blocks; the thread that
    /// owns `input`.
    ///
    /// - Throws: `FormatError.notRecognized` when no plugin takes it; a plugin's or the input's error.
    public func readInfo(input: any InputStream, enabledTags: TagMask = .all) throws(FormatError) -> SongInfo {
        var readsGeneric = true
        var info = try self.scanningPlugin(input) { (plugin) throws(FormatError) in
            readsGeneric = !plugin.readsGenericTags
            return try plugin.readInfo(input: input)
        }
        if readsGeneric {
            Self.addGeneric(
                to: &info, enabledTags: enabledTags, read: { GenericTags.read(input: input) },
                readAPE: { GenericTags.ape(input: input) })
        }
        return info
    }

    /// The pairs `readcomments` prints for a remote stream, as `mpd`'s `TagScanStream` finds them: those of
    /// the first plugin whose scan takes it (`scanningPlugin`), then the generic scan's (APE, else ID3
    /// `TXXX`) when the stream seeks and knows its size. Blocks; the thread that owns `input`.
    ///
    /// - Throws: `FormatError.notRecognized` when no plugin takes it ("Failed to load file"); a plugin's or
    ///   the input's error.
    public func readComments(input: any InputStream) throws(FormatError) -> [(name: String, value: String)] {
        var pairs = try self.scanningPlugin(input) { (plugin) throws(FormatError) in
            try plugin.readComments(input: input)
        }
        if let generic = GenericTags.read(input: input) { pairs.append(contentsOf: generic.comments()) }
        return pairs
    }

    /// The picture `readpicture` sends for a remote stream: the first plugin's own (`scanningPlugin`), else
    /// the generic scan's ID3 picture unless an APE tag with recognised items hides the ID3 tag. Blocks; the
    /// thread that owns `input`.
    ///
    /// - Throws: as `readComments(input:)`.
    public func readPicture(input: any InputStream) throws(FormatError) -> Picture? {
        let own = try self.scanningPlugin(input) { (plugin) throws(FormatError) in
            try plugin.readPicture(input: input)
        }
        if let own { return own }
        guard let generic = GenericTags.read(input: input), !generic.apeRecognized else { return nil }
        return generic.id3?.pictures().first
    }

    /// `mpd`'s `tag_stream_scan`: each plugin in the registry's order whose MIME types hold the stream's
    /// `Content-Type` or whose suffixes hold the suffix of the URL's path (no fallback: a stream with neither
    /// is no song), from the start of the stream, until one's `body` takes it.
    private func scanningPlugin<Result>(
        _ input: any InputStream, _ body: (any FormatPlugin) throws(FormatError) -> Result
    ) throws(FormatError) -> Result {
        let start = input.offset
        for (index, plugin) in self.streamCandidates(input).filter(\.scansStreams).enumerated() {
            // mpd rewinds before each plugin, and tries it even when the stream cannot rewind.
            if index > 0 { try? input.seek(to: start) }
            do {
                return try body(plugin)
            } catch {
                if case .notRecognized = error { continue }
                throw error
            }
        }
        throw .notRecognized(path: input.uri)
    }
}
