// SPDX-License-Identifier: GPL-3.0-or-later

/// The playlist plugins a configuration enables, in the order Debian's `mpd` 0.23.12 tries them (`extm3u m3u
/// pls xspf asx rss soundcloud flac cue embcue`; its `soundcloud` and `flac` plugins are not here), and the ones
/// listed as directories of their songs (`as_directory`). Pure; a value type, safe from any thread.
public struct PlaylistRegistry: Sendable {
    /// Every plugin that reads bytes, in `mpd`'s order.
    public static let catalogue: [PlaylistPlugin] = [
        ExtM3uPlaylistPlugin.plugin, M3uPlaylistPlugin.plugin, PlsPlaylistPlugin.plugin, XspfPlaylistPlugin.plugin,
        AsxPlaylistPlugin.plugin, RssPlaylistPlugin.plugin, CuePlaylistPlugin.plugin,
    ]

    /// The name of `mpd`'s plugin for cue sheets in song tags (``EmbeddedCuePlaylistPlugin``).
    public static let embeddedCueName = "embcue"

    /// The names of `mpd` 0.23.12's plugins Fermata does not have, in `mpd`'s order.
    public static let missingNames = ["soundcloud", "flac"]

    /// The registry of a configuration without `playlist_plugin` blocks: every plugin enabled, cue sheets
    /// listed as directories (the only plugin whose `as_directory` is on by default).
    public static let standard = PlaylistRegistry(
        plugins: Self.catalogue, directoryPluginNames: ["cue"], readsEmbeddedCueSheets: true,
        listsFlacFilesAsPlaylists: true)

    /// The enabled plugins that read bytes, in `mpd`'s order.
    public let plugins: [PlaylistPlugin]
    /// The names of the enabled plugins listed as directories of their songs.
    public let directoryPluginNames: Set<String>
    /// Whether the `embcue` plugin is enabled.
    public let readsEmbeddedCueSheets: Bool
    /// Whether `mpd`'s `flac` playlist plugin would be enabled: its suffix then still counts as a playlist's in
    /// directory listings, as in `mpd`.
    let flacEnabled: Bool

    /// A registry of `plugins` (a subset of ``catalogue``, in its order).
    ///
    /// - Parameters:
    ///   - plugins: The enabled plugins that read bytes.
    ///   - directoryPluginNames: Which of them are listed as directories.
    ///   - readsEmbeddedCueSheets: Whether `embcue` is enabled.
    ///   - listsFlacFilesAsPlaylists: Whether `mpd`'s `flac` playlist plugin would be enabled.
    public init(
        plugins: [PlaylistPlugin], directoryPluginNames: Set<String>, readsEmbeddedCueSheets: Bool,
        listsFlacFilesAsPlaylists: Bool
    ) {
        self.plugins = plugins
        self.directoryPluginNames = directoryPluginNames.intersection(plugins.map(\.name))
        self.readsEmbeddedCueSheets = readsEmbeddedCueSheets
        self.flacEnabled = listsFlacFilesAsPlaylists
    }

    /// Whether the plugin `mpd` picks for `suffix` (the first enabled one claiming it) is listed as a directory.
    public func listsAsDirectory(suffix: some StringProtocol) -> Bool {
        guard let plugin = self.plugins.first(where: { $0.supports(suffix: suffix) }) else { return false }
        return self.directoryPluginNames.contains(plugin.name)
    }

    /// The entries of a file listed as a directory, read by the plugin `mpd`'s update picks for `suffix` (the
    /// first enabled one claiming it, `FindPlaylistPluginBySuffix`), or `nil` when it does not recognise the
    /// content.
    ///
    /// - Throws: `PlaylistParseError` when the plugin took the file and failed on it.
    public func directoryEntries(_ bytes: [UInt8], suffix: some StringProtocol) throws(PlaylistParseError)
        -> [PlaylistEntry]?
    {
        guard let plugin = self.plugins.first(where: { $0.supports(suffix: suffix) }) else { return nil }
        return try plugin.entries(bytes)
    }

    /// Whether some enabled plugin reads files with `suffix` (`mpd`'s `playlist_suffix_supported`).
    public func supports(suffix: some StringProtocol) -> Bool {
        self.plugins.contains { $0.supports(suffix: suffix) }
    }

    /// Whether the update lists a file with `suffix` that no decoder takes as a playlist (`mpd`'s
    /// `FindPlaylistPluginBySuffix` over every enabled plugin, `embcue` and `flac` included).
    public func listsAsPlaylist(suffix: some StringProtocol) -> Bool {
        if self.supports(suffix: suffix) { return true }
        if self.readsEmbeddedCueSheets, EmbeddedCuePlaylistPlugin.supports(suffix: suffix) { return true }
        return self.flacEnabled && TextLines.equalsIgnoringCase(Array(suffix.utf8), "flac")
    }

    /// The entries of a file with `suffix`, as `mpd`'s `playlist_list_open_stream_suffix` reads them: each
    /// enabled plugin claiming the suffix in turn until one recognises the content.
    ///
    /// - Throws: `PlaylistParseError` when none does, or when the one that took the file failed (`mpd`
    ///   logs both and answers as if there were no playlist).
    public func entries(_ bytes: [UInt8], suffix: some StringProtocol) throws(PlaylistParseError)
        -> [PlaylistEntry]
    {
        try Self.entries(bytes, from: self.plugins.filter { $0.supports(suffix: suffix) })
    }

    /// The entries of a stream of MIME type `mimeType` (parameters after `;` ignored), as
    /// `playlist_list_open_stream_mime` reads them.
    ///
    /// - Throws: as `entries(_:suffix:)`.
    public func entries(_ bytes: [UInt8], mimeType: some StringProtocol) throws(PlaylistParseError)
        -> [PlaylistEntry]
    {
        let base = mimeType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return try Self.entries(bytes, from: self.plugins.filter { $0.supports(mimeType: base) })
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
