// SPDX-License-Identifier: GPL-3.0-or-later

import Model

extension WindowRange {
    /// Parses `N`, `N:`, `N:M` or `-1` (everything) as `mpd`'s range arguments are parsed (`strtol`, so leading
    /// white space and a `+` sign are accepted).
    ///
    /// - Throws: `ACK` code 2: `Integer or range expected: ARG`, `Number is negative: ARG`,
    ///   `Number too large: ARG` (above 2³¹−1) or `Malformed range: ARG` (START > END).
    public static func parse(_ text: String) throws(AckError) -> WindowRange {
        let bytes = FilterCNumbers.cString(text)
        func failure(_ reason: String) -> AckError {
            // mpd formats these into a 256-byte buffer.
            AckError(.arg, FilterCNumbers.truncated("\(reason): \(text)", toBytes: 255))
        }
        let (first, afterFirst) = CNumbers.strtol(bytes, from: 0)
        let colon = afterFirst < bytes.count && bytes[afterFirst] == UInt8(ascii: ":")
        guard afterFirst > 0, afterFirst == bytes.count || colon else { throw failure("Integer or range expected") }
        if first == -1 && !colon { return .all }
        guard first >= 0 else { throw failure("Number is negative") }
        guard first <= Int64(Int32.max) else { throw failure("Number too large") }
        let start = Int(first)
        guard colon else { return WindowRange(start: start, end: start + 1) }
        let (second, afterSecond) = CNumbers.strtol(bytes, from: afterFirst + 1)
        guard afterSecond == bytes.count else { throw failure("Integer or range expected") }
        if afterSecond == afterFirst + 1 { return WindowRange(start: start, end: nil) }
        guard second >= 0 else { throw failure("Number is negative") }
        guard second <= Int64(Int32.max) else { throw failure("Number too large") }
        guard start <= Int(second) else { throw failure("Malformed range") }
        return WindowRange(start: start, end: Int(second))
    }
}
