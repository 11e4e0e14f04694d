// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// Where a command's reply goes: the client's connection, or a buffer in a test.
///
/// Loop-confined.
protocol ReplySink: AnyObject {
    /// Queues reply text. `RawText` escapes (names that are not valid UTF-8) go out as their raw bytes.
    func write(_ text: String)
    /// Queues reply bytes as they are.
    func write(bytes: some Sequence<UInt8>)
    /// Queues what `body` writes, at most `capacity` bytes (more traps), as they are.
    func write(atMost capacity: Int, _ body: (inout ByteWriter) -> Void)
    /// Queues what `body` appends to the bytes it is given (it must not change what they held), as they are.
    func appendInPlace(_ body: (inout [UInt8]) -> Void)
}

extension ReplySink {
    /// Queues what `body` writes, at most `capacity` bytes (more traps), through `write(bytes:)`.
    func write(atMost capacity: Int, _ body: (inout ByteWriter) -> Void) {
        self.write(bytes: ByteWriter.bytes(capacity: capacity, body))
    }

    /// Queues what `body` appends to an empty array, through `write(bytes:)`.
    func appendInPlace(_ body: (inout [UInt8]) -> Void) {
        var bytes: [UInt8] = []
        body(&bytes)
        if !bytes.isEmpty { self.write(bytes: bytes) }
    }

    /// Writes what `append` makes of each element of `elements` from one buffer, every 64 KiB: one write per
    /// batch rather than per element, for replies of thousands of songs or entries.
    func writeBatched<Elements: Sequence, Failure: Error>(
        _ elements: Elements, _ append: (Elements.Element, inout ReplyBuffer) throws(Failure) -> Void
    ) throws(Failure) {
        let batch = 1 << 16
        var reply = ReplyBuffer(capacity: 1024)
        for element in elements {
            try append(element, &reply)
            if reply.bytes.count >= batch {
                self.write(bytes: reply.bytes)
                reply.removeAll()
            }
        }
        if !reply.bytes.isEmpty { self.write(bytes: reply.bytes) }
    }
}
