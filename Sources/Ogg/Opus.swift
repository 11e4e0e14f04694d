// SPDX-License-Identifier: GPL-3.0-or-later

import COgg
import COpus
import Input

/// The fields of an `OpusHead` packet `mpd` reads (its `ScanOpusHeader`).
public struct OpusHead: Sendable, Hashable {
    /// The channel count (byte 9).
    public var channels: Int
    /// Samples to drop at the start (at 48 kHz).
    public var preSkip: Int
    /// The output gain, Q7.8 dB (signed).
    public var outputGain: Int

    /// The fields of `packet`, or `nil` unless it starts with `OpusHead`, holds at least 19 bytes and has
    /// a major version of 0.
    public init?(_ packet: some Collection<UInt8>) {
        let bytes = Array(packet.prefix(19))
        guard bytes.count >= 19, bytes.starts(with: Array("OpusHead".utf8)), bytes[8] & 0xF0 == 0 else {
            return nil
        }
        self.channels = Int(bytes[9])
        self.preSkip = Int(UInt16(bytes[10]) | UInt16(bytes[11]) << 8)
        self.outputGain = Int(Int16(bitPattern: UInt16(bytes[16]) | UInt16(bytes[17]) << 8))
    }
}

/// What `mpd`'s Opus plugin scans in an Ogg Opus file: `OpusHead` as the first packet (a beginning of
/// stream, 1–8 channels), `OpusTags` as the second, then the end-of-stream granule position.
public struct OpusStreamInfo: Sendable, Hashable {
    /// The identification header.
    public var head: OpusHead
    /// The `OpusTags` packet, whole (the plugin parses it as `mpd` does).
    public var tags: [UInt8]
    /// The granule position of the first stream's end-of-stream packet, when found.
    public var endGranulePosition: Int64?

    /// Reads the first logical stream's headers from `input`'s current offset.
    ///
    /// Any thread (one call per input); allocates.
    /// - Throws: `OggError.malformed` when the first packet is no valid `OpusHead` or the second no
    ///   `OpusTags`; `.input` when reading failed.
    public static func read(_ input: any InputStream) throws(OggError) -> OpusStreamInfo {
        let reader = try OggPacketReader(input: input)
        guard let first = reader.nextPacket(), first.isBeginning, let head = OpusHead(first.bytes),
            (1...8).contains(head.channels)
        else { throw .malformed("no OpusHead") }
        guard let second = reader.nextPacket(), second.bytes.starts(with: Array("OpusTags".utf8)) else {
            throw .malformed("no OpusTags")
        }
        return OpusStreamInfo(head: head, tags: second.bytes, endGranulePosition: reader.endGranulePosition())
    }
}

/// Decodes an Ogg Opus stream as `mpd`'s Opus plugin: libopus at 48 kHz into signed 16-bit interleaved
/// samples, the pre-skip dropped at the start, the last page's end trimming applied, the header's output
/// gain left to ReplayGain (not applied to the samples). Like `mpd` it plays only the first logical stream
/// of a seekable input, and chains streams of an unseekable one. libopus's plain decoder takes one or two
/// channels only, so (as in `mpd`) multichannel files do not open.
///
/// Confined to the decoding thread. `decode(into:)` and `seek(toFrame:)` do not allocate: the decoder
/// state and its 1/4 s output buffer exist from the start.
public final class OggOpusDecoder {
    /// The channel count.
    public private(set) var channels = 0
    /// The first stream's identification header.
    public private(set) var head: OpusHead
    /// The identification header of the stream being decoded (a later one of a chain has its own output gain).
    public private(set) var streamHead: OpusHead
    /// The first stream's end granule position (`mpd`'s duration, pre-skip included), if found.
    public private(set) var endGranulePosition: Int64?
    /// The last `OpusTags` packet read, whole (empty before the first).
    public private(set) var tagsPacket: [UInt8] = []
    /// How many `OpusTags` packets were read.
    public private(set) var commentsRevision = 0

    /// libopus's output size: a quarter second, more than the 120 ms a packet can hold.
    static let bufferFrames = 48000 / 4

    private let demuxer: OggDemuxer
    /// Unsafe: libopus's decoder state in memory of `opus_decoder_get_size`, freed in `deinit`.
    private var state: OpaquePointer?
    private var stateMemory: UnsafeMutableRawPointer?
    private var buffer: UnsafeMutablePointer<Int16>
    private var bufferStart = 0
    private var bufferCount = 0
    /// The granule position of the first buffered frame, when known.
    private var bufferGranule: Int64?
    /// The granule position of the next decoded sample, when known (`mpd`'s `granulepos`).
    private var granulePosition: Int64? = 0
    /// Samples still to drop (the pre-skip).
    private var skip = 0
    private var hasStream = false
    private var postSeek = false
    /// Set once `mpd` would stop (the first stream of a seekable input ended).
    private var finished = false
    private var failure: OggError?

    /// Opens the stream `input` holds from its current offset (the start).
    ///
    /// - Throws: `OggError.malformed` when it is not Ogg Opus or its first packet no valid `OpusHead`;
    ///   `.library` when libopus refuses the channel count; `.input` when reading fails.
    public init(input: any InputStream) throws(OggError) {
        guard try OggCodec.detect(input) == .opus else { throw .malformed("not an Ogg Opus stream") }
        self.demuxer = OggDemuxer(input: input)
        try? self.demuxer.rewind()
        self.buffer = .allocate(capacity: 1)
        self.head = OpusHead(Array("OpusHead".utf8) + [UInt8](repeating: 0, count: 11))!
        self.streamHead = self.head
        while !self.hasStream {
            switch self.demuxer.next() {
            case .end: throw self.demuxer.sync.inputError.map(OggError.input) ?? .malformed("no OpusHead")
            case .newSerial: break
            case .packet:
                guard self.demuxer.packet.pointee.b_o_s != 0 else { throw .malformed("BOS packet expected") }
                try self.beginStream()
            }
        }
        self.buffer.deallocate()
        self.buffer = .allocate(capacity: Self.bufferFrames * self.channels)
        self.endGranulePosition = self.demuxer.endGranule(serial: self.demuxer.stream.serial)
        // The packet after `OpusHead` is `OpusTags`: handled now, so the stream's tags are known before its audio
        // (as `mpd`'s scan of a stream reads them). Any other packet is decoded into the buffer, as the first
        // `decode(into:)` would; a failure is kept for it.
        _ = try? self.advance()
    }

    deinit {
        self.stateMemory?.deallocate()
        self.buffer.deallocate()
    }

    /// Whether `seek(toFrame:)` can work: the input can seek (without the end granule position, by decoding
    /// from the start).
    public var isSeekable: Bool { self.demuxer.input.isSeekable }
    /// Whether `mpd` calls the stream seekable (its end granule position is known and positive): it then
    /// answers seeks, and stops after the first logical stream.
    public var mpdSeekable: Bool { (self.endGranulePosition ?? 0) > 0 }

    /// `mpd`'s `OnOggBeginning`: an `OpusHead` packet starts a stream.
    private func beginStream() throws(OggError) {
        let packet = self.demuxer.packet.pointee
        guard self.state == nil, let head = OpusHead(packet.bytesView), (1...8).contains(head.channels) else {
            throw .malformed("BOS packet must be OpusHead")
        }
        if self.channels != 0, head.channels != self.channels {
            throw .malformed("Next stream has different channels (\(self.channels) -> \(head.channels))")
        }
        let size = Int(opus_decoder_get_size(Int32(head.channels)))
        guard size > 0 else { throw .library("libopus error: \(String(cString: opus_strerror(OPUS_BAD_ARG)))") }
        let memory = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        let state = OpaquePointer(memory)
        let result = opus_decoder_init(state, 48000, Int32(head.channels))
        guard result == OPUS_OK else {
            memory.deallocate()
            throw .library("libopus error: \(String(cString: opus_strerror(result)))")
        }
        self.stateMemory?.deallocate()
        self.stateMemory = memory
        self.state = state
        if self.channels == 0 {
            self.head = head
            self.channels = head.channels
        }
        self.streamHead = head
        self.hasStream = true
        self.granulePosition = 0
        self.skip = head.preSkip
    }

    /// Whether `endStream()` stopped the decoder (`mpd`'s `OnOggEnd` throws `StopDecoder` there).
    public var endedWithStop: Bool { self.finished }

    /// `mpd`'s `OnOggEnd`: a seekable input stops after its first stream; an unseekable one may chain.
    private func endStream() {
        guard self.hasStream else { return }
        self.hasStream = false
        if self.mpdSeekable {
            self.finished = true
        } else {
            self.state = nil
        }
    }

    /// Decodes into `buffer`: interleaved signed 16-bit samples, as many whole frames as fit.
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: frames written; 0 at the end.
    /// - Throws: `OggError.library` when libopus fails on a packet, `.malformed` for a damaged stream.
    public func decode(into output: UnsafeMutableRawBufferPointer) throws(OggError) -> Int {
        if let failure { throw failure }
        let capacity = output.count / (2 * self.channels)
        guard capacity > 0 else { return 0 }
        while self.bufferCount == 0 {
            guard try self.advance() else { return 0 }
        }
        let frames = min(capacity, self.bufferCount)
        let samples = frames * self.channels
        output.baseAddress!.copyMemory(
            from: self.buffer + self.bufferStart * self.channels, byteCount: samples * 2)
        self.bufferStart += frames
        self.bufferCount -= frames
        return frames
    }

    /// Handles the next packet. Returns `false` at the end.
    private func advance() throws(OggError) -> Bool {
        guard !self.finished else { return false }
        do {
            switch self.demuxer.next() {
            case .end: return false
            case .newSerial: self.endStream()
            case .packet: try self.handlePacket()
            }
            return !self.finished || self.bufferCount > 0
        } catch {
            self.failure = error
            throw error
        }
    }

    /// `mpd`'s `OggVisitor::HandlePacket` with the Opus plugin's callbacks.
    private func handlePacket() throws(OggError) {
        let packet = self.demuxer.packet.pointee
        let afterSeek = self.postSeek
        self.postSeek = false
        if packet.b_o_s != 0 {
            if afterSeek { return }
            self.endStream()
            if self.finished { return }
            try self.beginStream()
            return
        }
        guard self.hasStream else { throw .malformed("BOS packet expected") }
        if packet.starts(with: "OpusTags") {
            // Rare (once per stream of a chain): copying it is not per-period work.
            self.tagsPacket = Array(packet.bytesView)
            self.commentsRevision += 1
        } else {
            try self.decodeAudio(packet)
        }
        if packet.e_o_s != 0 { self.endStream() }
    }

    /// `mpd`'s `HandleAudio`: decode, drop the pre-skip, trim at the end, track the granule position.
    private func decodeAudio(_ packet: ogg_packet) throws(OggError) {
        guard let state = self.state else { throw .malformed("BOS packet expected") }
        var frames = Int(
            opus_decode(state, packet.packet, Int32(clamping: packet.bytes), self.buffer, Int32(Self.bufferFrames), 0))
        if frames < 0 { throw .library("libopus error: \(String(cString: opus_strerror(Int32(frames))))") }
        if frames == 0 { return }
        if self.skip >= frames {
            self.skip -= frames
            self.granulePosition = self.granulePosition.map { $0 + Int64(frames) }
            return
        }
        let start = self.skip
        frames -= self.skip
        self.granulePosition = self.granulePosition.map { $0 + Int64(self.skip) }
        self.skip = 0
        if packet.e_o_s != 0, packet.granulepos > 0, let position = self.granulePosition {
            let remaining = packet.granulepos - position
            if remaining <= 0 { return }
            frames = Int(min(Int64(frames), remaining))
        }
        self.bufferStart = start
        self.bufferCount = frames
        if packet.granulepos > 0 {
            if self.granulePosition == nil { self.granulePosition = packet.granulepos - Int64(frames) }
            self.bufferGranule = self.granulePosition
            self.granulePosition = packet.granulepos
        } else {
            self.bufferGranule = self.granulePosition
            self.granulePosition = self.granulePosition.map { $0 + Int64(frames) }
        }
    }

    /// Moves to output frame `frame` (granule position `frame` + pre-skip) exactly: `mpd`'s bisection aimed
    /// 80 ms plus its margin early, the decoder reset, then decoding forward and dropping samples up to the
    /// frame (from the start of the file when the bisection cannot land early).
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: the frame reached.
    /// - Throws: `OggError.malformed` when the stream is not seekable, `.input` when the input fails.
    @discardableResult
    public func seek(toFrame frame: UInt64) throws(OggError) -> UInt64 {
        guard self.isSeekable, let memory = self.stateMemory else { throw .malformed("stream is not seekable") }
        let end = self.endGranulePosition ?? 0
        let state = OpaquePointer(memory)
        self.failure = nil
        self.finished = false
        let preSkip = Int64(self.head.preSkip)
        let target = Int64(clamping: frame) + preSkip
        let preRoll: Int64 = 3840
        var aim = target - preRoll - 44100 / 10
        var positioned = false
        while aim > 0, end > 0 {
            guard let landed = try self.demuxer.seek(granule: aim, endGranule: end) else { break }
            if landed <= target - preRoll {
                positioned = true
                break
            }
            aim -= max(44100, landed - target + preRoll)
        }
        if !positioned { try self.demuxer.seekByte(0) }
        _ = opus_decoder_init(state, 48000, Int32(self.channels))
        self.state = state
        self.postSeek = true
        self.hasStream = true
        self.skip = positioned ? 0 : Int(preSkip)
        self.granulePosition = positioned ? nil : 0
        self.bufferCount = 0
        self.bufferGranule = nil
        while true {
            if self.bufferCount > 0 {
                guard let position = self.bufferGranule else {
                    self.bufferCount = 0
                    continue
                }
                let drop = Int(max(0, min(Int64(self.bufferCount), target - position)))
                self.bufferStart += drop
                self.bufferCount -= drop
                self.bufferGranule = position + Int64(drop)
                if self.bufferCount > 0 || position + Int64(drop) >= target {
                    return UInt64(max(0, position + Int64(drop) - preSkip))
                }
                continue
            }
            guard try self.advance() else {
                return UInt64(max(0, (self.granulePosition ?? target) - preSkip))
            }
        }
    }
}
