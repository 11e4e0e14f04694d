// SPDX-License-Identifier: GPL-3.0-or-later

import RawText

/// How file names are converted between the file system and the UTF-8 the rest of the server speaks, as `mpd`'s
/// `filesystem_charset`: without it (the default) names keep their bytes (`RawText`); with it, every name read
/// from the kernel (directory entries, link targets, resolved paths, inotify events, stored playlist lines) is
/// converted to UTF-8 and every path handed to the kernel or a C library is converted back.
///
/// One process-wide value, `current`, set once at startup before any other thread runs (`install`); the
/// conversion itself is safe from any thread.
public struct FileSystemCharset: Sendable {
    /// The configured character set's conversion: bytes to UTF-8 and back, each `nil` when ICU fails.
    public struct Conversion: Sendable {
        /// The character set's name as configured (`ISO-8859-1`).
        public var name: String
        /// Bytes from the file system to a UTF-8 name.
        public var toUTF8: @Sendable ([UInt8]) -> String?
        /// A UTF-8 name to the file system's bytes.
        public var fromUTF8: @Sendable (String) -> [UInt8]?

        /// A conversion from two functions (ICU's, in the server).
        public init(
            name: String, toUTF8: @escaping @Sendable ([UInt8]) -> String?,
            fromUTF8: @escaping @Sendable (String) -> [UInt8]?
        ) {
            self.name = name
            self.toUTF8 = toUTF8
            self.fromUTF8 = fromUTF8
        }
    }

    /// The conversion, or `nil` for names taken as the bytes they are.
    public let conversion: Conversion?
    /// Whether ASCII text converts to itself both ways (every ASCII-based character set), so that ASCII names
    /// skip the converter.
    private let asciiTransparent: Bool

    /// Names as the bytes they are (no `filesystem_charset`).
    public static let bytes = FileSystemCharset(nil)

    /// Names converted by `conversion`, or kept as bytes when it is `nil`.
    public init(_ conversion: Conversion?) {
        self.conversion = conversion
        guard let conversion else {
            self.asciiTransparent = true
            return
        }
        let ascii = Array(UInt8(0x01)..<0x80)
        self.asciiTransparent =
            conversion.toUTF8(ascii).map { Array($0.utf8) } == ascii
            && conversion.fromUTF8(String(decoding: ascii, as: UTF8.self)) == ascii
    }

    /// The name for file system bytes: converted to UTF-8, or (without a conversion, or when it fails) as
    /// `RawText`.
    public func decode(_ bytes: some Collection<UInt8>) -> String {
        guard let conversion = self.conversion else { return RawText.decode(bytes) }
        let array = Array(bytes)
        if self.asciiTransparent, !array.contains(where: { $0 >= 0x80 }) { return RawText.decode(array) }
        return conversion.toUTF8(array) ?? RawText.decode(array)
    }

    /// The file system bytes for a name: converted from UTF-8, or (without a conversion, or when it fails) its
    /// `RawText` bytes.
    public func encode(_ name: String) -> [UInt8] {
        guard let conversion = self.conversion else { return RawText.encode(name) }
        if self.asciiTransparent, name.utf8.allSatisfy({ $0 < 0x80 }) { return Array(name.utf8) }
        return conversion.fromUTF8(name) ?? RawText.encode(name)
    }

    /// Whether a client's `name` converts to this character set as `mpd` converts it: always without a
    /// conversion; with one, not when the client sent bytes that are not UTF-8 (``RawText`` escapes), on which
    /// `mpd`'s ICU conversion fails (`U_INVALID_CHAR_FOUND`). A character the charset lacks does convert (to
    /// the charset's substitute).
    public func converts(_ name: String) -> Bool { self.conversion == nil || !RawText.containsEscape(name) }

    // MARK: - The process's character set

    /// Set once by `install`, before any thread but the main one exists; read-only afterwards.
    @usableFromInline nonisolated(unsafe) static var installed = FileSystemCharset.bytes

    /// Whether the process's conversion converts names (else they are their `RawText` bytes).
    @usableFromInline static var converting: Bool { Self.installed.conversion != nil }

    /// The process's conversion (`FileSystemCharset.bytes` until `install`).
    public static var current: FileSystemCharset { Self.installed }

    /// Makes `charset` the process's conversion. Call once at startup, before any other thread starts.
    public static func install(_ charset: FileSystemCharset) { Self.installed = charset }

    /// `current.decode(bytes)`: a name read from the kernel.
    public static func decode(_ bytes: some Collection<UInt8>) -> String { Self.installed.decode(bytes) }

    /// `current.encode(name)`: a name handed to the kernel.
    public static func encode(_ name: String) -> [UInt8] { Self.installed.encode(name) }

    /// `current.converts(name)`.
    public static func converts(_ name: String) -> Bool { Self.installed.converts(name) }

    /// Calls `body` with `path` in the file system's character set as a NUL-terminated C string: the one way a
    /// file path reaches the kernel or a C library.
    @inlinable
    public static func withFilePath<R, E: Error>(
        _ path: String, _ body: (UnsafePointer<CChar>) throws(E) -> R
    ) throws(E) -> R {
        // Inlinable, so that callers' specializations have no generic `Result` to look up on every path.
        guard Self.converting else { return try RawText.withFilePath(path, body) }
        var bytes = Self.installed.encode(path).map { CChar(bitPattern: $0) }
        bytes.append(0)
        let outcome: Result<R, E> = bytes.withUnsafeBufferPointer { buffer in
            do throws(E) { return .success(try body(buffer.baseAddress!)) } catch { return .failure(error) }
        }
        return try outcome.get()
    }
}
