// SPDX-License-Identifier: GPL-3.0-or-later

import Expat

/// Why a playlist gave no songs: no plugin recognised it, or the one that took it failed.
public struct PlaylistParseError: Error, Sendable, Hashable {
    /// What went wrong (expat's message for XML), for the log.
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    /// The XML plugins' start: every expat event of `bytes`, or expat's error as a parse error.
    static func events(of bytes: [UInt8]) throws(PlaylistParseError) -> [XMLEvent] {
        do {
            return try XMLEvents.events(of: bytes)
        } catch {
            throw PlaylistParseError(error.message)
        }
    }
}

/// A playlist plugin as `mpd` has them: a name, the suffixes and MIME types it claims, and a parser of a
/// whole file. Pure: bytes in, entries out.
public struct PlaylistPlugin: Sendable {
    /// `mpd`'s plugin name (`extm3u`, `pls`…).
    public let name: String
    /// File name suffixes, compared ASCII case-insensitively.
    public let suffixes: [String]
    /// MIME types (without parameters), compared ASCII case-insensitively.
    public let mimeTypes: [String]
    /// The entries, or `nil` when the plugin does not recognise the content (the next plugin is tried).
    let parse: @Sendable ([UInt8]) throws(PlaylistParseError) -> [PlaylistEntry]?

    init(
        name: String, suffixes: [String], mimeTypes: [String],
        parse: @escaping @Sendable ([UInt8]) throws(PlaylistParseError) -> [PlaylistEntry]?
    ) {
        self.name = name
        self.suffixes = suffixes
        self.mimeTypes = mimeTypes
        self.parse = parse
    }

    /// Whether the plugin claims `suffix`.
    public func supports(suffix: some StringProtocol) -> Bool {
        self.suffixes.contains { TextLines.equalsIgnoringCase(Array(suffix.utf8), $0) }
    }

    /// Whether the plugin claims `mimeType`.
    public func supports(mimeType: some StringProtocol) -> Bool {
        self.mimeTypes.contains { TextLines.equalsIgnoringCase(Array(mimeType.utf8), $0) }
    }

    /// The entries of `bytes`, or `nil` when this plugin does not recognise them.
    ///
    /// - Throws: `PlaylistParseError` when the plugin took the file and failed on it.
    public func entries(_ bytes: [UInt8]) throws(PlaylistParseError) -> [PlaylistEntry]? {
        try self.parse(bytes)
    }
}
