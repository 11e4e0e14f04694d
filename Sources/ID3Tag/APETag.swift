// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// An APEv2 tag at the very end of a file, read the way `mpd` 0.23 does (`tag_ape_scan`): the 32-byte
/// footer must be the last bytes of the file (a trailing ID3v1 tag hides it), version 2000, and the tag at
/// most 1 MiB. Any thread.
public struct APETag: Sendable, Hashable {
    /// One item: flags, key and value bytes.
    public struct Item: Sendable, Hashable {
        /// The item flags; bits 1–2 are the value type (0 = UTF-8 text).
        public var flags: UInt32
        /// The key bytes (up to its NUL).
        public var key: [UInt8]
        /// The value bytes (text values may hold several NUL-separated strings).
        public var value: [UInt8]

        /// Whether the value is UTF-8 text (the only kind `mpd` reads).
        public var isText: Bool { self.flags & 0b110 == 0 }
    }

    /// The items in file order.
    public var items: [Item]

    private static let footerSize = 32
    private static let maximumSize = 1024 * 1024

    /// Reads the tag at the end of `file`.
    ///
    /// - Returns: `nil` when there is no APEv2 footer at the end, its size is implausible, or reading fails.
    public static func read(from file: TagSourceFile) -> APETag? {
        guard file.size >= Self.footerSize,
            let footer = file.readFully(at: file.size - Self.footerSize, count: Self.footerSize),
            footer.prefix(8).elementsEqual("APETAGEX".utf8), Self.le32(footer, 8) == 2000
        else { return nil }
        let length = Int(Self.le32(footer, 12))
        guard length > Self.footerSize + 10, length <= Self.maximumSize, length <= file.size,
            let body = file.readFully(at: file.size - length, count: length - Self.footerSize)
        else { return nil }
        var items: [Item] = []
        var count = Self.le32(footer, 16)
        var position = 0
        var remaining = body.count
        while count > 0, remaining > 10 {
            count -= 1
            let size = Int(Self.le32(body, position))
            let flags = Self.le32(body, position + 4)
            position += 8
            remaining -= 8
            guard let keyEnd = body[position..<(position + remaining)].firstIndex(of: 0) else { break }
            let key = Array(body[position..<keyEnd])
            remaining -= keyEnd + 1 - position
            position = keyEnd + 1
            guard remaining >= size else { break }
            items.append(Item(flags: flags, key: key, value: Array(body[position..<(position + size)])))
            position += size
            remaining -= size
        }
        return APETag(items: items)
    }

    /// Creates a tag from items (for tests).
    public init(items: [Item]) { self.items = items }

    /// The tag items `mpd` 0.23's `tag_ape_scan2` hands its tag handler, in file order, and whether any item
    /// was recognised (only then does `mpd` skip the ID3 tag).
    ///
    /// Text items whose key is `album artist`, `year` or an `mpd` tag name (ASCII case-insensitively) become
    /// one tag item per NUL-separated string.
    public func mpdTagItems() -> (recognized: Bool, items: [RawTagItem]) {
        var recognized = false
        var result: [RawTagItem] = []
        for item in self.items where item.isText {
            guard let type = Self.tagType(forKey: item.key) else { continue }
            recognized = true
            for part in item.value.split(separator: 0, omittingEmptySubsequences: false) {
                result.append(RawTagItem(type, Array(part)))
            }
        }
        return (recognized, result)
    }

    /// ReplayGain from text items, as `mpd`'s decoder reads it (values of 16 bytes or more are ignored).
    ///
    /// - Returns: `nil` when no item is a ReplayGain item.
    public func replayGain() -> ReplayGainInfo? {
        var info = ReplayGainInfo()
        var found = false
        for item in self.items where item.isText && item.value.count < 16 {
            if ReplayGainParser.apply(name: item.key, value: item.value, to: &info) { found = true }
        }
        return found ? info : nil
    }

    /// The tag type `mpd` maps an APE key to.
    static func tagType(forKey key: [UInt8]) -> TagType? {
        let lowered = String(decoding: key.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
        switch lowered {
        case "album artist": return .albumArtist
        case "year": return .date
        default: return TagType.allCases.first { $0.name.lowercased() == lowered }
        }
    }

    private static func le32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        guard offset >= 0, offset + 4 <= bytes.count else { return 0 }
        return UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
            | UInt32(bytes[offset + 3]) << 24
    }
}
