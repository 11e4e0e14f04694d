// SPDX-License-Identifier: GPL-3.0-or-later

import Model

/// Keeps the first 64 KiB of a stream that cannot seek, so that a decoder probing it can go back to (or within)
/// its start: `mpd`'s `RewindInputStream`, which `mpd` puts around every remote stream (`input_rewind_open`) so
/// that trying one decoder plugin after another works on a radio stream.
///
/// - Reads from the start are copied into the buffer while the stream is within its first 64 KiB; past that the
///   buffer is given up for good.
/// - ``seek(to:)`` to an offset within what is buffered always works (even when ``isSeekable`` is `false`, as
///   in `mpd`); any other seek goes to the wrapped stream (and gives the buffer up).
///
/// Confined to one thread at a time, as the wrapped stream. Allocates its buffer once; reads do not allocate.
public final class RewindInputStream: InputStream {
    /// The size of the buffer: `mpd`'s 64 KiB.
    public static let bufferSize = 64 * 1024

    /// The wrapped stream.
    public let input: any InputStream
    private var buffer: [UInt8]
    /// The end of the buffered bytes (0: none, or given up).
    private var tail = 0
    /// Where the next read starts.
    public private(set) var offset: UInt64 = 0

    /// Wraps `input`, which has not been read yet.
    public init(_ input: any InputStream) {
        self.input = input
        self.buffer = [UInt8](repeating: 0, count: Self.bufferSize)
        self.offset = input.offset
    }

    /// The wrapped stream's URI.
    public var uri: String { self.input.uri }
    /// The wrapped stream's size.
    public var size: UInt64? { self.input.size }
    /// The wrapped stream's (seeks within the buffer work regardless).
    public var isSeekable: Bool { self.input.isSeekable }
    /// The wrapped stream's type.
    public var mimeType: String? { self.input.mimeType }

    /// Whether the next read comes from the buffer.
    private var readingFromBuffer: Bool { self.tail > 0 && self.offset < self.input.offset }

    /// Reads from the buffer when rewound into it, else from the wrapped stream (keeping a copy while within
    /// the first 64 KiB).
    public func read(into destination: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        if self.readingFromBuffer {
            let head = Int(self.offset)
            let count = min(destination.count, self.tail - head)
            self.buffer.withUnsafeBytes { source in
                destination.baseAddress!.copyMemory(from: source.baseAddress! + head, byteCount: count)
            }
            self.offset += UInt64(count)
            return count
        }
        let count = try self.input.read(into: destination)
        if self.input.offset > UInt64(Self.bufferSize) {
            self.tail = 0
        } else if UInt64(self.tail) == self.offset, count > 0 {
            let tail = self.tail
            self.buffer.withUnsafeMutableBytes { target in
                target.baseAddress!.advanced(by: tail).copyMemory(from: destination.baseAddress!, byteCount: count)
            }
            self.tail += count
        }
        self.offset = self.input.offset
        return count
    }

    /// Moves within the buffer, or has the wrapped stream seek.
    ///
    /// - Throws: the wrapped stream's error (`InputError.notSeekable` for a radio stream outside the buffer).
    public func seek(to offset: UInt64) throws(InputError) {
        if self.tail > 0 && offset <= UInt64(self.tail) {
            self.offset = offset
            return
        }
        self.tail = 0
        try self.input.seek(to: offset)
        self.offset = self.input.offset
    }

    /// The wrapped stream's tag changes.
    public func readTag() -> [TagItem]? { self.input.readTag() }
}
