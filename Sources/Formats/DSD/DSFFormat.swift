// SPDX-License-Identifier: GPL-3.0-or-later

import ID3Tag
import Input
import Model
import RawText

/// Sony's DSF files, as `mpd` 0.23.12's `dsf` plugin reads them (its own parser; no library exists).
///
/// A DSF file is a `DSD ` header (with the offset of an ID3v2 tag at the end of the file), a `fmt ` chunk
/// and a `data` chunk of 4096-byte blocks per channel. Like `mpd`, only version 1, raw DSD, 1 to 8 channels,
/// the rates DSD64 to DSD512 and 4096-byte blocks are read; the audio is the whole blocks of every channel
/// within the sample count (a last, partial block is not played, and the duration leaves it out). The database
/// gets the duration and the ID3 tag's tags, but no `Format:` (`mpd`'s scan reports none). Any thread.
public struct DSFFormat: FormatPlugin {
    /// `dsf`.
    public var name: String { "dsf" }
    /// `dsf`.
    public var suffixes: [String] { ["dsf"] }
    /// As `mpd` 0.23.12 lists them.
    public var mimeTypes: [String] { ["application/x-dsf", "audio/x-dsf", "audio/x-dsd"] }

    /// Creates the plugin.
    public init() {}

    /// Reads the duration and the ID3 tag's tags.
    ///
    /// - Throws: `FormatError.notRecognized` when `mpd`'s plugin would not read the file; `.input` when it
    ///   cannot be opened or read.
    public func readInfo(path: String) throws(FormatError) -> SongInfo {
        try self.readInfo(input: try LocalFile.input(path))
    }

    /// As `readInfo(path:)`, over a remote stream (`dsf_scan_stream`, the plugin's only scan): the headers, then
    /// the ID3 tag at the end when the stream knows its size (a seek, else a skip).
    ///
    /// - Throws: `FormatError.notRecognized` when `mpd`'s plugin would not read the stream; `.input` when it
    ///   cannot be read.
    public func readInfo(input: any InputStream) throws(FormatError) -> SongInfo {
        var stream = DSDStream(input)
        let header = try Self.parse(&stream, path: input.uri)
        let rate = UInt64(header.bitRate / 8)
        let id3 = try DSDFile.id3(&stream, at: header.id3Offset)
        return SongInfo(
            tags: TagCollector.tagItems(id3?.mpdTagItems() ?? []),
            durationMilliseconds: header.blocks * DSFHeader.blockSize * 1000 / rate, audioFormat: nil,
            replayGain: ReplayGainInfo(), hasPicture: id3?.hasPicture ?? false)
    }

    /// The ID3 tag's first `APIC` picture.
    ///
    /// - Throws: `FormatError.notRecognized` when `mpd`'s plugin would not read the file.
    public func readPicture(path: String) throws(FormatError) -> Picture? {
        try self.readPicture(input: try LocalFile.input(path))
    }

    /// As `readPicture(path:)`, over a remote stream.
    ///
    /// - Throws: `FormatError.notRecognized` when `mpd`'s plugin would not read the stream.
    public func readPicture(input: any InputStream) throws(FormatError) -> Picture? {
        var stream = DSDStream(input)
        let header = try Self.parse(&stream, path: input.uri)
        return try DSDFile.id3(&stream, at: header.id3Offset)?.pictures().first
    }

    /// The ID3 tag's `TXXX` pairs.
    ///
    /// - Throws: `FormatError.notRecognized` when `mpd`'s plugin would not read the file.
    public func readComments(path: String) throws(FormatError) -> [(name: String, value: String)] {
        try self.readComments(input: try LocalFile.input(path))
    }

    /// As `readComments(path:)`, over a remote stream.
    ///
    /// - Throws: `FormatError.notRecognized` when `mpd`'s plugin would not read the stream.
    public func readComments(input: any InputStream) throws(FormatError) -> [(name: String, value: String)] {
        var stream = DSDStream(input)
        let header = try Self.parse(&stream, path: input.uri)
        return DSDFile.pairs(try DSDFile.id3(&stream, at: header.id3Offset))
    }

    /// Opens a decoder yielding DSD bytes (most significant bit first, channels interleaved per byte).
    ///
    /// - Throws: `FormatError.notRecognized` when the stream is not a DSF file `mpd` plays.
    public func makeDecoder(input: any InputStream) throws(FormatError) -> any Decoder {
        var stream = DSDStream(input)
        let header = try Self.parse(&stream, path: input.uri)
        return DSFDecoder(stream: stream, header: header)
    }

    /// `dsf_read_metadata`: the three headers at the start, leaving `stream` at the first block.
    ///
    /// - Throws: `FormatError.notRecognized` where `mpd` gives up.
    static func parse(_ stream: inout DSDStream, path: String) throws(FormatError) -> DSFHeader {
        // "DSD " chunk (28 bytes), "fmt " chunk (52), "data" chunk header (12).
        guard let bytes = try stream.readBytes(28 + 52 + 12), DSDBytes.id(bytes, 0, is: "DSD "),
            DSDBytes.littleEndian64(bytes, 4) == 28, DSDBytes.id(bytes, 28, is: "fmt "),
            DSDBytes.littleEndian64(bytes, 32) == 52
        else { throw .notRecognized(path: path) }
        let version = DSDBytes.littleEndian32(bytes, 40)
        let formatID = DSDBytes.littleEndian32(bytes, 44)
        let channels = Int(DSDBytes.littleEndian32(bytes, 52))
        let bitRate = DSDBytes.littleEndian32(bytes, 56)
        let bitsPerSample = DSDBytes.littleEndian32(bytes, 60)
        let sampleCount = DSDBytes.littleEndian64(bytes, 64)
        let blockSize = DSDBytes.littleEndian32(bytes, 72)
        guard version == 1, formatID == 0, DSDBytes.isValidChannelCount(channels),
            DSDBytes.validRates.contains(bitRate), UInt64(blockSize) == DSFHeader.blockSize,
            DSDBytes.id(bytes, 80, is: "data")
        else { throw .notRecognized(path: path) }
        var dataSize = DSDBytes.littleEndian64(bytes, 84)
        guard dataSize >= 12 else { throw .notRecognized(path: path) }
        dataSize -= 12
        if let size = stream.size, dataSize > size - min(size, stream.position) { throw .notRecognized(path: path) }
        // The sample count bounds the audio (some files have junk at the end of the chunk); C's wrap-around.
        let playable = sampleCount &* UInt64(channels) / 8
        dataSize = min(dataSize, playable)
        return DSFHeader(
            bitRate: Int(bitRate), channels: channels, leastSignificantBitFirst: bitsPerSample == 1,
            blocks: dataSize / (UInt64(channels) * DSFHeader.blockSize), id3Offset: DSDBytes.littleEndian64(bytes, 20),
            dataOffset: stream.position)
    }
}

/// What a DSF file's headers say.
struct DSFHeader: Hashable {
    /// Bytes per channel in one block.
    static let blockSize: UInt64 = 4096
    /// One-bit samples per second and channel.
    var bitRate: Int
    /// Channels, 1 to 8.
    var channels: Int
    /// Whether each byte's first sample is its least significant bit (`bits per sample` 1).
    var leastSignificantBitFirst: Bool
    /// Whole blocks of every channel to play.
    var blocks: UInt64
    /// Where the ID3 tag starts (0: none).
    var id3Offset: UInt64
    /// Where the first block starts.
    var dataOffset: UInt64
}

/// Decodes a DSF file's blocks into DSD bytes, most significant bit first, interleaved per byte.
///
/// Confined to the decoder thread. Its block buffers are made once; `decode(into:)` and `seek(toFrame:)` do not
/// allocate.
final class DSFDecoder: Decoder {
    /// `dsdN:channels` (the rate is bits per second / 8).
    let format: AudioFormat
    /// 4096 frames per block.
    let totalFrames: UInt64?
    /// `mpd`'s `channels × bits per second / 1000`.
    let bitRate: Int
    private var stream: DSDStream
    private let header: DSFHeader
    /// One block as read (channel after channel) and interleaved: made once, freed with the decoder.
    private let raw: UnsafeMutableRawBufferPointer
    private let interleaved: UnsafeMutableRawBufferPointer
    /// The next block to read.
    private var block: UInt64 = 0
    /// Bytes of `interleaved` not delivered yet: from `pending` to `available`.
    private var pending = 0
    private var available = 0

    init(stream: DSDStream, header: DSFHeader) {
        self.stream = stream
        self.header = header
        self.format = AudioFormat(sampleRate: header.bitRate / 8, sampleFormat: .dsd, channels: header.channels)
        self.totalFrames = header.blocks * DSFHeader.blockSize
        self.bitRate = header.channels * header.bitRate / 1000
        let bytes = header.channels * Int(DSFHeader.blockSize)
        self.raw = .allocate(byteCount: bytes, alignment: 16)
        self.interleaved = .allocate(byteCount: bytes, alignment: 16)
    }

    deinit {
        self.raw.deallocate()
        self.interleaved.deallocate()
    }

    /// Copies whole frames into `buffer`, reading the next block when the last one is used up.
    ///
    /// - Returns: frames written; 0 at the end (also where the file ends before its last block, as `mpd`).
    /// - Throws: `FormatError.input` when reading fails.
    func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        if self.pending == self.available {
            guard self.block < self.header.blocks, try self.readBlock() else { return 0 }
        }
        let channels = self.header.channels
        let frames = min((self.available - self.pending) / channels, buffer.count / channels)
        let bytes = frames * channels
        buffer.baseAddress!.copyMemory(from: self.interleaved.baseAddress! + self.pending, byteCount: bytes)
        self.pending += bytes
        return frames
    }

    /// Moves to the start of the block holding `frame` (as `mpd`: block-accurate).
    ///
    /// - Returns: the first frame of that block; `totalFrames` past the end (the song then ends).
    @discardableResult
    func seek(toFrame frame: UInt64) throws(FormatError) -> UInt64 {
        self.pending = 0
        self.available = 0
        let block = frame / DSFHeader.blockSize
        guard block < self.header.blocks else {
            self.block = self.header.blocks
            return self.header.blocks * DSFHeader.blockSize
        }
        let blockBytes = UInt64(self.header.channels) * DSFHeader.blockSize
        guard try self.stream.skip(to: self.header.dataOffset + block * blockBytes) else {
            throw .decoder("cannot seek to block \(block)")
        }
        self.block = block
        return block * DSFHeader.blockSize
    }

    private func readBlock() throws(FormatError) -> Bool {
        guard try self.stream.readFully(into: self.raw) else {
            self.block = self.header.blocks
            return false
        }
        let channels = self.header.channels
        let size = Int(DSFHeader.blockSize)
        let reverse = self.header.leastSignificantBitFirst
        let raw = self.raw
        let out = self.interleaved
        DSDBytes.reversed.withUnsafeBufferPointer { table in
            for channel in 0..<channels {
                let base = channel * size
                for index in 0..<size {
                    let byte = raw[base + index]
                    out[index * channels + channel] = reverse ? table[Int(byte)] : byte
                }
            }
        }
        self.block += 1
        self.pending = 0
        self.available = channels * size
        return true
    }
}

/// What the two DSD plugins share: the ID3 tag.
enum DSDFile {
    /// The ID3 tag from `offset` to the end, parsed (`dsdlib_tag_id3`).
    static func id3(_ stream: inout DSDStream, at offset: UInt64) throws(FormatError) -> ID3Tag? {
        guard let bytes = try stream.id3Tag(at: offset) else { return nil }
        return ID3Tag(parsing: bytes)
    }

    /// An ID3 tag's `TXXX` pairs, as `readcomments` gets them.
    static func pairs(_ tag: ID3Tag?) -> [(name: String, value: String)] {
        (tag?.txxxPairs() ?? []).map { (RawText.decode($0.name), RawText.decode($0.value)) }
    }
}
