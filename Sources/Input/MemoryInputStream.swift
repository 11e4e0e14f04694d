// SPDX-License-Identifier: GPL-3.0-or-later

/// Bytes in memory as a seekable input stream: for fuzz targets and tests, and for a picture or a chunk a
/// plugin has already read.
///
/// Confined to one thread at a time. Reads never allocate.
public final class MemoryInputStream: InputStream {
    /// A name for messages.
    public let uri: String
    /// The byte count.
    public var size: UInt64? { UInt64(self.bytes.count) }
    /// Always `true`.
    public var isSeekable: Bool { true }
    /// The type given at creation, if any.
    public let mimeType: String?
    /// Where the next read starts.
    public private(set) var offset: UInt64 = 0
    private let bytes: [UInt8]

    /// Wraps `bytes`.
    public init(_ bytes: [UInt8], uri: String = "memory", mimeType: String? = nil) {
        self.bytes = bytes
        self.uri = uri
        self.mimeType = mimeType
    }

    /// Copies from the current offset.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        let start = Int(self.offset)
        let count = min(buffer.count, self.bytes.count - start)
        guard count > 0 else { return 0 }
        self.bytes.withUnsafeBytes { source in
            buffer.baseAddress!.copyMemory(from: source.baseAddress! + start, byteCount: count)
        }
        self.offset += UInt64(count)
        return count
    }

    /// Moves to `offset`, which may be at most the size.
    public func seek(to offset: UInt64) throws(InputError) {
        guard offset <= UInt64(self.bytes.count) else { throw .notSeekable(uri: self.uri) }
        self.offset = offset
    }
}
