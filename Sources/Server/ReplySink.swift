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

    /// Runs `body` on `reply` holding the sink's own output (``appendInPlace(_:)``), so that what it appends is made
    /// there and not copied in; `reply`'s line caches are kept for the next call. `body` must only append (the bytes
    /// `reply` begins with are queued output). Returns `false`, `body` not run, when the sink takes no more output
    /// (the connection is closing).
    @discardableResult
    func append(through reply: inout ReplyBuffer, _ body: (inout ReplyBuffer) -> Void) -> Bool {
        var ran = false
        self.appendInPlace { output in
            reply.exchangeBytes(with: &output)
            body(&reply)
            reply.exchangeBytes(with: &output)
            ran = true
        }
        return ran
    }

    /// Queues what `append` makes of each element of `elements`, made in the sink's own buffer
    /// (``appendInPlace(_:)``) about 64 KiB at a time, for replies of thousands of songs or entries; the line caches
    /// of the one `ReplyBuffer` are kept from batch to batch.
    func writeBatched<Elements: Sequence>(
        _ elements: Elements, _ append: (Elements.Element, inout ReplyBuffer) -> Void
    ) {
        let batch = 1 << 16
        var reply = ReplyBuffer()
        var iterator = elements.makeIterator()
        // Ends also when the sink takes no more output.
        var more = true
        while more {
            more = false
            self.append(through: &reply) { reply in
                let end = reply.bytes.count + batch
                while let element = iterator.next() {
                    append(element, &reply)
                    if reply.bytes.count >= end {
                        more = true
                        break
                    }
                }
            }
        }
    }
}
