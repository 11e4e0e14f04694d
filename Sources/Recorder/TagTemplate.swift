// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc
import Model

/// `mpd`'s tag templates (`format_path`): `%name%` is a tag's value (or `%iso8601%`, the time in UTC), `[…]` a
/// group left out unless a tag in it has a value, `|` an alternative taken when nothing before it had one, `&` a
/// section kept only with the next one, `#` escapes the next character, `\n`, `\t`… and `\[`, `\]` escape too.
/// Pure but for the clock; any thread.
public enum TagTemplate {
    /// The text `template` makes for `tags` at `now` (seconds since the epoch), as `mpd`'s `FormatTag`; `nil`
    /// when it makes nothing (no file is written then, as an empty text).
    public static func format(_ template: String, tags: [TagItem], now: Int) -> String? {
        let bytes = Array(template.utf8)
        var index = 0
        let result = self.section(bytes, &index, nested: false) { name in self.value(of: name, tags: tags, now: now) }
        return result.map { String(decoding: $0, as: UTF8.self) }
    }

    /// A variable's value: `nil` for an unknown name (the specifier is then copied as written), `""` for a tag
    /// the song does not have.
    static func value(of name: String, tags: [TagItem], now: Int) -> [UInt8]? {
        if name == "iso8601" {
            var time = time_t(now)
            var parts = tm()
            guard gmtime_r(&time, &parts) != nil else { return [] }
            var buffer = [CChar](repeating: 0, count: 64)
            let length = strftime(&buffer, buffer.count, "%FT%TZ", &parts)
            return buffer.prefix(length).map { UInt8(bitPattern: $0) }
        }
        guard let type = TagType(parsing: name) else { return nil }
        guard let value = tags.first(where: { $0.type == type })?.value else { return [] }
        return self.sanitized(Array(value.utf8))
    }

    /// A tag value made safe for a path segment: leading dots dropped; when any character is unsafe (`\ / : * ?
    /// < > |` and controls other than none), the value cut to 255 bytes and each unsafe one made a space.
    static func sanitized(_ value: [UInt8]) -> [UInt8] {
        let trimmed = Array(value.drop { $0 == UInt8(ascii: ".") })
        func unsafe(_ byte: UInt8) -> Bool { byte < 0x20 || Array(#"\/:*?<>|"#.utf8).contains(byte) }
        guard trimmed.contains(where: unsafe) else { return trimmed }
        return trimmed.prefix(255).map { unsafe($0) ? UInt8(ascii: " ") : $0 }
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39)
            || byte == UInt8(ascii: "_")
    }

    /// Skips to the end of the current section (`&`, `|` or `]` outside nested groups).
    private static func skip(_ bytes: [UInt8], _ index: inout Int) {
        var depth = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "[") {
                depth += 1
            } else if byte == UInt8(ascii: "#"), index + 1 < bytes.count {
                index += 1
            } else if depth > 0 {
                if byte == UInt8(ascii: "]") { depth -= 1 }
            } else if byte == UInt8(ascii: "&") || byte == UInt8(ascii: "|") || byte == UInt8(ascii: "]") {
                return
            }
            index += 1
        }
    }

    /// One group (or the whole template): its text, `nil` when nothing was appended (or, for a group, when no
    /// variable in it had a value).
    private static func section(
        _ bytes: [UInt8], _ index: inout Int, nested: Bool, _ lookup: (String) -> [UInt8]?
    ) -> [UInt8]? {
        var result: [UInt8]?
        var found = false
        func append(_ more: some Sequence<UInt8>) { result = (result ?? []) + more }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "|"):
                index += 1
                if !found {
                    result = nil
                } else {
                    self.skip(bytes, &index)
                }
            case UInt8(ascii: "&"):
                index += 1
                if !found { self.skip(bytes, &index) } else { found = false }
            case UInt8(ascii: "["):
                index += 1
                if let inner = self.section(bytes, &index, nested: true, lookup) {
                    append(inner)
                    found = true
                }
            case UInt8(ascii: "]"):
                index += 1
                if nested { return found ? result : nil }
                // A `]` at the top level ends the template there, as mpd's.
                return found ? result : nil
            case UInt8(ascii: "\\"):
                let next = index + 1 < bytes.count ? bytes[index + 1] : 0
                let escapes: [UInt8: UInt8] = [
                    UInt8(ascii: "a"): 7, UInt8(ascii: "b"): 8, UInt8(ascii: "t"): 9, UInt8(ascii: "n"): 10,
                    UInt8(ascii: "v"): 11, UInt8(ascii: "f"): 12, UInt8(ascii: "r"): 13,
                    UInt8(ascii: "["): UInt8(ascii: "["), UInt8(ascii: "]"): UInt8(ascii: "]"),
                ]
                if let escaped = escapes[next] {
                    append([escaped])
                    index += 2
                } else {
                    append([byte])
                    index += 1
                }
            case UInt8(ascii: "%"):
                var end = index + 1
                while end < bytes.count, self.isNameByte(bytes[end]) { end += 1 }
                guard end < bytes.count, bytes[end] == UInt8(ascii: "%") else {
                    append(bytes[index..<end])
                    index = end
                    continue
                }
                let length = end - index + 1
                if length > 32 {
                    append(bytes[index..<end + 1])
                    index = end + 1
                    continue
                }
                let name = String(decoding: bytes[(index + 1)..<end], as: UTF8.self)
                if let value = lookup(name) {
                    if !value.isEmpty { found = true }
                    append(value)
                } else {
                    append(bytes[index..<end + 1])
                }
                index = end + 1
            case UInt8(ascii: "#") where index + 1 < bytes.count:
                append([bytes[index + 1]])
                index += 2
            default:
                append([byte])
                index += 1
            }
        }
        return result
    }
}
