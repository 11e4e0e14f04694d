// SPDX-License-Identifier: GPL-3.0-or-later

import Synchronization

/// The `filesystem_charset` conversion of file names: the one ICU converter every thread shares, behind a lock,
/// as `mpd`'s `fs_converter`.
///
/// Safe from any thread.
public final class FileNameCharset: Sendable {
    /// The name as configured.
    public let name: String
    private let converter: Mutex<CharsetConverter>

    /// The conversion for `charset`.
    ///
    /// - Throws: `CharsetConverterError` with `mpd`'s message when ICU does not know the name.
    public init(_ charset: String) throws(CharsetConverterError) {
        self.name = charset
        self.converter = Mutex(try CharsetConverter(opening: charset))
    }

    /// A file name's bytes as UTF-8 (bytes the character set cannot map become U+FFFD), or `nil` when ICU fails.
    public func utf8(_ bytes: [UInt8]) -> String? {
        self.converter.withLock { converter in
            converter.utf8(bytes).map { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// A UTF-8 name in the character set (characters it cannot map become its substitution character), or `nil`
    /// when ICU fails.
    public func bytes(_ name: String) -> [UInt8]? {
        self.converter.withLock { converter in converter.bytes(name) }
    }
}
