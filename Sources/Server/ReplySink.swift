// SPDX-License-Identifier: GPL-3.0-or-later

/// Where a command's reply goes: the client's connection, or a buffer in a test.
///
/// Loop-confined.
protocol ReplySink: AnyObject {
    /// Queues reply text. `RawText` escapes (names that are not valid UTF-8) go out as their raw bytes.
    func write(_ text: String)
    /// Queues reply bytes as they are.
    func write(bytes: some Sequence<UInt8>)
}
