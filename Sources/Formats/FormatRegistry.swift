// SPDX-License-Identifier: GPL-3.0-or-later

/// The format plugins in `mpd`'s order; looked up by file suffix or MIME type.
///
/// Immutable and `Sendable`: share one value between the scanner and the player.
public struct FormatRegistry: Sendable {
    /// The plugins, in priority order.
    public let plugins: [any FormatPlugin]

    /// Creates a registry from plugins in priority order.
    public init(_ plugins: [any FormatPlugin]) { self.plugins = plugins }

    /// Every format Fermata supports today.
    public static let standard = FormatRegistry([MP3Format()])

    /// The first plugin handling `suffix`, compared ASCII case-insensitively as `mpd` does (`MP3` is `mp3`).
    public func plugin(forSuffix suffix: some StringProtocol) -> (any FormatPlugin)? {
        let lowered = Self.asciiLowercased(suffix)
        return self.plugins.first { $0.suffixes.contains(lowered) }
    }

    /// The first plugin handling the MIME type (compared ASCII case-insensitively, parameters ignored).
    public func plugin(forMimeType mimeType: some StringProtocol) -> (any FormatPlugin)? {
        let base = mimeType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let lowered = Self.asciiLowercased(base)
        return self.plugins.first { plugin in plugin.mimeTypes.contains { Self.asciiLowercased($0) == lowered } }
    }

    /// The first plugin handling the suffix of the file at `path`.
    public func plugin(forPath path: some StringProtocol) -> (any FormatPlugin)? {
        guard let suffix = Self.suffix(ofPath: path) else { return nil }
        return self.plugin(forSuffix: suffix)
    }

    /// The suffix `mpd` sees in a path: the text after the last `.` of the last component, unless that dot
    /// starts the name (`.mp3` has none).
    public static func suffix(ofPath path: some StringProtocol) -> Substring? {
        let full = String(path)
        let name = full.lastIndex(of: "/").map { full[full.index(after: $0)...] } ?? full[...]
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        return name[name.index(after: dot)...]
    }

    private static func asciiLowercased(_ text: some StringProtocol) -> String {
        String(decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
    }
}
