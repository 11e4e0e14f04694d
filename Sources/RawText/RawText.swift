// SPDX-License-Identifier: GPL-3.0-or-later

import Glibc

/// A lossless conversion between byte strings (file names, client arguments) and `String`, in the spirit of
/// Python's `surrogateescape`: `mpd` passes names that are not valid UTF-8 through as raw bytes, and so
/// must we.
///
/// Decoding keeps every valid UTF-8 sequence as its scalar and turns each other byte `b` (always 0x80…0xFF)
/// into the escape scalar U+10FE00 + `b`, that is U+10FE80…U+10FEFF: the top of Supplementary Private Use
/// Area-B, which no real name uses. A valid UTF-8 sequence that spells an escape scalar is escaped byte by
/// byte too, so an escape scalar in a decoded string always stands for one raw byte and the round trip is
/// exact for every byte string. Encoding turns escape scalars back into their byte and everything else
/// into UTF-8.
///
/// Use `decode` where bytes enter the process (directory entries, link targets, request lines, the
/// database file) and `encode` or `withFilePath` where a string leaves it (system calls, C libraries,
/// replies to clients).
public enum RawText {
    /// The first escape scalar, for byte 0x80 (U+10FE80); byte `b` is `escapeBase + b`.
    public static let escapeBase: UInt32 = 0x10FE00

    /// The UTF-8 lead byte of every escape scalar (and of every scalar from U+100000 up): a string whose
    /// UTF-8 has no 0xF4 byte contains no escape and encodes to its plain UTF-8.
    public static let escapeLeadByte: UInt8 = 0xF4

    /// The escape scalar range, U+10FE80…U+10FEFF.
    public static let escapeRange: ClosedRange<UInt32> = (escapeBase + 0x80)...(escapeBase + 0xFF)

    /// The string for `bytes`: valid UTF-8 as itself, every other byte as its escape scalar.
    public static func decode(_ bytes: some Collection<UInt8>) -> String {
        // Nearly every name and value: valid UTF-8 without the escapes' lead byte, read in place.
        let plain = bytes.withContiguousStorageIfAvailable { buffer -> String? in
            guard !buffer.contains(Self.escapeLeadByte) else { return nil }
            return Self.validUTF8(buffer)
        }
        if let plain, let plain { return plain }
        let array = Array(bytes)
        if let plain = Self.decodePlain(array) { return plain }
        var scalars = String.UnicodeScalarView()
        var index = 0
        while index < array.count {
            if let (scalar, length) = Self.scalar(in: array, at: index), !Self.escapeRange.contains(scalar.value) {
                scalars.append(scalar)
                index += length
            } else {
                scalars.append(Self.escape(array[index]))
                index += 1
            }
        }
        return String(scalars)
    }

    /// The string of `bytes` when they are valid UTF-8, else `nil`: `String(validating:as:)`, in half the time.
    ///
    /// `String(validating:as:)` is generic over the encoding and not specialised: each call looks up type metadata
    /// in the runtime's cache, which was most of the cost of decoding a file name. `String(decoding:as:)` has a fast
    /// path for UTF-8 in place; it repairs what is not valid (each bad sequence becomes U+FFFD), so the bytes it
    /// ends with are the ones given exactly when those were valid.
    public static func validUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var text = String(decoding: bytes, as: UTF8.self)
        let same = text.withUTF8 { utf8 in
            utf8.count == bytes.count
                && (bytes.isEmpty || memcmp(utf8.baseAddress!, bytes.baseAddress!, bytes.count) == 0)
        }
        return same ? text : nil
    }

    /// The bytes of `string`: escape scalars as their raw byte, everything else as UTF-8.
    public static func encode(_ string: String) -> [UInt8] {
        guard Self.mayContainEscape(string) else { return Array(string.utf8) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(string.utf8.count)
        for scalar in string.unicodeScalars {
            if let byte = Self.rawByte(scalar) {
                bytes.append(byte)
            } else {
                bytes.append(contentsOf: UTF8.encode(scalar)!)
            }
        }
        return bytes
    }

    /// Whether `string` holds an escape scalar, i.e. whether `encode` differs from its UTF-8.
    public static func containsEscape(_ string: String) -> Bool {
        guard Self.mayContainEscape(string) else { return false }
        return string.unicodeScalars.contains { Self.escapeRange.contains($0.value) }
    }

    /// Calls `body` with `path` encoded as a NUL-terminated C string: the one way a path string reaches
    /// the kernel or a C library.
    @inlinable
    public static func withFilePath<R, E: Error>(
        _ path: String, _ body: (UnsafePointer<CChar>) throws(E) -> R
    ) throws(E) -> R {
        // Inlinable, so that callers' specializations have no generic `Result` to look up on every path.
        if !Self.mayContainEscape(path) {
            // `withCString` is not typed-throws; carry the error out by hand.
            let outcome: Result<R, E> = path.withCString { pointer in
                do throws(E) { return .success(try body(pointer)) } catch { return .failure(error) }
            }
            return try outcome.get()
        }
        var bytes = Self.encode(path).map { CChar(bitPattern: $0) }
        bytes.append(0)
        let outcome: Result<R, E> = bytes.withUnsafeBufferPointer { buffer in
            do throws(E) { return .success(try body(buffer.baseAddress!)) } catch { return .failure(error) }
        }
        return try outcome.get()
    }

    /// The escape scalar for a byte that is not part of valid UTF-8.
    @inline(__always)
    static func escape(_ byte: UInt8) -> Unicode.Scalar {
        Unicode.Scalar(Self.escapeBase + UInt32(byte))!
    }

    /// The raw byte an escape scalar stands for, or `nil` for any other scalar.
    @inline(__always)
    public static func rawByte(_ scalar: Unicode.Scalar) -> UInt8? {
        Self.escapeRange.contains(scalar.value) ? UInt8(truncatingIfNeeded: scalar.value - Self.escapeBase) : nil
    }

    /// False when the UTF-8 has no 0xF4 byte, so no escape scalar.
    @inline(__always)
    @usableFromInline
    static func mayContainEscape(_ string: String) -> Bool { Self.contains(Self.escapeLeadByte, in: string) }

    /// Whether `string`'s UTF-8 holds `byte`: `memchr` over its storage in place (the generic `contains` of the
    /// UTF-8 view takes a few instructions per byte: a database update asks it of every name, more than once).
    public static func contains(_ byte: UInt8, in string: String) -> Bool {
        let utf8 = string.utf8
        let found = utf8.withContiguousStorageIfAvailable { buffer in
            guard let base = buffer.baseAddress else { return false }
            return memchr(base, Int32(byte), buffer.count) != nil
        }
        return found ?? utf8.contains(byte)
    }

    /// The string when `bytes` are valid UTF-8 with no escape-range scalar; `nil` otherwise.
    private static func decodePlain(_ bytes: [UInt8]) -> String? {
        guard let text = bytes.withUnsafeBufferPointer(Self.validUTF8) else { return nil }
        guard bytes.contains(Self.escapeLeadByte) else { return text }
        return text.unicodeScalars.contains(where: { Self.escapeRange.contains($0.value) }) ? nil : text
    }

    /// The strictly valid UTF-8 sequence starting at `index` (no overlong forms, no surrogates, nothing
    /// above U+10FFFF), as its scalar and length; `nil` if the byte there does not start one.
    static func scalar(in bytes: [UInt8], at index: Int) -> (Unicode.Scalar, Int)? {
        let first = bytes[index]
        if first < 0x80 { return (Unicode.Scalar(first), 1) }
        let length: Int
        var value: UInt32
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch first {
        case 0xC2...0xDF: length = 2; value = UInt32(first & 0x1F)
        case 0xE0: length = 3; value = 0; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3; value = UInt32(first & 0x0F)
        case 0xED: length = 3; value = 0x0D; high = 0x9F
        case 0xF0: length = 4; value = 0; low = 0x90
        case 0xF1...0xF3: length = 4; value = UInt32(first & 0x07)
        case 0xF4: length = 4; value = 4; high = 0x8F
        default: return nil
        }
        guard index + length <= bytes.count else { return nil }
        for offset in 1..<length {
            let byte = bytes[index + offset]
            let (minimum, maximum): (UInt8, UInt8) = offset == 1 ? (low, high) : (0x80, 0xBF)
            guard byte >= minimum && byte <= maximum else { return nil }
            value = value << 6 | UInt32(byte & 0x3F)
        }
        guard let scalar = Unicode.Scalar(value) else { return nil }
        return (scalar, length)
    }
}
