// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Model
import Playlists
import StoredPlaylists

/// A playlist read from a URL (`load http://…/radio.pls`), as `mpd`'s `playlist_open_remote` reads it: the
/// input plugin of its scheme opens it, then the playlist plugins claiming its MIME type try it, then those
/// claiming its suffix. Reading blocks: call `read` off the loop (a `DeferredReply`'s work).
struct RemotePlaylist: Sendable {
    /// The playlist's entries, as written.
    var entries: [PlaylistEntry]
    /// The URL's directory, which relative entries are relative to (`mpd`'s `PathTraitsUTF8::GetParent`).
    var base: String

    /// What reading gave: the playlist, `nil` when no playlist plugin took it, or the input's error (which
    /// `mpd` logs, answering as if there were no playlist).
    typealias Outcome = Result<RemotePlaylist?, InputError>

    /// The most read of one playlist: a playlist is text; a URL that turns out to be an endless audio stream
    /// is read this far and then tried (and refused) as a playlist.
    static let byteLimit = 4 * 1024 * 1024

    /// Opens `url` with `opener`, reads it whole (up to `byteLimit`) and parses it with `plugins`.
    static func read(
        _ url: String, opener: @Sendable (String, InputCancellation) throws(InputError) -> any InputStream,
        plugins: PlaylistRegistry, cancellation: InputCancellation
    ) -> Outcome {
        let bytes: [UInt8]
        let mimeType: String?
        do throws(InputError) {
            let stream = try opener(url, cancellation)
            mimeType = stream.mimeType
            bytes = try stream.readToEnd(limit: Self.byteLimit)
        } catch {
            return .failure(error)
        }
        return .success(Self.parse(bytes, url: url, mimeType: mimeType, plugins: plugins))
    }

    /// The playlist in `bytes`, by MIME type first, then by the URL's suffix; `nil` when no plugin of
    /// `plugins` takes it.
    static func parse(
        _ bytes: [UInt8], url: String, mimeType: String?, plugins: PlaylistRegistry = .standard
    ) -> RemotePlaylist? {
        var entries: [PlaylistEntry]?
        if let mimeType { entries = try? plugins.entries(bytes, mimeType: mimeType) }
        if entries == nil, let suffix = Suffix.ofURI(url) {
            entries = try? plugins.entries(bytes, suffix: suffix)
        }
        guard let entries else { return nil }
        let parent = url.lastIndex(of: "/").map { String(url[..<$0]) } ?? "."
        return RemotePlaylist(entries: entries, base: parent)
    }
}
