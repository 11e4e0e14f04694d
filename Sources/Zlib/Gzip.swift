// SPDX-License-Identifier: GPL-3.0-or-later

import CZlib

/// A gzip stream could not be inflated or deflated.
public struct GzipError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, for the log.
    public let message: String

    public var description: String { self.message }
}

/// gzip streams through zlib: the database file `mpd` writes by default, `.vgz` chiptunes.
public enum Gzip {
    /// Whether `bytes` start like a gzip stream (its two magic bytes), as `mpd`'s `AutoGunzipReader` checks.
    public static func isCompressed(_ bytes: some Collection<UInt8>) -> Bool {
        var iterator = bytes.makeIterator()
        return iterator.next() == 0x1F && iterator.next() == 0x8B
    }

    /// Inflates a gzip stream; several members are read one after the other.
    ///
    /// - Parameters:
    ///   - limit: the largest inflated size accepted.
    ///   - acceptsTruncation: a stream that ends inside a member gives what it inflated so far (as zlib's own
    ///     `gzread` does) instead of an error, unless that is nothing.
    /// - Throws: `GzipError` for a corrupt or truncated stream, or one that inflates past `limit` bytes.
    public static func inflate(
        _ data: [UInt8], limit: Int, acceptsTruncation: Bool = false
    ) throws(GzipError) -> [UInt8] {
        var stream = z_stream()
        guard inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw GzipError(message: "zlib cannot start")
        }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        output.reserveCapacity(min(limit, data.count * 4))
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var failure: String?
        data.withUnsafeBufferPointer { source in
            stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
            stream.avail_in = UInt32(source.count)
            while true {
                let status = chunk.withUnsafeMutableBufferPointer { out in
                    stream.next_out = out.baseAddress
                    stream.avail_out = UInt32(out.count)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                output.append(contentsOf: chunk[0..<(chunk.count - Int(stream.avail_out))])
                if output.count > limit {
                    failure = "inflates past \(limit) bytes"
                    return
                }
                switch status {
                case Z_OK: continue
                case Z_STREAM_END:
                    if stream.avail_in == 0 { return }
                    guard inflateReset(&stream) == Z_OK else {
                        failure = "zlib cannot restart"
                        return
                    }
                case Z_BUF_ERROR:
                    // No progress possible: the input ended inside a member.
                    if acceptsTruncation && stream.avail_in == 0 && !output.isEmpty { return }
                    failure = "truncated gzip stream"
                    return
                default:
                    failure = stream.msg.map { String(cString: $0) } ?? "corrupt gzip stream"
                    return
                }
            }
        }
        if let failure { throw GzipError(message: failure) }
        return output
    }

    /// How hard a ``Deflater`` compresses.
    public enum Level: Sendable {
        /// zlib's default level (6), as `mpd`'s `GzipOutputStream`.
        case standard
        /// zlib's fastest level (1): about twice as fast as the default, output about a fifth larger.
        case fastest
    }

    /// Compresses a stream into one gzip member, fed piece by piece.
    public struct Deflater: ~Copyable {
        private var stream: UnsafeMutablePointer<z_stream>
        /// The compressed bytes so far.
        public private(set) var output: [UInt8] = []
        private var chunk = [UInt8](repeating: 0, count: 64 * 1024)

        /// Starts a stream compressed at `level`.
        public init(level: Level = .standard) {
            self.stream = .allocate(capacity: 1)
            self.stream.initialize(to: z_stream())
            // Only running out of memory fails here; zlib then fails every call, and `finish` reports it.
            _ = deflateInit2_(
                self.stream, level == .fastest ? Z_BEST_SPEED : Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                Int32(MemoryLayout<z_stream>.size))
        }

        deinit {
            deflateEnd(self.stream)
            self.stream.deinitialize(count: 1)
            self.stream.deallocate()
        }

        /// Compresses `bytes`.
        public mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
            _ = self.run(bytes, flush: Z_NO_FLUSH)
        }

        /// Ends the stream and returns it.
        ///
        /// - Throws: `GzipError` when zlib failed (out of memory).
        public consuming func finish() throws(GzipError) -> [UInt8] {
            let done = self.run(UnsafeBufferPointer(start: nil, count: 0), flush: Z_FINISH)
            guard done else { throw GzipError(message: "zlib cannot compress") }
            return self.output
        }

        /// Feeds `bytes`; returns whether zlib accepted them (and, with `Z_FINISH`, ended the stream).
        private mutating func run(_ bytes: UnsafeBufferPointer<UInt8>, flush: Int32) -> Bool {
            let stream = self.stream
            stream.pointee.next_in = UnsafeMutablePointer(mutating: bytes.baseAddress)
            stream.pointee.avail_in = UInt32(bytes.count)
            while true {
                let status = self.chunk.withUnsafeMutableBufferPointer { out in
                    stream.pointee.next_out = out.baseAddress
                    stream.pointee.avail_out = UInt32(out.count)
                    return CZlib.deflate(stream, flush)
                }
                self.output.append(contentsOf: self.chunk[0..<(self.chunk.count - Int(stream.pointee.avail_out))])
                switch status {
                case Z_STREAM_END: return true
                case Z_OK, Z_BUF_ERROR:
                    // More output to collect, or (Z_BUF_ERROR with nothing left) all input taken.
                    if stream.pointee.avail_out == 0 { continue }
                    if flush == Z_FINISH { continue }
                    return stream.pointee.avail_in == 0
                default: return false
                }
            }
        }
    }

    /// `bytes` as one gzip member.
    public static func deflate(_ bytes: [UInt8]) throws(GzipError) -> [UInt8] {
        var deflater = Deflater()
        bytes.withUnsafeBufferPointer { deflater.append($0) }
        return try deflater.finish()
    }
}
