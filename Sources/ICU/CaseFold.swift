// SPDX-License-Identifier: GPL-3.0-or-later

import CICU

/// ICU full case folding (`u_strFoldCase` with `U_FOLD_CASE_DEFAULT`), as Debian's `mpd` applies for
/// case-insensitive search. Safe from any thread.
public enum CaseFold {
    /// Folds `text`; ASCII-only text takes a fast path with the same result.
    public static func fold(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            // For ASCII, full case folding is exactly lowercasing A-Z.
            return String(decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
        }
        let utf16 = Array(text.utf16)
        var capacity = utf16.count * 3 + 16
        while true {
            var output = [UInt16](repeating: 0, count: capacity)
            var status = U_ZERO_ERROR
            let length = utf16.withUnsafeBufferPointer { source in
                output.withUnsafeMutableBufferPointer { destination in
                    fermata_u_strFoldCase(
                        destination.baseAddress, Int32(destination.count), source.baseAddress,
                        Int32(source.count), UInt32(U_FOLD_CASE_DEFAULT), &status)
                }
            }
            if status == U_BUFFER_OVERFLOW_ERROR {
                capacity = Int(length) + 1
                continue
            }
            guard status.rawValue <= U_ZERO_ERROR.rawValue else { return text }
            return String(decoding: output[0..<Int(length)], as: UTF16.self)
        }
    }
}
