import Input

/// A stream of unknown length over bytes in memory, as a remote stream: one that cannot seek (an HTTP stream
/// without ranges), or one that can go back (a remote stream's buffer).
final class SizelessStream: InputStream {
    let inner: MemoryInputStream
    let isSeekable: Bool

    init(_ bytes: [UInt8], uri: String, isSeekable: Bool) {
        self.inner = MemoryInputStream(bytes, uri: uri)
        self.isSeekable = isSeekable
    }

    var uri: String { self.inner.uri }
    var size: UInt64? { nil }
    var mimeType: String? { nil }
    var offset: UInt64 { self.inner.offset }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws(InputError) -> Int {
        try self.inner.read(into: buffer)
    }

    func seek(to offset: UInt64) throws(InputError) {
        guard self.isSeekable else { throw .notSeekable(uri: self.uri) }
        try self.inner.seek(to: offset)
    }
}
