// SPDX-License-Identifier: GPL-3.0-or-later

import ID3Tag
import Input
import Model

/// The format plugins in `mpd`'s order, and what `mpd` does with them for every format: choose plugins by
/// suffix or MIME type, try the next one when one fails, and add the generic tag scan (APE, then ID3).
///
/// Immutable and `Sendable`: share one value between the scanner, the commands and the player.
public struct FormatRegistry: Sendable {
    /// The plugins, in priority order.
    public let plugins: [any FormatPlugin]
    /// The plugins handling each suffix, in priority order: the scanner asks for every file, twice.
    private let pluginsBySuffix: [String: [any FormatPlugin]]
    /// Its keys: `handles(suffix:)` looks one up with no array of plugins retained and released.
    private let handledSuffixes: Set<String>

    /// Creates a registry from plugins in priority order.
    public init(_ plugins: [any FormatPlugin]) {
        self.plugins = plugins
        var table: [String: [any FormatPlugin]] = [:]
        for plugin in plugins {
            var seen: Set<String> = []
            for suffix in plugin.suffixes.map(Self.asciiLowercased) where seen.insert(suffix).inserted {
                table[suffix, default: []].append(plugin)
            }
        }
        self.pluginsBySuffix = table
        self.handledSuffixes = Set(table.keys)
    }

    /// Tells every plugin that a database update has read its files (`FormatPlugin.releaseIdleResources`).
    /// Any thread.
    public func releaseIdleResources() {
        for plugin in self.plugins { plugin.releaseIdleResources() }
    }

    // MARK: - Choosing plugins

    /// The first plugin handling `suffix`, compared ASCII case-insensitively as `mpd` does (`MP3` is `mp3`).
    public func plugin(forSuffix suffix: some StringProtocol) -> (any FormatPlugin)? {
        self.plugins(forSuffix: suffix).first
    }

    /// Whether a plugin handles `suffix` (compared as `plugin(forSuffix:)` compares it): asked for every file an
    /// update walks, so a suffix already in lower case is looked up as it is.
    public func handles(suffix: String) -> Bool {
        self.handledSuffixes.contains(Self.asciiLowercased(suffix))
    }

    /// Every plugin handling `suffix`, in priority order.
    public func plugins(forSuffix suffix: some StringProtocol) -> [any FormatPlugin] {
        self.pluginsBySuffix[Self.asciiLowercased(suffix)] ?? []
    }

    /// The first plugin handling the MIME type (compared ASCII case-insensitively, parameters ignored).
    public func plugin(forMimeType mimeType: some StringProtocol) -> (any FormatPlugin)? {
        self.plugins(forMimeType: mimeType).first
    }

    /// Every plugin handling the MIME type, in priority order.
    public func plugins(forMimeType mimeType: some StringProtocol) -> [any FormatPlugin] {
        let base = mimeType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let lowered = Self.asciiLowercased(String(base.filter { $0 != " " && $0 != "\t" }))
        return self.plugins.filter { plugin in plugin.mimeTypes.contains { Self.asciiLowercased($0) == lowered } }
    }

    /// The first plugin handling the suffix of the file at `path`.
    public func plugin(forPath path: some StringProtocol) -> (any FormatPlugin)? {
        self.plugins(forPath: path).first
    }

    /// Every plugin handling the suffix of the file at `path`, in priority order.
    public func plugins(forPath path: some StringProtocol) -> [any FormatPlugin] {
        guard let suffix = Suffix.ofPath(path) else { return [] }
        return self.plugins(forSuffix: suffix)
    }

    // MARK: - Library

    /// What the database stores about the file at `path`, as `mpd`'s `ScanFileTagsWithGeneric` finds it:
    /// the first plugin for the suffix that reads it wins; when it found no tag of a type in `enabledTags`
    /// (`metadata_to_use`: `mpd`'s tag builder drops the others, so a WAV whose only INFO field is a comment
    /// counts as untagged by default), the generic scan's tags (APE, else ID3) are used. ReplayGain the
    /// plugin did not find comes from the APE tag, as `mpd`'s decoder thread reads it for every file. Any
    /// thread.
    ///
    /// A plugin that wants its files read out of the process (``FormatPlugin/scanWorkerSettings``) has them read by
    /// `scanner` when one is given (a database update's scan workers); the generic scan stays here.
    ///
    /// - Throws: `FormatError.notRecognized` when no plugin reads the file (`mpd` does not add it), or the
    ///   first plugin's I/O error.
    public func readInfo(
        path: String, enabledTags: TagMask = .all, scanner: (any OutOfProcessScanner)? = nil
    ) throws(FormatError) -> SongInfo {
        let candidates = self.plugins(forPath: path)
        var firstError: FormatError?
        for plugin in candidates {
            do {
                var info = try Self.readInfo(path: path, plugin: plugin, scanner: scanner)
                if !plugin.readsGenericTags { Self.addGeneric(to: &info, path: path, enabledTags: enabledTags) }
                return info
            } catch {
                firstError = firstError ?? error
            }
        }
        throw firstError ?? .notRecognized(path: path)
    }

    /// What `plugin` reads of the file: through `scanner` when the plugin wants that and a worker runs.
    private static func readInfo(
        path: String, plugin: any FormatPlugin, scanner: (any OutOfProcessScanner)?
    ) throws(FormatError) -> SongInfo {
        if let scanner, let settings = plugin.scanWorkerSettings,
            let info = try scanner.readInfo(plugin: plugin.name, settings: settings, path: path)
        {
            return info
        }
        return try plugin.readInfo(path: path)
    }

    /// The ReplayGain of the APE tag at the end of the file at `path` (its footer and items only), `nil` when it
    /// has none or cannot be read: what `mpd`'s decoder thread reads before a plugin decodes a file while
    /// ReplayGain is on (`MaybeLoadReplayGain`), for the formats whose plugins read no ReplayGain of their own
    /// (WavPack, AAC, an MP3's APE tag). Any thread.
    public func readAPEReplayGain(path: String) -> ReplayGainInfo? {
        guard let file = try? TagSourceFile(path: path) else { return nil }
        return APETag.read(from: file)?.replayGain()
    }

    /// What the registry adds to a plugin's answer: the generic scan's tags (and whether its ID3 tag has a
    /// picture) when the plugin found no enabled tag, and the APE tag's ReplayGain when it found none.
    static func addGeneric(to info: inout SongInfo, path: String, enabledTags: TagMask) {
        Self.addGeneric(
            to: &info, enabledTags: enabledTags, read: { (try? TagSourceFile(path: path)).map(GenericTags.read) },
            readAPE: { (try? TagSourceFile(path: path)).flatMap { APETag.read(from: $0) } })
    }

    /// `addGeneric(to:path:enabledTags:)` with the tags `read` reads, or only the APE tag `readAPE` reads (`nil`:
    /// none to read).
    static func addGeneric(
        to info: inout SongInfo, enabledTags: TagMask, read: () -> GenericTags?, readAPE: () -> APETag?
    ) {
        var ape: APETag?
        var apeRead = false
        if !info.tags.contains(where: { enabledTags.contains($0.type) }), let generic = read() {
            info.tags = TagCollector.tagItems(generic.items)
            if !generic.apeRecognized, generic.id3?.hasPicture ?? false { info.hasPicture = true }
            // mpd's tag handler marks a song whose tags hold a `cuesheet` pair (an APE text item, as WavPack
            // files embed a cue sheet), whether or not the APE tag's items win.
            if generic.ape?.items.contains(where: { $0.isText && Self.isCuesheetKey($0.key) }) ?? false {
                info.hasPlaylist = true
            }
            ape = generic.ape
            apeRead = true
        }
        guard info.replayGain.isEmpty else { return }
        if !apeRead { ape = readAPE() }
        if let gain = ape?.replayGain(), !gain.isEmpty { info.replayGain = gain }
    }

    /// The picture `readpicture` sends: the format's own, else the generic scan's ID3 picture (`APIC`)
    /// unless an APE tag with recognised items hides the ID3 tag. Any thread.
    ///
    /// - Returns: `nil` when the file has none.
    /// - Throws: `FormatError.notRecognized` when no plugin reads the file ("Failed to load file").
    public func readPicture(path: String) throws(FormatError) -> Picture? {
        let plugin = try self.readingPlugin(path) { (plugin) throws(FormatError) in try plugin.readPicture(path: path) }
        if let picture = plugin.result { return picture }
        guard !plugin.plugin.readsGenericTags, let generic = Self.genericTags(path), !generic.apeRecognized else {
            return nil
        }
        return generic.id3?.pictures().first
    }

    /// The pairs `readcomments` prints: the format's own, then the generic scan's (APE text items; ID3
    /// `TXXX` frames when the APE tag recognised nothing). Any thread.
    ///
    /// - Throws: `FormatError.notRecognized` when no plugin reads the file ("Failed to load file").
    public func readComments(path: String) throws(FormatError) -> [(name: String, value: String)] {
        let plugin = try self.readingPlugin(path) { (plugin) throws(FormatError) in try plugin.readComments(path: path)
        }
        var pairs = plugin.result
        if !plugin.plugin.readsGenericTags, let generic = Self.genericTags(path) {
            pairs.append(contentsOf: generic.comments())
        }
        return pairs
    }

    /// The first plugin for the suffix whose `body` succeeds, with its result.
    private func readingPlugin<Result>(
        _ path: String, _ body: (any FormatPlugin) throws(FormatError) -> Result
    ) throws(FormatError) -> (plugin: any FormatPlugin, result: Result) {
        var firstError: FormatError?
        for plugin in self.plugins(forPath: path) {
            do {
                return (plugin, try body(plugin))
            } catch {
                firstError = firstError ?? error
            }
        }
        throw firstError ?? .notRecognized(path: path)
    }

    /// Whether an APE item's key is `cuesheet`, ASCII case-insensitively.
    private static func isCuesheetKey(_ key: [UInt8]) -> Bool {
        key.count == 8 && zip(key, "cuesheet".utf8).allSatisfy { ($0 | 0x20) == $1 }
    }

    private static func genericTags(_ path: String) -> GenericTags? {
        guard let file = try? TagSourceFile(path: path) else { return nil }
        return GenericTags.read(file)
    }

    /// The songs inside the container file at `path` (`mpd`'s `container_scan`): the answer of the first
    /// plugin for the suffix that has one. `nil` when the file is no container (it is then an ordinary
    /// song, or not one). Any thread.
    public func containerSongs(path: String) -> [ContainerSong]? {
        for plugin in self.plugins(forPath: path) {
            guard let songs = try? plugin.containerSongs(path: path) else { continue }
            return songs.isEmpty ? nil : songs
        }
        return nil
    }

    // MARK: - Playback

    /// Opens a decoder for the local file at `path`, as `mpd`'s decoder thread does: each plugin for the
    /// suffix in turn, on a fresh input, until one can decode it. Decoder thread.
    ///
    /// - Throws: the first plugin's error, or `FormatError.notRecognized` when no plugin claims the suffix.
    public func openDecoder(path: String) throws(FormatError) -> any Decoder {
        try self.openDecoder(path: path, cache: nil)
    }

    /// Opens a decoder for the local file at `path` as ``openDecoder(path:)`` does, each plugin that reads an input
    /// stream reading it through `cache` when the cache takes the file (`mpd`'s `DecoderBridge::OpenLocal`): from
    /// memory once the cache has it. Decoder thread.
    ///
    /// - Throws: the first plugin's error, or `FormatError.notRecognized` when no plugin claims the suffix.
    public func openDecoder(path: String, cache: InputCache?) throws(FormatError) -> any Decoder {
        var firstError: FormatError?
        for plugin in self.plugins(forPath: path) {
            do {
                if !plugin.decodesByPath, let input = cache?.open(path) {
                    return try plugin.makeDecoder(input: input)
                }
                return try plugin.makeDecoder(path: path)
            } catch {
                // As mpd: a file that cannot be opened fails before any plugin sees it.
                if case .input(let failure) = error, failure.isOpenFailure { throw error }
                // A plugin that declines (mpd's returns without decoding) leaves the error to the next one.
                if case .notRecognized = error { continue }
                firstError = firstError ?? error
            }
        }
        throw firstError ?? .notRecognized(path: path)
    }

    /// Whether a plugin opens URLs itself (`mpd`'s ffmpeg plugin, unless disabled).
    public var decodesURLs: Bool { self.plugins.contains { $0.decodesURLs } }

    /// Opens a decoder for a URL of a scheme decoder plugins open themselves (`rtsp://`), as `mpd`'s
    /// `TryUriDecode`: the first plugin that does, in the plugins' order. Decoder thread.
    ///
    /// - Throws: that plugin's error; `FormatError.notRecognized` when no plugin opens URLs.
    public func openDecoder(url: String, cancellation: InputCancellation) throws(FormatError) -> any Decoder {
        guard let plugin = self.plugins.first(where: { $0.decodesURLs }) else { throw .notRecognized(path: url) }
        return try plugin.makeDecoder(url: url, cancellation: cancellation)
    }

    /// Opens a decoder for a stream, as `mpd`'s `decoder_run_stream` chooses: the plugins for its MIME
    /// type, then those for the suffix of its URI, each tried from the start of the stream. Decoder thread.
    ///
    /// - Throws: the first plugin's error, or `FormatError.notRecognized` when no plugin claims the stream.
    public func openDecoder(input: any InputStream) throws(FormatError) -> any Decoder {
        var candidates = input.mimeType.map { self.plugins(forMimeType: $0) } ?? []
        let path = input.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? input.uri
        for plugin in self.plugins(forPath: path) where !candidates.contains(where: { $0.name == plugin.name }) {
            candidates.append(plugin)
        }
        let start = input.offset
        var firstError: FormatError?
        for (index, plugin) in candidates.enumerated() {
            if index > 0 {
                guard input.isSeekable else { break }
                do {
                    try input.seek(to: start)
                } catch {
                    throw .input(error)
                }
            }
            do {
                return try plugin.makeDecoder(input: input)
            } catch {
                firstError = firstError ?? error
            }
        }
        throw firstError ?? .notRecognized(path: input.uri)
    }

    // MARK: - Names

    private static func asciiLowercased(_ text: some StringProtocol) -> String {
        let upper = text.utf8.withContiguousStorageIfAvailable { $0.contains { $0 >= 0x41 && $0 <= 0x5A } }
        guard upper ?? text.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return String(text) }
        return String(decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
    }
}
