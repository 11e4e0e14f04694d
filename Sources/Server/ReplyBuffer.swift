// SPDX-License-Identifier: GPL-3.0-or-later

import Model
import RawText

/// A reply built as bytes: `key: value` lines appended without string interpolation, for the replies
/// that run to hundreds of thousands of lines (`list`, `count … group` on a large library).
struct ReplyBuffer {
    private(set) var bytes: [UInt8] = []
    /// The line start `prefix(key:_:)` made last, and its key.
    private var prefixKey: Int32 = -1
    private var prefix: [UInt8] = []
    /// The `Format:` lines `formatLine(_:)` made last, with their formats, and which is replaced next.
    private var formatLines: [(format: AudioFormat, line: [UInt8])] = []
    private var formatLineReplaced = 0
    /// The date of the last `Last-Modified` day (`lastModifiedDate(_:)`); taken out and put back by writers that
    /// work out dates inside one `write(atMost:_:)`.
    var days = ISO8601Text.DayCache()
    private static let formatLinesKept = 8

    init(capacity: Int = 0) { self.bytes.reserveCapacity(capacity) }

    /// Appends `Format: F\n`, made once for a run of songs of one format.
    @inline(__always)
    mutating func appendFormatLine(_ format: AudioFormat) { self.bytes.append(contentsOf: self.formatLine(format)) }

    /// `Format: F\n`, made once for each of the last few formats (songs of a library alternate between a handful).
    @inline(__always)
    mutating func formatLine(_ format: AudioFormat) -> [UInt8] {
        if let index = self.formatLines.firstIndex(where: { $0.format == format }) {
            return self.formatLines[index].line
        }
        let line = Array("Format: \(format.description)\n".utf8)
        if self.formatLines.count < Self.formatLinesKept {
            self.formatLines.append((format, line))
        } else {
            self.formatLines[self.formatLineReplaced] = (format, line)
            self.formatLineReplaced = (self.formatLineReplaced + 1) % Self.formatLinesKept
        }
        return line
    }

    /// Appends what `body` writes, at most `capacity` bytes (more traps): pieces copied straight into the buffer
    /// (`ByteWriter`), for the lines of a song block.
    @inline(__always)
    mutating func write(atMost capacity: Int, _ body: (inout ByteWriter) -> Void) {
        self.bytes.append(writingAtMost: capacity, body)
    }

    /// The date `seconds` falls on, for a `Last-Modified` line (`ByteWriter.putISO8601(_:date:)`), worked out once
    /// for a run of times of one day; a time outside the years 1970 to 9999 gives a date that line does not use.
    @inline(__always)
    mutating func lastModifiedDate(_ seconds: Int64) -> ISO8601Text.Day {
        seconds >= 0 ? self.days.date(of: seconds) : .epoch
    }

    /// Appends `seconds` as `ISO8601Text` writes it; `false` (nothing appended) outside the years 1970 to 9999.
    @inline(__always)
    mutating func appendISO8601(_ seconds: Int64) -> Bool { ISO8601Text.append(seconds, to: &self.bytes) }

    /// Swaps the buffer's bytes with `other` (nothing is copied): lines appended in between go to the end of what
    /// `other` held.
    mutating func exchangeBytes(with other: inout [UInt8]) { swap(&self.bytes, &other) }

    /// Empties the buffer, keeping its storage (after its bytes were written out).
    mutating func removeAll() { self.bytes.removeAll(keepingCapacity: true) }

    /// The line start that `key` stands for (≥ 0): made by `make` the first time, and again when the key changes,
    /// in the storage of the one before (the caller drops its copy before asking again); for lines that share a
    /// start run after run (`file: DIR/` of songs listed directory by directory).
    @inline(__always)
    mutating func prefix(key: Int32, _ make: (inout [UInt8]) -> Void) -> [UInt8] {
        if key != self.prefixKey {
            self.prefix.removeAll(keepingCapacity: true)
            make(&self.prefix)
            self.prefixKey = key
        }
        return self.prefix
    }

    /// Appends `key: value\n`.
    @inline(__always)
    mutating func line(_ key: String, _ value: String) {
        self.key(key)
        self.bytes.append(contentsOf: value.utf8)
        self.bytes.append(UInt8(ascii: "\n"))
    }

    /// Appends `key: number\n`.
    @inline(__always)
    mutating func line(_ key: String, _ value: UInt64) {
        self.key(key)
        self.appendDecimal(value)
        self.bytes.append(UInt8(ascii: "\n"))
    }

    /// Appends `key: value\n`, turning `RawText` escapes in `value` back into their raw bytes (as
    /// `Client.write(_:)` does): for URIs, which may hold file names that are not UTF-8.
    @inline(__always)
    mutating func rawLine(_ key: String, _ value: String) {
        self.key(key)
        self.append(raw: value)
        self.bytes.append(UInt8(ascii: "\n"))
    }

    /// Appends `text`'s bytes, `RawText` escapes as their raw byte.
    @inline(__always)
    mutating func append(raw text: String) {
        if RawText.containsEscape(text) {
            self.bytes.append(contentsOf: RawText.encode(text))
        } else {
            self.bytes.append(contentsOf: text.utf8)
        }
    }

    /// Appends `bytes`.
    @inline(__always)
    mutating func append(bytes: some Collection<UInt8>) { self.bytes.append(contentsOf: bytes) }

    /// Appends UTF-8 `text`, `RawText` escapes as their raw byte (see `append(raw:)`).
    @inline(__always)
    mutating func append(rawUTF8 text: some Collection<UInt8>) {
        if text.contains(RawText.escapeLeadByte) {
            self.append(raw: String(decoding: text, as: UTF8.self))
        } else {
            self.bytes.append(contentsOf: text)
        }
    }

    /// Appends `key: `, for a value appended piece by piece (then a `\n`).
    @inline(__always)
    mutating func key(_ key: String) {
        self.bytes.append(contentsOf: key.utf8)
        self.bytes.append(UInt8(ascii: ":"))
        self.bytes.append(UInt8(ascii: " "))
    }

    /// Appends one byte.
    @inline(__always)
    mutating func append(byte: UInt8) { self.bytes.append(byte) }

    /// Appends `value` in decimal, with at least `minimumDigits` digits (zero-padded).
    mutating func appendDecimal(_ value: UInt64, minimumDigits: Int) {
        var power: UInt64 = 10
        for _ in 1..<max(minimumDigits, 1) {
            if value < power { self.bytes.append(UInt8(ascii: "0")) }
            power &*= 10
        }
        self.appendDecimal(value)
    }

    mutating func appendDecimal(_ value: UInt64) {
        if value < 10 {
            self.bytes.append(UInt8(truncatingIfNeeded: value) + 0x30)
            return
        }
        // The digits lowest first, then turned around in place.
        let start = self.bytes.count
        var rest = value
        while rest > 0 {
            self.bytes.append(UInt8(truncatingIfNeeded: rest % 10) + 0x30)
            rest /= 10
        }
        self.bytes[start...].reverse()
    }
}

extension ByteWriter {
    /// Writes `text`'s bytes, `RawText` escapes as their raw byte (never more than its UTF-8 count).
    @inline(__always)
    mutating func put(raw text: String) {
        let plain: Bool? = text.utf8.withContiguousStorageIfAvailable { bytes in
            guard !bytes.contains(RawText.escapeLeadByte) else { return false }
            self.put(bytes: bytes)
            return true
        }
        if plain != true { self.put(bytes: RawText.encode(text)) }
    }
}
