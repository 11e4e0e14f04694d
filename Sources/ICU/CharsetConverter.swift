// SPDX-License-Identifier: GPL-3.0-or-later

internal import CICUShim

/// Converts text between a legacy character set and UTF-8 with ICU, as `mpd`'s `IcuConverter` (used for an HTTP
/// stream whose URL ends in `#charset=NAME`, and for file names under `filesystem_charset`).
///
/// Confined to one thread at a time (an ICU converter keeps state between calls).
public final class CharsetConverter {
    private let converter: OpaquePointer

    /// A converter from `charset` (any name or alias ICU knows: `ISO-8859-1`, `windows-1251`…), or `nil` when
    /// ICU does not know it.
    ///
    /// The corresponding C function is `ucnv_open`.
    public convenience init?(charset: String) {
        do {
            try self.init(opening: charset)
        } catch {
            return nil
        }
    }

    /// A converter from and to `charset`.
    ///
    /// The corresponding C function is `ucnv_open`.
    /// - Throws: `CharsetConverterError` with `mpd`'s message (`Failed to initialize charset 'X':
    ///   U_FILE_ACCESS_ERROR`) when ICU does not know the name.
    public init(opening charset: String) throws(CharsetConverterError) {
        var status: Int32 = 0
        let converter = ficu_converter_open(charset, &status)
        guard let converter, status <= 0 else {
            if let converter { ficu_converter_close(converter) }
            throw CharsetConverterError(
                message: "Failed to initialize charset '\(charset)': \(String(cString: ficu_error_name(status)))")
        }
        self.converter = converter
    }

    deinit { ficu_converter_close(self.converter) }

    /// `bytes` converted to UTF-8 (bytes the character set cannot map become U+FFFD), or `nil` when ICU fails.
    ///
    /// The corresponding C function is `ucnv_toUChars`.
    public func utf8(_ bytes: some Collection<UInt8>) -> [UInt8]? {
        let source = Array(bytes)
        guard !source.isEmpty else { return [] }
        // Each byte gives at most two UTF-16 units (ICU's own bound for one-byte character sets is one).
        var units = [UInt16](repeating: 0, count: source.count * 2 + 1)
        var status: Int32 = 0
        let count = source.withUnsafeBufferPointer { input in
            input.withMemoryRebound(to: CChar.self) { chars in
                units.withUnsafeMutableBufferPointer { output in
                    ficu_converter_to_utf16(
                        self.converter, output.baseAddress, Int32(output.count), chars.baseAddress, Int32(chars.count),
                        &status)
                }
            }
        }
        guard status <= 0, count >= 0 else { return nil }
        return Array(String(decoding: units[0..<Int(count)], as: UTF16.self).utf8)
    }
}

extension CharsetConverter {
    /// `text` converted from UTF-8 to the character set (characters it cannot map become its substitution
    /// character, `0x1A` for the ISO-8859 family, as `mpd`'s `IcuConverter::FromUTF8`), or `nil` when ICU fails.
    ///
    /// The corresponding C function is `ucnv_fromUChars`.
    public func bytes(_ text: String) -> [UInt8]? {
        let units = Array(text.utf16)
        guard !units.isEmpty else { return [] }
        // Four bytes per UTF-16 unit covers every ICU character set; a stateful one may need a few more to
        // return to its initial state, which the retry below handles.
        var capacity = units.count * 4 + 8
        for _ in 0..<2 {
            var bytes = [UInt8](repeating: 0, count: capacity)
            var status: Int32 = 0
            let count = units.withUnsafeBufferPointer { input in
                bytes.withUnsafeMutableBufferPointer { output in
                    output.withMemoryRebound(to: CChar.self) { chars in
                        ficu_converter_from_utf16(
                            self.converter, chars.baseAddress, Int32(chars.count), input.baseAddress,
                            Int32(input.count), &status)
                    }
                }
            }
            // U_BUFFER_OVERFLOW_ERROR: `count` is the length needed.
            if status == Self.bufferOverflow, count > capacity {
                capacity = Int(count)
                continue
            }
            guard status <= 0, count >= 0, Int(count) <= capacity else { return nil }
            return Array(bytes[0..<Int(count)])
        }
        return nil
    }

    /// ICU's `U_BUFFER_OVERFLOW_ERROR`.
    private static let bufferOverflow: Int32 = 15
}

/// A character set ICU does not know, with `mpd`'s message.
public struct CharsetConverterError: Error, CustomStringConvertible {
    /// `Failed to initialize charset 'NAME': U_…_ERROR`.
    public var message: String
    public var description: String { self.message }
}
