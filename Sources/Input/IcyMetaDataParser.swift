// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// Takes the ICY (SHOUTcast) metadata blocks out of a stream's bytes and reads their titles, as `mpd`'s
/// `IcyMetaDataParser`.
///
/// A server that answered `icy-metaint: N` sends N bytes of audio, then one length byte L and L × 16 bytes of
/// metadata (`StreamTitle='…';StreamUrl='…';`, padded with zeros), then N bytes of audio again, and so on.
/// ``parseInPlace(_:)`` removes the length bytes and the metadata from a buffer that was just read, in place,
/// and keeps a tag for each complete non-empty block, which ``readTag()`` hands out once.
///
/// Pure and I/O-free. Confined to one thread at a time (the one that reads the stream). Allocates its metadata
/// buffer (4,080 bytes) once at creation; parsing allocates only the tag of a finished block.
public struct IcyMetaDataParser {
    /// The audio bytes between two metadata blocks (`icy-metaint`), or 0 when the stream has none.
    public let metaInterval: Int
    /// Audio bytes left before the next metadata block.
    private var dataRest: Int
    /// The length of the metadata block being read (0 between blocks: the next byte is a length byte).
    private var metaSize = 0
    /// Metadata bytes of the current block read so far.
    private var metaPosition = 0
    /// The current block's bytes; sized for the largest block (255 × 16).
    private var metaData: [UInt8]
    /// The tag of the last complete block, until ``readTag()`` takes it.
    private var tag: [TagItem]?
    /// Converts a title's bytes to UTF-8, if the stream names a charset.
    private let convert: Conversion?

    /// Converts a title's bytes from the stream's character set to UTF-8; `nil` when it cannot (the title is
    /// then dropped, as `mpd` drops it).
    public typealias Conversion = (ArraySlice<UInt8>) -> [UInt8]?

    /// A parser for a stream with `metaInterval` audio bytes between metadata blocks.
    ///
    /// - Parameters:
    ///   - metaInterval: The value of `icy-metaint`; 0 (or less) leaves every byte to the audio.
    ///   - convert: The character set conversion of titles (`mpd`'s `#charset=` URL fragment); `nil` takes
    ///     them as UTF-8.
    public init(metaInterval: Int, convert: Conversion? = nil) {
        self.convert = convert
        self.metaInterval = max(0, metaInterval)
        self.dataRest = self.metaInterval
        self.metaData = self.metaInterval > 0 ? [UInt8](repeating: 0, count: 255 * 16) : []
    }

    /// Whether the stream has metadata blocks (`mpd`'s `IsDefined`).
    public var isDefined: Bool { self.metaInterval > 0 }

    /// Removes the metadata from `buffer`, the bytes that were just read, moving the audio bytes to its start.
    ///
    /// - Returns: the number of audio bytes now at the start of `buffer`; 0 when it held only metadata.
    public mutating func parseInPlace(_ buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard self.isDefined, let base = buffer.baseAddress else { return buffer.count }
        var destination = 0
        var source = 0
        var length = buffer.count
        while length > 0 {
            let chunk = self.data(length)
            if chunk > 0 {
                if destination != source { (base + destination).copyMemory(from: base + source, byteCount: chunk) }
                destination += chunk
                source += chunk
                length -= chunk
                if length == 0 { break }
            }
            let consumed = self.meta(UnsafeRawBufferPointer(start: base + source, count: length))
            source += consumed
            length -= consumed
        }
        return destination
    }

    /// The tag of the last complete metadata block since the previous call, or `nil` when none was read. A
    /// block without a (non-empty) `StreamTitle` gives an empty tag.
    public mutating func readTag() -> [TagItem]? {
        defer { self.tag = nil }
        return self.tag
    }

    /// How many of `length` audio bytes come before the next metadata block (`mpd`'s `Data`).
    private mutating func data(_ length: Int) -> Int {
        guard self.dataRest > 0 else { return 0 }
        let chunk = min(length, self.dataRest)
        self.dataRest -= chunk
        return chunk
    }

    /// Reads metadata bytes from `bytes` (not empty); returns how many it consumed (`mpd`'s `Meta`).
    private mutating func meta(_ bytes: UnsafeRawBufferPointer) -> Int {
        var start = 0
        if self.metaSize == 0 {
            self.metaSize = Int(bytes[0]) * 16
            guard self.metaSize > 0 else {
                // A zero length byte: no metadata this time.
                self.dataRest = self.metaInterval
                return 1
            }
            start = 1
            self.metaPosition = 0
        }
        let count = min(bytes.count - start, self.metaSize - self.metaPosition)
        let position = self.metaPosition
        self.metaData.withUnsafeMutableBytes { data in
            data.baseAddress!.advanced(by: position).copyMemory(from: bytes.baseAddress! + start, byteCount: count)
        }
        self.metaPosition += count
        if self.metaPosition == self.metaSize {
            self.tag = self.metaData.withUnsafeBufferPointer {
                Self.parseTag($0[0..<self.metaSize], convert: self.convert)
            }
            self.metaSize = 0
            self.dataRest = self.metaInterval
        }
        return start + count
    }

    /// The tag of one metadata block's bytes (`mpd`'s `icy_parse_tag`), read as `mpd` 0.23.12 reads it:
    ///
    /// - `name='value';` pairs; a name without `=` ends the block, and a value not starting with a quote is
    ///   skipped up to the next `;`;
    /// - a value ends at the first `'` followed by `;` or by the block's end, else at its first `'` (none:
    ///   the block ends);
    /// - names and values end at a zero byte (C strings); only `StreamTitle` is kept, as `Title`;
    /// - a title inside one more pair of quotes loses them; an empty title is dropped; the value is cleaned up
    ///   as every tag value (``TagString/fixed(_:)``), after `convert` (the quotes are looked for after it, as
    ///   `mpd` does); without `convert` the bytes are taken as UTF-8.
    public static func parseTag(_ block: some Collection<UInt8>, convert: Conversion? = nil) -> [TagItem] {
        let bytes = Array(block)
        let end = bytes.count
        var items: [TagItem] = []
        var p = 0
        while p != end {
            let name = p
            guard let equals = bytes[p...].firstIndex(of: 0x3D) else { break }
            p = equals + 1
            if p == end || bytes[p] != 0x27 {
                // A syntax error: skip to the next semicolon.
                guard let semicolon = bytes[p...].firstIndex(of: 0x3B) else { break }
                p = semicolon + 1
                continue
            }
            p += 1
            let value = p
            let quote = self.endQuote(bytes, from: p)
            if quote == end { break }
            p = quote + 1
            if self.cString(bytes[name..<equals]).elementsEqual("StreamTitle".utf8),
                let title = self.title(self.cString(bytes[value..<quote]), convert: convert)
            {
                items.append(title)
            }
            guard let semicolon = bytes[p...].firstIndex(of: 0x3B) else { break }
            p = semicolon + 1
        }
        return items
    }

    /// The `Title` of a `StreamTitle` value: converted, unquoted once, cleaned up; `nil` when empty or when the
    /// conversion fails (`mpd`'s `icy_parse_tag_item` and `icy_add_item`).
    private static func title(_ value: ArraySlice<UInt8>, convert: Conversion?) -> TagItem? {
        var title = value
        if let convert {
            guard let converted = convert(value) else { return nil }
            title = ArraySlice(converted)
        }
        if title.count >= 2, title.first == 0x27, title.last == 0x27 { title = title.dropFirst().dropLast() }
        return title.isEmpty ? nil : TagItem(.title, TagString.fixed(title))
    }

    /// The quote that ends a value starting at `start`: the first `'` followed by `;` or by the end, else the
    /// first `'`, else the end (`mpd`'s `find_end_quote`).
    private static func endQuote(_ bytes: [UInt8], from start: Int) -> Int {
        let end = bytes.count
        let fallback = bytes[start...].firstIndex(of: 0x27) ?? end
        if fallback >= end - 1 || bytes[fallback + 1] == 0x3B { return fallback }
        var p = fallback + 1
        while true {
            guard let quote = bytes[p...].firstIndex(of: 0x27) else { return fallback }
            if quote == end - 1 || bytes[quote + 1] == 0x3B { return quote }
            p = quote + 1
        }
    }

    /// The bytes up to the first zero byte, as C reads a string.
    private static func cString(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        bytes.firstIndex(of: 0).map { bytes[..<$0] } ?? bytes
    }
}
