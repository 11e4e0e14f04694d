// SPDX-License-Identifier: GPL-3.0-or-later

internal import CICUShim

/// Converts text in a legacy character set to UTF-8 with ICU, as `mpd`'s `IcuConverter::ToUTF8` (used for an
/// HTTP stream whose URL ends in `#charset=NAME`).
///
/// Confined to one thread at a time (an ICU converter keeps state between calls).
public final class CharsetConverter {
    private let converter: OpaquePointer

    /// A converter from `charset` (any name or alias ICU knows: `ISO-8859-1`, `windows-1251`…), or `nil` when
    /// ICU does not know it.
    ///
    /// The corresponding C function is `ucnv_open`.
    public init?(charset: String) {
        var status: Int32 = 0
        guard let converter = ficu_converter_open(charset, &status), status <= 0 else {
            return nil
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
