// SPDX-License-Identifier: GPL-3.0-or-later

import ID3Tag
import Input
import Model

/// Philips' DSDIFF (`.dff`) files, as `mpd` 0.23.12's `dsdiff` plugin reads them (its own parser).
///
/// A `FRM8` form of type `DSD ` holding chunks: `PROP`/`SND ` (sample rate `FS  `, channels `CHNL`,
/// compression `CMPR`, which must be uncompressed `DSD `), the `DSD ` chunk of channel-interleaved bytes
/// (most significant bit first), and after it tags: an `ID3 ` chunk (preferred), else the native artist
/// (`DIAR`) and title (`DITI`) inside `DIIN`. Like `mpd`, the duration is the `DSD ` chunk's stated size
/// (even beyond the end of a truncated file), and the chunks after the audio are found as 0.23.12 finds them
/// (see `DSDStream.skip(_:)`): in most files, none. No `Format:` in the database. Any thread.
public struct DSDIFFFormat: FormatPlugin {
    /// `dsdiff`.
    public var name: String { "dsdiff" }
    /// `dff`.
    public var suffixes: [String] { ["dff"] }
    /// As `mpd` 0.23.12 lists them.
    public var mimeTypes: [String] { ["application/x-dff", "audio/x-dff", "audio/x-dsd"] }

    /// `lsbitfirst` of its `decoder` block: the `DSD ` chunk's bytes are delivered with their bits reversed
    /// (for files whose bytes are least significant bit first, against the format). Default `false`.
    public let leastSignificantBitFirst: Bool

    /// Creates the plugin.
    public init(leastSignificantBitFirst: Bool = false) { self.leastSignificantBitFirst = leastSignificantBitFirst }

    /// Reads the duration and the tags.
    ///
    /// - Throws: `FormatError.notRecognized` when `mpd`'s plugin would not read the file; `.input` when it
    ///   cannot be opened or read.
    public func readInfo(path: String) throws(FormatError) -> SongInfo {
        try self.readInfo(input: try LocalFile.input(path))
    }

    /// As `readInfo(path:)`, over a remote stream (`dsdiff_scan_stream`, the plugin's only scan): the chunks
    /// up to the sound data, then the tag chunks after it (seeking, else skipping forward).
    ///
    /// - Throws: `FormatError.notRecognized` when `mpd`'s plugin would not read the stream; `.input` when it
    ///   cannot be read.
    public func readInfo(input: any InputStream) throws(FormatError) -> SongInfo {
        var stream = DSDStream(input)
        let header = try Self.scan(&stream, path: input.uri)
        let tags = try Self.tags(&stream, header: header)
        var items: [RawTagItem] = []
        switch tags {
        case .id3(let tag): items = tag?.mpdTagItems() ?? []
        case .native(let native): items = native
        }
        let frames = header.dataSize / UInt64(header.channels)
        // C's wrap-around for absurd sizes, as `SongTime::FromScale` into its 32-bit milliseconds.
        let milliseconds = UInt64(UInt32(truncatingIfNeeded: frames &* 1000 / UInt64(header.bitRate / 8)))
        return SongInfo(
            tags: TagCollector.tagItems(items), durationMilliseconds: milliseconds,
            audioFormat: nil, replayGain: ReplayGainInfo(), hasPicture: tags.id3Tag?.hasPicture ?? false)
    }

    /// The `ID3 ` chunk's first `APIC` picture.
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
        let header = try Self.scan(&stream, path: input.uri)
        return try Self.tags(&stream, header: header).id3Tag?.pictures().first
    }

    /// The `ID3 ` chunk's `TXXX` pairs.
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
        let header = try Self.scan(&stream, path: input.uri)
        return DSDFile.pairs(try Self.tags(&stream, header: header).id3Tag)
    }

    /// Opens a decoder yielding the `DSD ` chunk's bytes.
    ///
    /// - Throws: `FormatError.notRecognized` when the stream is not a DSDIFF file `mpd` plays.
    public func makeDecoder(input: any InputStream) throws(FormatError) -> any Decoder {
        var stream = DSDStream(input)
        let header = try Self.parse(&stream, path: input.uri)
        guard DSDBytes.isValidSampleRate(UInt64(header.bitRate / 8)), DSDBytes.isValidChannelCount(header.channels)
        else { throw .unsupportedFormat("\(header.bitRate) Hz DSD, \(header.channels) channels") }
        return DSDIFFDecoder(stream: stream, header: header, reversesBits: self.leastSignificantBitFirst)
    }

    // MARK: - Parsing

    /// `dsdiff_scan_stream`'s checks on top of `parse`.
    static func scan(_ stream: inout DSDStream, path: String) throws(FormatError) -> DSDIFFHeader {
        let header = try Self.parse(&stream, path: path)
        guard DSDBytes.isValidSampleRate(UInt64(header.bitRate / 8)), DSDBytes.isValidChannelCount(header.channels)
        else { throw .notRecognized(path: path) }
        return header
    }

    /// `dsdiff_read_metadata`: the chunks up to the `DSD ` chunk, leaving `stream` at its first byte.
    ///
    /// - Throws: `FormatError.notRecognized` where `mpd` gives up.
    static func parse(_ stream: inout DSDStream, path: String) throws(FormatError) -> DSDIFFHeader {
        guard let form = try stream.readBytes(16), DSDBytes.id(form, 0, is: "FRM8"), DSDBytes.id(form, 12, is: "DSD ")
        else { throw .notRecognized(path: path) }
        var header = DSDIFFHeader()
        while true {
            guard let chunk = try stream.readBytes(12) else { throw .notRecognized(path: path) }
            let size = DSDBytes.bigEndian64(chunk, 4)
            let (end, overflow) = stream.position.addingReportingOverflow(size)
            // `mpd` would wrap around (and may loop for ever); Fermata refuses.
            guard !overflow else { throw .notRecognized(path: path) }
            if DSDBytes.id(chunk, 0, is: "PROP") {
                guard size >= 4, let kind = try stream.readBytes(4) else { throw .notRecognized(path: path) }
                if DSDBytes.id(kind, 0, is: "SND ") {
                    try Self.parseSound(&stream, end: end, into: &header, path: path)
                } else {
                    guard try stream.skip(to: end) else { throw .notRecognized(path: path) }
                }
            } else if DSDBytes.id(chunk, 0, is: "DSD ") {
                header.dataSize = size
                header.dataOffset = stream.position
                return header
            } else {
                guard try stream.skip(to: end) else { throw .notRecognized(path: path) }
            }
        }
    }

    /// `dsdiff_read_prop_snd`: the chunks of `PROP`/`SND ` up to `end`.
    private static func parseSound(
        _ stream: inout DSDStream, end: UInt64, into header: inout DSDIFFHeader, path: String
    ) throws(FormatError) {
        while stream.position <= end, end - stream.position >= 12 {
            guard let chunk = try stream.readBytes(12) else { throw .notRecognized(path: path) }
            let size = DSDBytes.bigEndian64(chunk, 4)
            let (padded, overflow) = size.addingReportingOverflow(1)
            let (chunkEnd, overflowEnd) = stream.position.addingReportingOverflow(padded & ~1)
            guard !overflow, !overflowEnd, chunkEnd <= end else { throw .notRecognized(path: path) }
            if DSDBytes.id(chunk, 0, is: "FS  ") {
                guard size == 4, let rate = try stream.readBytes(4) else { throw .notRecognized(path: path) }
                header.bitRate = Int(DSDBytes.bigEndian32(rate, 0))
            } else if DSDBytes.id(chunk, 0, is: "CHNL") {
                guard size >= 2, let count = try stream.readBytes(2), try stream.skip(to: chunkEnd) else {
                    throw .notRecognized(path: path)
                }
                header.channels = Int(DSDBytes.bigEndian16(count, 0))
            } else if DSDBytes.id(chunk, 0, is: "CMPR") {
                guard size >= 4, let kind = try stream.readBytes(4), try stream.skip(to: chunkEnd),
                    DSDBytes.id(kind, 0, is: "DSD ")
                else { throw .notRecognized(path: path) }
            } else {
                guard try stream.skip(to: chunkEnd) else { throw .notRecognized(path: path) }
            }
        }
        guard stream.position == end else { throw .notRecognized(path: path) }
    }

    /// The tags found after the audio: the `ID3 ` chunk's tag, or the native artist and title.
    enum Tags {
        case id3(ID3Tag?)
        case native([RawTagItem])

        var id3Tag: ID3Tag? {
            if case .id3(let tag) = self { return tag }
            return nil
        }
    }

    /// `dsdiff_read_metadata_extra`, from the start of the `DSD ` chunk's data.
    static func tags(_ stream: inout DSDStream, header: DSDIFFHeader) throws(FormatError) -> Tags {
        guard try stream.skip(header.dataSize), var chunk = try stream.readBytes(12) else { return .native([]) }
        var artist: UInt64 = 0
        var title: UInt64 = 0
        var id3: UInt64 = 0
        while true {
            var size = DSDBytes.bigEndian64(chunk, 4)
            if DSDBytes.id(chunk, 0, is: "DIIN") { size = 0 }
            if DSDBytes.id(chunk, 0, is: "DIAR") { artist = stream.position }
            if DSDBytes.id(chunk, 0, is: "DITI") { title = stream.position }
            if DSDBytes.id(chunk, 0, is: "ID3 ") { id3 = stream.position }
            guard try stream.skip(size), let next = try stream.readBytes(12) else { break }
            chunk = next
        }
        if id3 != 0 { return .id3(try DSDFile.id3(&stream, at: id3)) }
        var items: [RawTagItem] = []
        if artist != 0, let value = try Self.nativeTag(&stream, at: artist) { items.append(RawTagItem(.artist, value)) }
        if title != 0, let value = try Self.nativeTag(&stream, at: title) { items.append(RawTagItem(.title, value)) }
        return .native(items)
    }

    /// `dsdiff_handle_native_tag`: a 32-bit big-endian count, then that many bytes (at most 1024).
    private static func nativeTag(_ stream: inout DSDStream, at offset: UInt64) throws(FormatError) -> [UInt8]? {
        guard try stream.skip(to: offset), let count = try stream.readBytes(4) else { return nil }
        let length = DSDBytes.bigEndian32(count, 0)
        guard length > 0, length <= 1024 else { return nil }
        return try stream.readBytes(Int(length))
    }
}

/// What a DSDIFF file's chunks before the audio say (zero where a chunk was missing).
struct DSDIFFHeader: Hashable {
    /// One-bit samples per second and channel (`FS  `).
    var bitRate = 0
    /// Channels (`CHNL`).
    var channels = 0
    /// The `DSD ` chunk's stated size.
    var dataSize: UInt64 = 0
    /// Where its data starts.
    var dataOffset: UInt64 = 0
}

/// Decodes a DSDIFF file's `DSD ` chunk: its bytes as they are (already interleaved, MSB first), or with their
/// bits reversed when `lsbitfirst` is set.
///
/// Reads in pieces of at most 8192 bytes of whole frames, as `mpd` does: where the file ends inside a piece,
/// that piece is not played. Confined to the decoder thread; `decode(into:)` and `seek(toFrame:)` do not
/// allocate.
final class DSDIFFDecoder: Decoder {
    /// `dsdN:channels`.
    let format: AudioFormat
    /// The chunk's frames.
    let totalFrames: UInt64?
    /// `mpd`'s `channels × bits per second / 1000`.
    let bitRate: Int
    private var stream: DSDStream
    private let header: DSDIFFHeader
    /// One piece as read: made once, freed with the decoder.
    private let piece: UnsafeMutableRawBufferPointer
    private var remaining: UInt64
    private var pending = 0
    private var available = 0
    /// Each byte's bits are reversed (`lsbitfirst`).
    private let reversesBits: Bool

    init(stream: DSDStream, header: DSDIFFHeader, reversesBits: Bool = false) {
        self.reversesBits = reversesBits
        self.stream = stream
        self.header = header
        self.format = AudioFormat(sampleRate: header.bitRate / 8, sampleFormat: .dsd, channels: header.channels)
        self.totalFrames = header.dataSize / UInt64(header.channels)
        self.bitRate = header.channels * header.bitRate / 1000
        self.piece = .allocate(byteCount: 8192 / header.channels * header.channels, alignment: 16)
        self.remaining = header.dataSize
    }

    deinit { self.piece.deallocate() }

    /// Copies whole frames into `buffer`, reading the next piece when needed.
    ///
    /// - Returns: frames written; 0 at the end of the chunk or of the file.
    /// - Throws: `FormatError.input` when reading fails.
    func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        let channels = self.header.channels
        if self.pending == self.available {
            guard self.remaining >= UInt64(channels) else { return 0 }
            let size = Int(min(UInt64(self.piece.count), self.remaining / UInt64(channels) * UInt64(channels)))
            guard try self.stream.readFully(into: UnsafeMutableRawBufferPointer(rebasing: self.piece[0..<size])) else {
                self.remaining = 0
                return 0
            }
            self.remaining -= UInt64(size)
            if self.reversesBits {
                DSDBytes.reversed.withUnsafeBufferPointer { table in
                    for index in 0..<size { self.piece[index] = table[Int(self.piece[index])] }
                }
            }
            self.pending = 0
            self.available = size
        }
        let frames = min((self.available - self.pending) / channels, buffer.count / channels)
        let bytes = frames * channels
        buffer.baseAddress!.copyMemory(from: self.piece.baseAddress! + self.pending, byteCount: bytes)
        self.pending += bytes
        return frames
    }

    /// Moves to `frame` (byte-accurate: one byte per channel is a frame).
    ///
    /// - Returns: the frame reached; `totalFrames` past the end (the song then ends).
    @discardableResult
    func seek(toFrame frame: UInt64) throws(FormatError) -> UInt64 {
        self.pending = 0
        self.available = 0
        let (offset, overflow) = frame.multipliedReportingOverflow(by: UInt64(self.header.channels))
        guard !overflow, offset < self.header.dataSize else {
            self.remaining = 0
            return self.totalFrames ?? 0
        }
        guard try self.stream.skip(to: self.header.dataOffset + offset) else {
            throw .decoder("cannot seek to frame \(frame)")
        }
        self.remaining = self.header.dataSize - offset
        return frame
    }
}
