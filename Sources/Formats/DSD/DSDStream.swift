// SPDX-License-Identifier: GPL-3.0-or-later

import Input

/// An `InputStream` as `mpd` 0.23.12's DSD plugins move through it (its `DsdLib`), for the DSF and DSDIFF
/// parsers and decoders.
///
/// Like `mpd`'s file input, a seek may go past the end of the file: the position is then remembered and
/// every read there returns nothing. Skipping forward by a distance (`skip(_:)`) reproduces 0.23.12 exactly,
/// which seeks by the distance and then also reads that many bytes (a later `mpd` returns after the seek),
/// so the chunks it finds after a DSDIFF file's audio are the ones 0.23.12 finds.
///
/// Confined to the thread that reads (a scanner worker or the decoder thread). `read(into:)`,
/// `readFully(into:)` and `skip(to:)` do not allocate.
struct DSDStream {
    /// The stream read.
    let input: any InputStream
    /// Where the next read starts (may be past the end, after a seek there).
    private(set) var position: UInt64

    /// Starts at the stream's current offset.
    init(_ input: any InputStream) {
        self.input = input
        self.position = input.offset
    }

    /// The stream's length, when known.
    var size: UInt64? { self.input.size }

    /// Reads up to `buffer.count` bytes at `position`.
    ///
    /// - Returns: bytes read; 0 at (or past) the end.
    /// - Throws: `FormatError.input` when reading fails.
    mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        if let size = self.size, self.position >= size { return 0 }
        do {
            if self.input.offset != self.position { try self.input.seek(to: self.position) }
            let count = try self.input.read(into: buffer)
            self.position += UInt64(count)
            return count
        } catch {
            throw .input(error)
        }
    }

    /// Fills `buffer` (`decoder_read_full`).
    ///
    /// - Returns: whether it was filled; `false` when the stream ended first.
    mutating func readFully(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Bool {
        var done = 0
        while done < buffer.count {
            let count = try self.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...]))
            if count == 0 { return false }
            done += count
        }
        return true
    }

    /// Reads exactly `count` bytes, or `nil` when the stream ends first. Allocates (headers and tags only);
    /// `count` is checked against the stream's size before anything is allocated.
    mutating func readBytes(_ count: Int) throws(FormatError) -> [UInt8]? {
        guard count >= 0 else { return nil }
        if let size = self.size, UInt64(count) > size &- min(size, self.position) { return nil }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 1)
        defer { buffer.deallocate() }
        guard try self.readFully(into: buffer) else { return nil }
        return [UInt8](buffer)
    }

    /// `dsdlib_skip_to`: moves to `offset` (seekable streams: anywhere, even past the end; others: forward,
    /// by reading).
    ///
    /// - Returns: `false` where `mpd`'s would fail.
    mutating func skip(to offset: UInt64) throws(FormatError) -> Bool {
        if self.input.isSeekable {
            self.position = offset
            return true
        }
        guard offset >= self.position else { return false }
        return try self.skip(offset - self.position)
    }

    /// `dsdlib_skip` of `mpd` 0.23.12: on a seekable stream it seeks `delta` bytes forward and then reads
    /// `delta` more bytes (at most 1 MiB); on another stream it only reads them.
    ///
    /// - Returns: `false` where `mpd`'s would fail (more than 1 MiB, or the end of the stream reached).
    mutating func skip(_ delta: UInt64) throws(FormatError) -> Bool {
        if delta == 0 { return true }
        if self.input.isSeekable {
            let (target, overflow) = self.position.addingReportingOverflow(delta)
            if overflow { return false }
            self.position = target
        }
        if delta > 1024 * 1024 { return false }
        var left = Int(delta)
        return try withUnsafeTemporaryAllocation(byteCount: 1024, alignment: 1) { (scratch) throws(FormatError) in
            while left > 0 {
                let count = try self.read(into: UnsafeMutableRawBufferPointer(rebasing: scratch[0..<min(1024, left)]))
                if count == 0 { return false }
                left -= count
            }
            return true
        }
    }
}

extension DSDStream {
    /// The ID3 tag `mpd`'s `dsdlib_tag_id3` reads: from `offset` to the end of the stream, when that is
    /// 10 bytes to 4 MiB long and libid3tag parses it.
    mutating func id3Tag(at offset: UInt64) throws(FormatError) -> [UInt8]? {
        guard offset != 0, let size = self.size, offset < size else { return nil }
        let count = size - offset
        guard count >= 10, count <= 4 * 1024 * 1024 else { return nil }
        guard try self.skip(to: offset) else { return nil }
        return try self.readBytes(Int(count))
    }
}

/// Bytes read from a DSD file's headers: four-character ids and integers of either byte order.
enum DSDBytes {
    /// The 4-byte id at `offset`, compared with `id` (4 ASCII characters).
    static func id(_ bytes: [UInt8], _ offset: Int, is id: String) -> Bool {
        Array(id.utf8) == Array(bytes[offset..<offset + 4])
    }

    static func littleEndian32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << (8 * UInt32($1)) }
    }

    static func littleEndian64(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[offset + $1]) << (8 * UInt64($1)) }
    }

    static func bigEndian16(_ bytes: [UInt8], _ offset: Int) -> UInt16 {
        UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    static func bigEndian32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(bytes[offset + $1]) }
    }

    static func bigEndian64(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(bytes[offset + $1]) }
    }

    /// The DSD sample rates (one-bit samples per second) `mpd`'s `dsdlib_valid_freq` accepts: DSD64 to
    /// DSD512, of 44.1 kHz and of 48 kHz.
    static let validRates: Set<UInt32> = [
        2_822_400, 3_072_000, 5_644_800, 6_144_000, 11_289_600, 12_288_000, 22_579_200, 24_576_000,
    ]

    /// Each byte with its bits in the opposite order (DSF's least-significant-bit-first blocks).
    static let reversed: [UInt8] = (0...255).map { value in
        var result: UInt8 = 0
        for bit in 0..<8 where value & (1 << bit) != 0 { result |= 0x80 >> UInt8(bit) }
        return result
    }

    /// `audio_valid_sample_rate`: a PCM rate (for DSD, bits per second / 8) `mpd` accepts.
    static func isValidSampleRate(_ rate: UInt64) -> Bool { rate > 0 && rate < 1 << 30 }

    /// `audio_valid_channel_count`: 1 to 8.
    static func isValidChannelCount(_ channels: Int) -> Bool { (1...8).contains(channels) }
}
