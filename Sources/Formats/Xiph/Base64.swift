// SPDX-License-Identifier: GPL-3.0-or-later

/// Standard base64 (RFC 4648, with `=` padding) for `METADATA_BLOCK_PICTURE` values.
///
/// Pure; any thread.
enum Base64 {
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(byte)] = UInt8(index)
        }
        return table
    }()

    /// The decoded bytes, or `nil` when `text` holds a byte outside the alphabet, padding before its end,
    /// or a length that is not a whole number of quantums.
    static func decode(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        var body = text
        var padding = 0
        while padding < 2, body.last == 0x3D {
            body = body.dropLast()
            padding += 1
        }
        guard (body.count + padding) % 4 == 0 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(body.count / 4 * 3 + 2)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in body {
            let value = self.values[Int(byte)]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        return output
    }
}
