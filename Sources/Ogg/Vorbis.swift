// SPDX-License-Identifier: GPL-3.0-or-later

import COgg
import CVorbis
import Input

/// libvorbis's `vorbis_info` and `vorbis_comment` for the three header packets of a stream.
///
/// Confined to one thread. Heap-allocated so libvorbis's pointers stay valid (unsafe: cleared and freed in
/// `deinit`).
final class VorbisHeaderState {
    let info: UnsafeMutablePointer<vorbis_info>
    let comment: UnsafeMutablePointer<vorbis_comment>

    init() {
        self.info = .allocate(capacity: 1)
        self.comment = .allocate(capacity: 1)
        vorbis_info_init(self.info)
        vorbis_comment_init(self.comment)
    }

    deinit {
        vorbis_comment_clear(self.comment)
        vorbis_info_clear(self.info)
        self.comment.deallocate()
        self.info.deallocate()
    }

    /// Feeds one header packet (`vorbis_synthesis_headerin`); `false` when libvorbis refuses it.
    func headerIn(_ packet: UnsafeMutablePointer<ogg_packet>) -> Bool {
        vorbis_synthesis_headerin(self.info, self.comment, packet) == 0
    }

    /// The sample rate.
    var rate: Int { self.info.pointee.rate }
    /// The channel count.
    var channels: Int { Int(self.info.pointee.channels) }

    /// The comment entries libvorbis parsed, in file order (`NAME=value` bytes).
    var comments: [[UInt8]] {
        let value = self.comment.pointee
        guard let entries = value.user_comments, let lengths = value.comment_lengths else { return [] }
        return (0..<Int(max(0, value.comments))).map { index in
            guard let text = entries[index] else { return [] }
            return Array(UnsafeRawBufferPointer(start: text, count: Int(max(0, lengths[index]))))
        }
    }
}

/// What `mpd`'s Vorbis plugin scans in an Ogg Vorbis file: the three headers through libvorbis, then the
/// end-of-stream packet's granule position.
public struct VorbisStreamInfo: Sendable, Hashable {
    /// The sample rate in Hz.
    public var sampleRate: Int
    /// The channel count.
    public var channels: Int
    /// The comment header's entries (libvorbis's `vorbis_comment`), in file order.
    public var comments: [[UInt8]]
    /// The granule position of the first stream's end-of-stream packet, when found (`mpd`'s duration).
    public var endGranulePosition: Int64?

    /// Reads the first logical stream's headers from `input`'s current offset.
    ///
    /// Any thread (one call per input); allocates.
    /// - Throws: `OggError.malformed` when the first page or any of the three header packets is missing or
    ///   refused by libvorbis (so `mpd` would not scan it as Vorbis); `.input` when reading failed.
    public static func read(_ input: any InputStream) throws(OggError) -> VorbisStreamInfo {
        let reader = try OggPacketReader(input: input)
        let headers = VorbisHeaderState()
        for index in 0..<3 {
            guard var packet = reader.nextPacket() else { throw .malformed("Vorbis header \(index + 1) missing") }
            let accepted = packet.withOggPacket { headers.headerIn($0) }
            guard accepted else { throw .malformed("not a Vorbis stream") }
        }
        return VorbisStreamInfo(
            sampleRate: headers.rate, channels: headers.channels, comments: headers.comments,
            endGranulePosition: reader.endGranulePosition())
    }
}

extension OggPacket {
    /// Calls `body` with an `ogg_packet` over these bytes (valid only during the call).
    mutating func withOggPacket<Result>(_ body: (UnsafeMutablePointer<ogg_packet>) -> Result) -> Result {
        let isBeginning = self.isBeginning
        let isEnd = self.isEnd
        let granule = self.granulePosition
        return self.bytes.withUnsafeMutableBufferPointer { bytes in
            var packet = ogg_packet()
            packet.packet = bytes.baseAddress
            packet.bytes = bytes.count
            packet.b_o_s = isBeginning ? 1 : 0
            packet.e_o_s = isEnd ? 1 : 0
            packet.granulepos = granule
            return body(&packet)
        }
    }
}

/// Decodes an Ogg Vorbis stream as `mpd`'s Vorbis plugin: libvorbis synthesis over `mpd`'s own Ogg walk,
/// interleaved 32-bit float output in Vorbis channel order, every chained stream in turn (each must keep
/// the first one's rate and channels). Bad audio packets are skipped, as `mpd` skips them.
///
/// Confined to the decoding thread. `decode(into:)` and `seek(toFrame:)` allocate nothing themselves
/// (libvorbis reuses its block memory; a new chained stream re-reads its headers).
public final class OggVorbisDecoder {
    /// The sample rate in Hz.
    public private(set) var sampleRate = 0
    /// The channel count.
    public private(set) var channels = 0
    /// The first stream's end granule position (`mpd`'s duration and seek bound), if found.
    public private(set) var endGranulePosition: Int64?
    /// The current stream's comment entries.
    public private(set) var comments: [[UInt8]] = []
    /// How many streams' comment headers were read (1 from the start; a chained stream brings its own).
    public private(set) var commentsRevision = 0

    private let demuxer: OggDemuxer
    private var headers = VorbisHeaderState()
    /// Unsafe: libvorbis's synthesis state, freed in `deinit`.
    private let dsp: UnsafeMutablePointer<vorbis_dsp_state>
    private let block: UnsafeMutablePointer<vorbis_block>
    private var dspInitialized = false
    private var remainingHeaders = 0
    private var hasStream = false
    private var postSeek = false
    /// The granule position of the first pending PCM sample, once a page told it.
    private var position: Int64?
    /// Set when a packet could not be handled; later calls fail too.
    private var failure: OggError?
    /// Scratch for `vorbis_synthesis_pcmout`'s channel array.
    private let pcm: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<Float>?>?>

    /// Opens the stream `input` holds from its current offset (the start), reading its headers.
    ///
    /// - Throws: `OggError.malformed` when the file is not Ogg Vorbis (`mpd`'s `ogg_codec_detect` says
    ///   otherwise, or the headers are refused) or its rate or channel count is out of `mpd`'s range;
    ///   `.input` when reading fails.
    public init(input: any InputStream) throws(OggError) {
        guard try OggCodec.detect(input) == .vorbis else { throw .malformed("not an Ogg Vorbis stream") }
        self.demuxer = OggDemuxer(input: input)
        try? self.demuxer.rewind()
        self.dsp = .allocate(capacity: 1)
        self.block = .allocate(capacity: 1)
        self.pcm = .allocate(capacity: 1)
        self.pcm.initialize(to: nil)
        // Walk packets until the third header of the first stream.
        while self.remainingHeaders > 0 || !self.hasStream || self.headers.channels == 0 {
            switch self.demuxer.next() {
            case .end: throw self.demuxer.sync.inputError.map(OggError.input) ?? .malformed("Vorbis headers missing")
            case .newSerial: self.hasStream = false
            case .packet: try self.handleHeaderPacket()
            }
        }
        let rate = self.headers.rate
        let channels = self.headers.channels
        guard rate > 0, rate < 1 << 30, (1...8).contains(channels) else {
            throw .malformed("unsupported Vorbis format \(rate):\(channels)")
        }
        self.sampleRate = rate
        self.channels = channels
        self.comments = self.headers.comments
        self.commentsRevision = 1
        self.endGranulePosition = self.demuxer.endGranule(serial: self.demuxer.stream.serial)
        self.initializeSynthesis()
    }

    deinit {
        self.clearSynthesis()
        self.dsp.deallocate()
        self.block.deallocate()
        self.pcm.deallocate()
    }

    /// The header packets while opening.
    private func handleHeaderPacket() throws(OggError) {
        let packet = self.demuxer.packet
        if packet.pointee.b_o_s != 0 {
            self.hasStream = true
            guard self.headers.headerIn(packet) else { throw .malformed("Unrecognized Vorbis BOS packet") }
            self.remainingHeaders = 2
            return
        }
        guard self.hasStream else { throw .malformed("BOS packet expected") }
        guard self.headers.headerIn(packet) else { throw .malformed("Unrecognized Vorbis header packet") }
        self.remainingHeaders -= 1
    }

    private func initializeSynthesis() {
        vorbis_synthesis_init(self.dsp, self.headers.info)
        vorbis_block_init(self.dsp, self.block)
        self.dspInitialized = true
    }

    private func clearSynthesis() {
        if self.dspInitialized {
            vorbis_block_clear(self.block)
            vorbis_dsp_clear(self.dsp)
            self.dspInitialized = false
        }
    }

    /// Whether `seek(toFrame:)` can work: the input can seek. (`mpd` also wants the end granule position,
    /// which it misses in files so short that its reads passed the last page; without it this decoder
    /// seeks by decoding from the start.)
    public var isSeekable: Bool { self.demuxer.input.isSeekable }
    /// Whether `mpd` calls the stream seekable: its end granule position is known and positive.
    public var mpdSeekable: Bool { (self.endGranulePosition ?? 0) > 0 }

    /// Decodes into `buffer`: interleaved `Float` samples, as many whole frames as fit.
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: frames written; 0 at the end of the stream.
    /// - Throws: `OggError.malformed` when a chained stream changes format or is damaged beyond skipping.
    public func decode(into buffer: UnsafeMutableRawBufferPointer) throws(OggError) -> Int {
        if let failure { throw failure }
        let capacity = buffer.count / (4 * self.channels)
        guard capacity > 0 else { return 0 }
        while true {
            let pending = self.dspInitialized ? Int(vorbis_synthesis_pcmout(self.dsp, self.pcm)) : 0
            if pending > 0 {
                let frames = min(pending, capacity)
                self.interleave(frames: frames, into: buffer)
                vorbis_synthesis_read(self.dsp, Int32(frames))
                self.position = self.position.map { $0 + Int64(frames) }
                return frames
            }
            guard try self.advance() else { return 0 }
        }
    }

    /// Handles the next packet. Returns `false` at the end of the input.
    private func advance() throws(OggError) -> Bool {
        do {
            switch self.demuxer.next() {
            case .end: return false
            case .newSerial: self.hasStream = false
            case .packet: try self.handlePacket()
            }
            return true
        } catch {
            self.failure = error
            throw error
        }
    }

    /// `mpd`'s `OggVisitor::HandlePacket` with the Vorbis plugin's callbacks.
    private func handlePacket() throws(OggError) {
        let packet = self.demuxer.packet
        let afterSeek = self.postSeek
        self.postSeek = false
        if packet.pointee.b_o_s != 0 {
            if afterSeek { return }
            self.hasStream = true
            // A new chained stream: fresh headers and synthesis state.
            self.clearSynthesis()
            self.headers = VorbisHeaderState()
            guard self.headers.headerIn(packet) else { throw .malformed("Unrecognized Vorbis BOS packet") }
            self.remainingHeaders = 2
            self.position = nil
            return
        }
        guard self.hasStream else { throw .malformed("BOS packet expected") }
        if self.remainingHeaders > 0 {
            guard self.headers.headerIn(packet) else { throw .malformed("Unrecognized Vorbis header packet") }
            self.remainingHeaders -= 1
            if self.remainingHeaders == 0 {
                guard self.headers.rate == self.sampleRate, self.headers.channels == self.channels else {
                    throw .malformed("Next stream has different audio format")
                }
                // Once per chained stream, not per period.
                self.comments = self.headers.comments
                self.commentsRevision += 1
            }
        } else {
            if !self.dspInitialized { self.initializeSynthesis() }
            if vorbis_synthesis(self.block, packet) == 0 {
                guard vorbis_synthesis_blockin(self.dsp, self.block) == 0 else {
                    throw .library("vorbis_synthesis_blockin() failed")
                }
                if packet.pointee.granulepos >= 0 {
                    let pending = Int64(vorbis_synthesis_pcmout(self.dsp, nil))
                    self.position = packet.pointee.granulepos - pending
                }
            }
        }
        if packet.pointee.e_o_s != 0 { self.hasStream = false }
    }

    /// Copies `frames` pending frames from libvorbis's channel arrays, interleaved.
    private func interleave(frames: Int, into buffer: UnsafeMutableRawBufferPointer) {
        guard let channelsArray = self.pcm.pointee else { return }
        let output = buffer.bindMemory(to: Float.self)
        for channel in 0..<self.channels {
            guard let source = channelsArray[channel] else { continue }
            var index = channel
            for frame in 0..<frames {
                output[index] = source[frame]
                index += self.channels
            }
        }
    }

    /// Moves to `frame` exactly: `mpd`'s granule bisection aimed a little early, then decoding forward and
    /// dropping samples up to the frame (from the start of the file when the bisection cannot land early).
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: the frame reached (`frame`, or the end of the stream when it is shorter).
    /// - Throws: `OggError.malformed` when the stream is not seekable, `.input` when the input fails.
    @discardableResult
    public func seek(toFrame frame: UInt64) throws(OggError) -> UInt64 {
        guard self.isSeekable else { throw .malformed("stream is not seekable") }
        let end = self.endGranulePosition ?? 0
        self.failure = nil
        let target = Int64(clamping: frame)
        var aim = target - 44100 / 10 - 8192
        var positioned = false
        while aim > 0, end > 0 {
            guard let landed = try self.demuxer.seek(granule: aim, endGranule: end) else { break }
            if landed <= target {
                positioned = true
                break
            }
            aim -= max(44100, landed - target)
        }
        if !positioned { try self.demuxer.seekByte(0) }
        self.postSeek = true
        self.hasStream = true
        self.remainingHeaders = 0
        // From the start the first sample is frame 0; elsewhere the position is unknown until a page tells it
        // (everything before then comes before `frame`, since the page found ends at or before it).
        self.position = positioned ? nil : 0
        if self.dspInitialized { vorbis_synthesis_restart(self.dsp) }
        // Drop samples until the target.
        while true {
            let pending = self.dspInitialized ? Int64(vorbis_synthesis_pcmout(self.dsp, nil)) : 0
            if pending > 0 {
                guard let position = self.position else {
                    vorbis_synthesis_read(self.dsp, Int32(pending))
                    continue
                }
                if position >= target { return UInt64(position) }
                let drop = min(pending, target - position)
                vorbis_synthesis_read(self.dsp, Int32(drop))
                self.position = position + drop
                if position + drop >= target { return UInt64(target) }
                continue
            }
            guard try self.advance() else { return UInt64(max(0, self.position ?? target)) }
        }
    }
}
