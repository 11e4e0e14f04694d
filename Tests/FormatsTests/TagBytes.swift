// SPDX-License-Identifier: GPL-3.0-or-later

/// Builders for tag bytes the tests append or prepend by hand.
enum TagBytes {
    /// An ID3v1.1 tag (128 bytes).
    static func id3v1(
        title: String, artist: String = "", album: String = "", year: String = "",
        comment: String = "", track: UInt8 = 0, genre: UInt8 = 255
    ) -> [UInt8] {
        func field(_ text: String, _ size: Int) -> [UInt8] {
            Array((Array(text.utf8) + [UInt8](repeating: 0, count: size)).prefix(size))
        }
        var bytes = Array("TAG".utf8) + field(title, 30) + field(artist, 30) + field(album, 30) + field(year, 4)
        if track != 0 {
            bytes += field(comment, 28) + [0, track]
        } else {
            bytes += field(comment, 30)
        }
        return bytes + [genre]
    }

    /// An APEv2 tag (optional header, items, footer).
    static func ape(_ items: [(key: String, value: [UInt8], flags: UInt32)], header: Bool = false) -> [UInt8] {
        func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        var body: [UInt8] = []
        for item in items {
            body += le32(UInt32(item.value.count)) + le32(item.flags) + Array(item.key.utf8) + [0] + item.value
        }
        let size = UInt32(body.count + 32)
        let flags: UInt32 = 0x8000_0000 | (header ? 0x2000_0000 : 0)
        func block(_ isHeader: Bool) -> [UInt8] {
            Array("APETAGEX".utf8) + le32(2000) + le32(size) + le32(UInt32(items.count))
                + le32(flags | (isHeader ? 0x2000_0000 : 0)) + [UInt8](repeating: 0, count: 8)
        }
        return (header ? block(true) : []) + body + block(false)
    }

    /// A text item for `ape(_:)`.
    static func text(_ key: String, _ value: String) -> (key: String, value: [UInt8], flags: UInt32) {
        (key, Array(value.utf8), 0)
    }

    /// A syncsafe 28-bit size.
    static func syncsafe(_ size: Int) -> [UInt8] {
        [UInt8((size >> 21) & 0x7F), UInt8((size >> 14) & 0x7F), UInt8((size >> 7) & 0x7F), UInt8(size & 0x7F)]
    }

    /// An ID3v2.4 text frame (UTF-8).
    static func textFrame(_ id: String, _ values: [String]) -> [UInt8] {
        var data: [UInt8] = [3]
        for (index, value) in values.enumerated() {
            if index > 0 { data.append(0) }
            data += Array(value.utf8)
        }
        return Array(id.utf8) + self.syncsafe(data.count) + [0, 0] + data
    }

    /// An ID3v2.4 tag from frames, with a footer when asked.
    static func id3v24(_ frames: [[UInt8]], footer: Bool = false, padding: Int = 0) -> [UInt8] {
        let body = frames.flatMap { $0 } + [UInt8](repeating: 0, count: padding)
        let flags: UInt8 = footer ? 0x10 : 0
        var bytes = Array("ID3".utf8) + [4, 0, flags] + self.syncsafe(body.count) + body
        if footer { bytes += Array("3DI".utf8) + [4, 0, flags] + self.syncsafe(body.count) }
        return bytes
    }
}
