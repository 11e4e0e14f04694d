// SPDX-License-Identifier: GPL-3.0-or-later

/// The playlist plugins, in the order Debian's `mpd` 0.23.12 tries them (`extm3u m3u pls xspf asx rss …
/// cue`; its `soundcloud`, `flac` and `embcue` plugins are not here). Pure.
public enum PlaylistRegistry {
    /// Every plugin, in `mpd`'s order.
    public static let plugins: [PlaylistPlugin] = [
        ExtM3uPlaylistPlugin.plugin, M3uPlaylistPlugin.plugin, PlsPlaylistPlugin.plugin, XspfPlaylistPlugin.plugin,
        AsxPlaylistPlugin.plugin, RssPlaylistPlugin.plugin, CuePlaylistPlugin.plugin,
    ]

    /// The plugins `mpd` lists as directories of their songs too (`as_directory`, on by default only for cue).
    static let directoryPlugins: [PlaylistPlugin] = [CuePlaylistPlugin.plugin]

    /// Whether the plugin `mpd` picks for `suffix` (the first claiming it) is listed as a directory.
    public static func listsAsDirectory(suffix: some StringProtocol) -> Bool {
        guard let plugin = Self.plugins.first(where: { $0.supports(suffix: suffix) }) else { return false }
        return Self.directoryPlugins.contains { $0.name == plugin.name }
    }

    /// The entries of a file listed as a directory, read by the plugin `mpd`'s update picks for `suffix` (the
    /// first claiming it, `FindPlaylistPluginBySuffix`), or `nil` when it does not recognise the content.
    ///
    /// - Throws: `PlaylistParseError` when the plugin took the file and failed on it.
    public static func directoryEntries(_ bytes: [UInt8], suffix: some StringProtocol) throws(PlaylistParseError)
        -> [PlaylistEntry]?
    {
        guard let plugin = Self.plugins.first(where: { $0.supports(suffix: suffix) }) else { return nil }
        return try plugin.entries(bytes)
    }

    /// Whether some plugin claims `suffix` (`mpd`'s `playlist_suffix_supported`).
    public static func supports(suffix: some StringProtocol) -> Bool {
        Self.plugins.contains { $0.supports(suffix: suffix) }
    }

    /// The entries of a file with `suffix`, as `mpd`'s `playlist_list_open_stream_suffix` reads them: each
    /// plugin claiming the suffix in turn until one recognises the content.
    ///
    /// - Throws: `PlaylistParseError` when none does, or when the one that took the file failed (`mpd`
    ///   logs both and answers as if there were no playlist).
    public static func entries(_ bytes: [UInt8], suffix: some StringProtocol) throws(PlaylistParseError)
        -> [PlaylistEntry]
    {
        try Self.entries(bytes, from: Self.plugins.filter { $0.supports(suffix: suffix) })
    }

    /// The entries of a stream of MIME type `mimeType` (parameters after `;` ignored), as
    /// `playlist_list_open_stream_mime` reads them.
    ///
    /// - Throws: as `entries(_:suffix:)`.
    public static func entries(_ bytes: [UInt8], mimeType: some StringProtocol) throws(PlaylistParseError)
        -> [PlaylistEntry]
    {
        let base = mimeType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return try Self.entries(bytes, from: Self.plugins.filter { $0.supports(mimeType: base) })
    }

    private static func entries(_ bytes: [UInt8], from plugins: [PlaylistPlugin]) throws(PlaylistParseError)
        -> [PlaylistEntry]
    {
        for plugin in plugins {
            if let entries = try plugin.entries(bytes) { return entries }
        }
        throw PlaylistParseError("no playlist plugin recognises the file")
    }
}
