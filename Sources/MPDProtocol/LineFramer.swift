// SPDX-License-Identifier: GPL-3.0-or-later

/// Splits request bytes into lines the way `mpd` does.
///
/// A line ends at `\n`; it may be at most `maximumLineLength` bytes, the `\n` included (8192 in `mpd`).
/// Every trailing byte `<= 0x20` is stripped (so `\r\n` and trailing blanks are fine), and the line ends
/// at its first NUL byte, as it does for `mpd`'s C strings.
public struct LineFramer: Sendable {
    /// The result of looking for the next line.
    public enum Frame: Equatable, Sendable {
        /// A complete line: its bytes (stripped, without `\n`) and how many input bytes it used.
        case line(ArraySlice<UInt8>, consumed: Int)
        /// No complete line yet; wait for more input.
        case needMore
        /// The buffer holds `maximumLineLength` bytes and no `\n`: the peer broke the limit.
        case overflow
    }

    /// The longest accepted line, `\n` included.
    public let maximumLineLength: Int
    private var scanned = 0

    /// Creates a framer for lines of at most `maximumLineLength` bytes.
    public init(maximumLineLength: Int = 8192) {
        self.maximumLineLength = maximumLineLength
    }

    /// Finds the next line in `buffer`, remembering how far it has looked so no byte is scanned twice.
    ///
    /// After `.line`, the caller drops `consumed` bytes from the front of its buffer before calling again.
    public mutating func next(in buffer: ArraySlice<UInt8>) -> Frame {
        let start = buffer.startIndex + min(self.scanned, buffer.count)
        guard let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) else {
            self.scanned = buffer.count
            return buffer.count >= self.maximumLineLength ? .overflow : .needMore
        }
        self.scanned = 0
        let consumed = newline - buffer.startIndex + 1
        if consumed > self.maximumLineLength { return .overflow }
        var line = buffer[buffer.startIndex..<newline]
        if let nul = line.firstIndex(of: 0) { line = line[line.startIndex..<nul] }
        while let last = line.last, last <= 0x20 { line = line.dropLast() }
        return .line(line, consumed: consumed)
    }
}
