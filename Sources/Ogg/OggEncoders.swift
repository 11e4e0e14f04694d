// SPDX-License-Identifier: GPL-3.0-or-later

import COgg
import COpus
import CVorbis

/// Why libvorbisenc or libopus refused a setting or failed to encode (`mpd`'s wording).
public struct OggEncoderError: Error, Sendable, Hashable, CustomStringConvertible {
    /// One line for the log.
    public var message: String

    init(_ message: String) { self.message = message }

    public var description: String { self.message }
}

extension OggStream {
    /// Adds an encoded packet.
    func packetIn(_ packet: UnsafeMutablePointer<ogg_packet>) { ogg_stream_packetin(self.state, packet) }

    /// Hands every finished page to `body` (header, then body bytes); with `force`, also the partial one
    /// (`ogg_stream_flush`), as after headers and before a tag.
    func pages(force: Bool, _ body: (UnsafeRawBufferPointer) -> Void) {
        var page = ogg_page()
        while (force ? ogg_stream_flush(self.state, &page) : ogg_stream_pageout(self.state, &page)) != 0 {
            body(UnsafeRawBufferPointer(start: page.header, count: page.header_len))
            body(UnsafeRawBufferPointer(start: page.body, count: page.body_len))
        }
    }
}

/// A fresh Ogg serial number for each (chained) logical stream.
private func makeSerial() -> Int32 { Int32.random(in: 1...Int32.max) }

/// An Ogg Vorbis encoder over libvorbisenc, as `mpd`'s vorbis encoder plugin: VBR at a quality (-1…10) or ABR
/// at a bit rate; interleaved 32-bit float input. A tag ends the logical stream and starts a chained one whose
/// comment header carries it.
///
/// Confined to one thread (the output thread). Unsafe: libvorbis's states are heap-allocated here and never
/// leave this class.
public final class VorbisEncoder {
    /// How the bit rate is chosen.
    public enum Mode: Sendable, Hashable {
        /// VBR at this quality, -1 … 10 (`quality`).
        case quality(Double)
        /// ABR at this many kbit/s (`bitrate`).
        case bitrate(Int)
    }

    private let info: UnsafeMutablePointer<vorbis_info> = .allocate(capacity: 1)
    private let dsp: UnsafeMutablePointer<vorbis_dsp_state> = .allocate(capacity: 1)
    private let block: UnsafeMutablePointer<vorbis_block> = .allocate(capacity: 1)
    private let stream = OggStream(serial: makeSerial())
    private let channels: Int
    private var force = false

    /// Sets libvorbisenc up and queues the three header packets (with an empty comment).
    ///
    /// - Throws: `OggEncoderError` when libvorbisenc refuses the settings.
    public init(mode: Mode, channels: Int, sampleRate: Int) throws(OggEncoderError) {
        self.channels = channels
        vorbis_info_init(self.info)
        let status =
            switch mode {
            case .quality(let quality):
                vorbis_encode_init_vbr(self.info, channels, sampleRate, Float(quality * 0.1))
            case .bitrate(let bitrate):
                vorbis_encode_init(self.info, channels, sampleRate, -1, bitrate * 1000, -1)
            }
        guard status == 0 else {
            vorbis_info_clear(self.info)
            self.info.deallocate()
            self.dsp.deallocate()
            self.block.deallocate()
            if case .quality = mode { throw OggEncoderError("error initializing vorbis vbr") }
            throw OggEncoderError("error initializing vorbis encoder")
        }
        vorbis_analysis_init(self.dsp, self.info)
        vorbis_block_init(self.dsp, self.block)
        self.headerOut([])
    }

    deinit {
        vorbis_block_clear(self.block)
        vorbis_dsp_clear(self.dsp)
        vorbis_info_clear(self.info)
        self.block.deallocate()
        self.dsp.deallocate()
        self.info.deallocate()
    }

    private func headerOut(_ comments: [(name: String, value: String)]) {
        var comment = vorbis_comment()
        vorbis_comment_init(&comment)
        for (name, value) in comments { vorbis_comment_add_tag(&comment, name, value) }
        var identification = ogg_packet()
        var commentPacket = ogg_packet()
        var codebooks = ogg_packet()
        vorbis_analysis_headerout(self.dsp, &comment, &identification, &commentPacket, &codebooks)
        self.stream.packetIn(&identification)
        self.stream.packetIn(&commentPacket)
        self.stream.packetIn(&codebooks)
        vorbis_comment_clear(&comment)
        self.force = true
    }

    private func blockOut() {
        while vorbis_analysis_blockout(self.dsp, self.block) == 1 {
            vorbis_analysis(self.block, nil)
            vorbis_bitrate_addblock(self.block)
            var packet = ogg_packet()
            while vorbis_bitrate_flushpacket(self.dsp, &packet) != 0 { self.stream.packetIn(&packet) }
        }
    }

    /// Encodes interleaved native-endian floats (whole frames).
    public func encode(_ pcm: UnsafeRawBufferPointer) {
        let frames = pcm.count / (4 * self.channels)
        guard frames > 0, let planes = vorbis_analysis_buffer(self.dsp, Int32(frames)) else { return }
        let samples = pcm.assumingMemoryBound(to: Float.self)
        for channel in 0..<self.channels {
            guard let plane = planes[channel] else { continue }
            for frame in 0..<frames { plane[frame] = samples[frame * self.channels + channel] }
        }
        vorbis_analysis_wrote(self.dsp, Int32(frames))
        self.blockOut()
    }

    /// Makes the next ``pages(_:)`` emit the partial page too.
    public func flush() { self.force = true }

    /// Ends the logical stream (before a tag): the rest is encoded and flushed.
    public func preTag() {
        vorbis_analysis_wrote(self.dsp, 0)
        self.blockOut()
        // A fresh analysis state drops the end-of-stream mark for the chained stream.
        vorbis_block_clear(self.block)
        vorbis_dsp_clear(self.dsp)
        vorbis_analysis_init(self.dsp, self.info)
        vorbis_block_init(self.dsp, self.block)
        self.force = true
    }

    /// Starts a chained logical stream whose comment header carries `comments` (upper-case names).
    public func sendTag(_ comments: [(name: String, value: String)]) {
        self.stream.reinitialize(serial: makeSerial())
        self.headerOut(comments)
    }

    /// Ends the stream (close): the rest is encoded and flushed.
    public func end() {
        vorbis_analysis_wrote(self.dsp, 0)
        self.blockOut()
        self.force = true
    }

    /// Hands the Ogg pages ready now to `body`.
    public func pages(_ body: (UnsafeRawBufferPointer) -> Void) {
        self.stream.pages(force: self.force, body)
        self.force = false
    }
}

/// An Ogg Opus encoder over libopus, as `mpd`'s opus encoder plugin: 48 kHz, 20 ms packets, signed 16-bit or
/// float input; an `OpusHead` and `OpusTags` header; with `opustags`, a tag chains a new logical stream.
///
/// Confined to one thread (the output thread). Unsafe: the `OpusEncoder` pointer never leaves this class.
public final class OpusEncoder {
    /// The settings of `mpd`'s keys.
    public struct Settings: Sendable, Hashable {
        /// `bitrate`: bits per second, or `nil` for `auto`, `Int32.max`… as libopus's constants
        /// (`OPUS_AUTO` -1000, `OPUS_BITRATE_MAX` -1).
        public var bitrate: Int32
        /// `complexity` 0…10.
        public var complexity: Int32
        /// `signal`: `OPUS_AUTO`, `OPUS_SIGNAL_VOICE`, `OPUS_SIGNAL_MUSIC`.
        public var signal: Int32
        /// `vbr`: yes, no, constrained.
        public var vbr: Bool
        public var vbrConstraint: Bool
        /// `packet_loss` 0…100.
        public var packetLoss: Int32

        /// Creates settings.
        public init(
            bitrate: Int32, complexity: Int32, signal: Int32, vbr: Bool, vbrConstraint: Bool, packetLoss: Int32
        ) {
            self.bitrate = bitrate
            self.complexity = complexity
            self.signal = signal
            self.vbr = vbr
            self.vbrConstraint = vbrConstraint
            self.packetLoss = packetLoss
        }

        /// libopus's `OPUS_AUTO`.
        public static let auto: Int32 = -1000
        /// libopus's `OPUS_BITRATE_MAX`.
        public static let bitrateMax: Int32 = -1
        /// libopus's `OPUS_SIGNAL_VOICE`.
        public static let signalVoice: Int32 = 3001
        /// libopus's `OPUS_SIGNAL_MUSIC`.
        public static let signalMusic: Int32 = 3002
    }

    private let encoder: OpaquePointer
    private let stream = OggStream(serial: makeSerial())
    private let channels: Int
    private let float: Bool
    private let frameSize: Int
    /// 20 ms of input frames: one packet.
    private let packetFrames = 48000 / 50
    private var buffer: [UInt8]
    private var bufferFill = 0
    private var packet = [UInt8](repeating: 0, count: 1275 * 3 + 7)
    private var lookahead: Int32 = 0
    private var packetNumber: Int64 = 0
    private var granulePosition: Int64 = 0
    private var force = false

    /// Sets libopus up for 48 kHz input of `channels` (1 or 2), `float` or signed 16-bit, and queues the
    /// headers.
    ///
    /// - Throws: `OggEncoderError` with libopus's message.
    public init(settings: Settings, channels: Int, float: Bool) throws(OggEncoderError) {
        var error: Int32 = 0
        guard let encoder = opus_encoder_create(48000, Int32(channels), OPUS_APPLICATION_AUDIO, &error) else {
            throw OggEncoderError(String(cString: opus_strerror(error)))
        }
        self.encoder = encoder
        self.channels = channels
        self.float = float
        self.frameSize = channels * (float ? 4 : 2)
        self.buffer = [UInt8](repeating: 0, count: self.packetFrames * self.frameSize)
        fermata_opus_set(encoder, OPUS_SET_BITRATE_REQUEST, settings.bitrate)
        fermata_opus_set(encoder, OPUS_SET_COMPLEXITY_REQUEST, settings.complexity)
        fermata_opus_set(encoder, OPUS_SET_SIGNAL_REQUEST, settings.signal)
        fermata_opus_set(encoder, OPUS_SET_VBR_REQUEST, settings.vbr ? 1 : 0)
        fermata_opus_set(encoder, OPUS_SET_VBR_CONSTRAINT_REQUEST, settings.vbrConstraint ? 1 : 0)
        fermata_opus_set(encoder, OPUS_SET_PACKET_LOSS_PERC_REQUEST, settings.packetLoss)
        self.lookahead = fermata_opus_get(encoder, OPUS_GET_LOOKAHEAD_REQUEST)
        self.headers([])
    }

    deinit { opus_encoder_destroy(self.encoder) }

    private func headers(_ comments: [(name: String, value: String)]) {
        var head: [UInt8] = Array("OpusHead".utf8) + [1, UInt8(self.channels)]
        head += [UInt8(truncatingIfNeeded: self.lookahead), UInt8(truncatingIfNeeded: self.lookahead >> 8)]
        head += [0x80, 0xBB, 0, 0, 0, 0, 0]  // 48000 Hz little-endian, gain 0, mapping family 0
        self.packetIn(head, beginning: true, end: false, granule: 0)
        let version = Array(String(cString: opus_get_version_string()).utf8)
        var tags: [UInt8] = Array("OpusTags".utf8) + Self.le32(version.count) + version + Self.le32(comments.count)
        for (name, value) in comments {
            let entry = Array("\(name)=\(value)".utf8)
            tags += Self.le32(entry.count) + entry
        }
        self.packetIn(tags, beginning: false, end: false, granule: 0)
        self.force = true
    }

    private static func le32(_ value: Int) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    private func packetIn(_ bytes: [UInt8], beginning: Bool, end: Bool, granule: Int64) {
        var bytes = bytes
        bytes.withUnsafeMutableBufferPointer { data in
            var packet = ogg_packet(
                packet: data.baseAddress, bytes: data.count, b_o_s: beginning ? 1 : 0, e_o_s: end ? 1 : 0,
                granulepos: granule, packetno: self.packetNumber)
            self.stream.packetIn(&packet)
        }
        self.packetNumber += 1
    }

    private func encodePacket(end: Bool) throws(OggEncoderError) {
        let frames = self.bufferFill / self.frameSize
        let produced = self.buffer.withUnsafeBytes { input in
            self.packet.withUnsafeMutableBufferPointer { out in
                self.float
                    ? opus_encode_float(
                        self.encoder, input.assumingMemoryBound(to: Float.self).baseAddress!,
                        Int32(self.packetFrames), out.baseAddress!, Int32(out.count))
                    : opus_encode(
                        self.encoder, input.assumingMemoryBound(to: Int16.self).baseAddress!,
                        Int32(self.packetFrames), out.baseAddress!, Int32(out.count))
            }
        }
        guard produced >= 0 else { throw OggEncoderError("Opus encoder error") }
        self.granulePosition += Int64(frames)
        self.packet.withUnsafeMutableBufferPointer { data in
            var packet = ogg_packet(
                packet: data.baseAddress, bytes: Int(produced), b_o_s: 0, e_o_s: end ? 1 : 0,
                granulepos: self.granulePosition, packetno: self.packetNumber)
            self.stream.packetIn(&packet)
        }
        self.packetNumber += 1
        self.bufferFill = 0
    }

    private func append(_ bytes: UnsafeRawBufferPointer?, count: Int) throws(OggEncoderError) {
        var offset = 0
        while offset < count {
            let take = min(self.buffer.count - self.bufferFill, count - offset)
            self.buffer.withUnsafeMutableBytes { buffer in
                let target = UnsafeMutableRawBufferPointer(rebasing: buffer[self.bufferFill..<(self.bufferFill + take)])
                if let bytes {
                    target.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + take)]))
                } else {
                    _ = target.initializeMemory(as: UInt8.self, repeating: 0)
                }
            }
            self.bufferFill += take
            offset += take
            if self.bufferFill == self.buffer.count { try self.encodePacket(end: false) }
        }
    }

    /// Encodes interleaved native-endian PCM at 48 kHz (whole frames; the format given at `init`).
    ///
    /// - Throws: `OggEncoderError` when libopus fails.
    public func encode(_ pcm: UnsafeRawBufferPointer) throws(OggEncoderError) {
        if self.lookahead > 0 {
            // The pre-skip of the head: silence in front of the audio.
            try self.append(nil, count: Int(self.lookahead) * self.frameSize)
            self.lookahead = 0
        }
        try self.append(pcm, count: pcm.count - pcm.count % self.frameSize)
    }

    /// Makes the next ``pages(_:)`` emit the partial page too.
    public func flush() { self.force = true }

    /// Ends the stream: the last packet, padded with silence, carries the end-of-stream mark.
    public func end() throws(OggEncoderError) {
        self.buffer.withUnsafeMutableBytes { buffer in
            _ = UnsafeMutableRawBufferPointer(rebasing: buffer[self.bufferFill...]).initializeMemory(
                as: UInt8.self, repeating: 0)
        }
        try self.encodePacket(end: true)
        self.force = true
    }

    /// Ends the logical stream before a chained one (`opustags`).
    public func preTag() throws(OggEncoderError) {
        try self.end()
        self.packetNumber = 0
        self.granulePosition = 0
        fermata_opus_reset(self.encoder)
    }

    /// Starts a chained logical stream whose `OpusTags` carry `comments` (upper-case names).
    public func sendTag(_ comments: [(name: String, value: String)]) {
        self.stream.reinitialize(serial: makeSerial())
        self.lookahead = fermata_opus_get(self.encoder, OPUS_GET_LOOKAHEAD_REQUEST)
        self.headers(comments)
    }

    /// Hands the Ogg pages ready now to `body`.
    public func pages(_ body: (UnsafeRawBufferPointer) -> Void) {
        self.stream.pages(force: self.force, body)
        self.force = false
    }
}
