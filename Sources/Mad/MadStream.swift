// SPDX-License-Identifier: GPL-3.0-or-later

import CMad
import Input

/// libmad's stream, frame and synthesis state over an input stream, stepped frame by frame the way `mpd`
/// 0.23's mad plugin steps it: a 40960-byte read buffer refilled from where the next frame starts, 8 zero
/// bytes (`MAD_BUFFER_GUARD`) appended once at the end of the input so libmad decodes the last frame, ID3 tags
/// skipped where libmad lost sync on one, and only frames of the first frame's layer (II or III) decoded.
///
/// Confined to one thread. `decodeNextFrame(skip:)`, `synthesize()` and `sample(channel:index:)` do not
/// allocate (except to hand over an ID3 tag found in the stream).
public final class MadStream {
    /// What `decodeNextFrame(skip:)` did (the plugin's `MadDecoderAction`).
    public enum Action: Sendable, Hashable {
        /// A frame was skipped (a recoverable error, or another layer): decode the next one.
        case skip
        /// The input ended, or libmad met an unrecoverable error: decoding stops.
        case stop
        /// More input was needed, or an ID3 tag was skipped: try again.
        case again
        /// A frame's header (and, unless skipped, its audio) was decoded.
        case ok
    }

    private static let bufferSize = 40960
    private static let guardSize = Int(MAD_BUFFER_GUARD)
    /// Where `mad_synth.pcm.samples` (`[2][1152]` fixed-point samples) starts.
    private static let samplesOffset = MemoryLayout<mad_synth>.offset(of: \mad_synth.pcm.samples) ?? 0

    private let input: any InputStream
    private let stream: UnsafeMutablePointer<mad_stream>
    private let frame: UnsafeMutablePointer<mad_frame>
    private let synth: UnsafeMutablePointer<mad_synth>
    private let buffer: UnsafeMutablePointer<UInt8>
    private let id3Size: (UnsafeRawBufferPointer) -> Int
    private var layer = mad_layer(0)
    /// End of the input was seen and the guard bytes appended.
    private var wasEOF = false
    /// The ID3 tag met in the stream since `takeID3Tag()` was last called.
    private var id3Tag: [UInt8]?

    /// Prepares libmad over `input`, read from its current offset.
    ///
    /// - Parameter id3Size: the size of the ID3 tag starting at the start of the bytes given, or 0 for none
    ///   (libid3tag's `id3_tag_query`), asked where libmad lost sync.
    public init(input: any InputStream, id3Size: @escaping (UnsafeRawBufferPointer) -> Int) {
        self.input = input
        self.id3Size = id3Size
        self.stream = .allocate(capacity: 1)
        self.frame = .allocate(capacity: 1)
        self.synth = .allocate(capacity: 1)
        self.buffer = .allocate(capacity: Self.bufferSize)
        mad_stream_init(self.stream)
        self.stream.pointee.options = Int32(MAD_OPTION_IGNORECRC)
        mad_frame_init(self.frame)
        mad_synth_init(self.synth)
    }

    deinit {
        mad_frame_finish(self.frame)
        mad_stream_finish(self.stream)
        self.synth.deallocate()
        self.frame.deallocate()
        self.stream.deallocate()
        self.buffer.deallocate()
    }

    // MARK: - The decoded frame

    /// The current frame's header.
    public var header: MadHeader {
        let header = self.frame.pointee.header
        return MadHeader(
            layer: Int(header.layer.rawValue), sampleRate: Int(header.samplerate),
            channels: header.mode == MAD_MODE_SINGLE_CHANNEL ? 1 : 2, bitRate: Int(header.bitrate),
            duration: MadTimer(header.duration))
    }

    /// Where the current frame starts in the input (the plugin's `ThisFrameOffset`).
    public var thisFrameOffset: UInt64 {
        let stream = self.stream.pointee
        guard let end = stream.bufend else { return self.input.offset }
        let start = stream.this_frame ?? stream.buffer ?? end
        return self.input.offset &- UInt64(end - start)
    }

    /// The ancillary bits libmad left after the current frame's audio data (where a Xing/Info header and a
    /// LAME tag live), for `body` to read.
    public func withAncillaryBits<R>(_ body: (inout MadBits) -> R) -> R {
        var bits = MadBits(self.stream.pointee.anc_ptr, length: Int(self.stream.pointee.anc_bitlen))
        return body(&bits)
    }

    /// libmad's message for its last error.
    public var errorMessage: String { String(cString: mad_stream_errorstr(self.stream)) }

    /// Synthesises the current frame's PCM (`mad_synth_frame`).
    ///
    /// - Returns: the number of samples per channel.
    public func synthesize() -> Int {
        mad_synth_frame(self.synth, self.frame)
        return Int(self.synth.pointee.pcm.length)
    }

    /// A synthesised sample: fixed point with 28 fraction bits (`mad_fixed_t`), full scale ±1.0.
    @inline(__always)
    public func sample(channel: Int, index: Int) -> Int32 {
        (UnsafeRawPointer(self.synth) + Self.samplesOffset).assumingMemoryBound(to: mad_fixed_t.self)[
            channel * 1152 + index]
    }

    /// The ID3 tag met in the stream since the last call, if any.
    public func takeID3Tag() -> [UInt8]? {
        defer { self.id3Tag = nil }
        return self.id3Tag
    }

    // MARK: - Stepping

    /// Moves the input to `offset` and restarts libmad's buffer there (the plugin's `Seek`); libmad's bit
    /// reservoir and synthesis state carry over, as in `mpd`.
    ///
    /// - Returns: `false` when the input cannot seek.
    public func seek(to offset: UInt64) -> Bool {
        do {
            try self.input.seek(to: offset)
        } catch {
            return false
        }
        mad_stream_buffer(self.stream, self.buffer, 0)
        self.stream.pointee.error = MAD_ERROR_NONE
        self.wasEOF = false
        return true
    }

    /// Decodes the next frame's header and, unless `skip`, its audio (the plugin's `DecodeNextFrame`).
    public func decodeNextFrame(skip: Bool) -> Action {
        if self.stream.pointee.buffer == nil || self.stream.pointee.error == MAD_ERROR_BUFLEN {
            guard self.fillBuffer() else { return .stop }
        }
        // The header is the frame's first member.
        let header = UnsafeMutableRawPointer(self.frame).assumingMemoryBound(to: mad_header.self)
        if mad_header_decode(header, self.stream) != 0 {
            let error = self.stream.pointee.error
            if error == MAD_ERROR_BUFLEN { return .again }
            if error == MAD_ERROR_LOSTSYNC, let start = self.stream.pointee.this_frame,
                let end = self.stream.pointee.bufend
            {
                let size = self.id3Size(UnsafeRawBufferPointer(start: start, count: end - start))
                if size > 0 {
                    self.readID3Tag(size)
                    return .again
                }
            }
            return self.recover()
        }
        let layer = self.frame.pointee.header.layer
        if self.layer == mad_layer(0) {
            // Only layers II and III are known to work, says mpd.
            guard layer == MAD_LAYER_II || layer == MAD_LAYER_III else { return .skip }
            self.layer = layer
        } else if layer != self.layer {
            return .skip
        }
        if !skip && mad_frame_decode(self.frame, self.stream) != 0 { return self.recover() }
        return .ok
    }

    private func recover() -> Action {
        self.stream.pointee.error.rawValue & 0xFF00 != 0 ? .skip : .stop
    }

    /// Keeps what is left from the next frame on, then reads as much as fits; appends the guard bytes once at
    /// the end of the input (the plugin's `FillBuffer`).
    private func fillBuffer() -> Bool {
        var rest = 0
        if let next = self.stream.pointee.next_frame, let end = self.stream.pointee.bufend {
            rest = end - next
            UnsafeMutableRawPointer(self.buffer).copyMemory(from: next, byteCount: rest)
        }
        let room = Self.bufferSize - rest
        // Frames this big are unlikely to be MPEG frames.
        guard room > 0 else { return false }
        var count =
            (try? self.input.read(into: UnsafeMutableRawBufferPointer(start: self.buffer + rest, count: room))) ?? 0
        if count == 0 {
            guard !self.wasEOF, room >= Self.guardSize else { return false }
            self.wasEOF = true
            count = Self.guardSize
            (self.buffer + rest).initialize(repeating: 0, count: count)
        }
        mad_stream_buffer(self.stream, self.buffer, UInt(rest + count))
        self.stream.pointee.error = MAD_ERROR_NONE
        return true
    }

    /// Takes the ID3 tag of `size` bytes at the current position, reading what the buffer lacks from the input
    /// (the plugin's `ParseId3`); a tag cut short by the end of the input is dropped.
    private func readID3Tag(_ size: Int) {
        guard let start = self.stream.pointee.this_frame, let end = self.stream.pointee.bufend else { return }
        let count = end - start
        if size <= count {
            self.id3Tag = Array(UnsafeBufferPointer(start: start, count: size))
            mad_stream_skip(self.stream, UInt(size))
            return
        }
        mad_stream_skip(self.stream, UInt(count))
        // Not zero-filled first (the plugin's buffer is): a damaged header may claim up to 256 MiB, which a file
        // of a few bytes leaves unread, and pages nothing writes are never touched.
        var read = 0
        let tag = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            buffer.baseAddress!.initialize(from: start, count: count)
            let rest = UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[count...]))
            read = (try? self.input.readFully(into: rest)) ?? 0
            initialized = count + read
        }
        if read == size - count { self.id3Tag = tag }
    }
}

/// What a frame header says.
public struct MadHeader: Sendable, Hashable {
    /// 1, 2 or 3.
    public var layer: Int
    /// In Hz.
    public var sampleRate: Int
    /// 1 for single-channel frames, else 2 (`MAD_NCHANNELS`).
    public var channels: Int
    /// In bit/s.
    public var bitRate: Int
    /// The frame's playing time.
    public var duration: MadTimer
}

/// libmad's exact time (`mad_timer_t`): seconds and 1/352800000 fractions.
public struct MadTimer: Sendable, Hashable {
    private var seconds: Int
    private var fraction: UInt

    init(_ timer: mad_timer_t) {
        self.seconds = timer.seconds
        self.fraction = timer.fraction
    }

    private var timer: mad_timer_t { mad_timer_t(seconds: self.seconds, fraction: self.fraction) }

    /// No time.
    public static let zero = MadTimer(mad_timer_zero)

    /// Adds `other` (`mad_timer_add`).
    public mutating func add(_ other: MadTimer) {
        var timer = self.timer
        mad_timer_add(&timer, other.timer)
        self = MadTimer(timer)
    }

    /// This time `count` times (`mad_timer_multiply`).
    public func multiplied(by count: Int) -> MadTimer {
        var timer = self.timer
        mad_timer_multiply(&timer, count)
        return MadTimer(timer)
    }

    /// In whole milliseconds as libmad counts them (`mad_timer_count`).
    public var milliseconds: Int { mad_timer_count(self.timer, MAD_UNITS_MILLISECONDS) }
}

/// A reader of a frame's ancillary bits, big-endian (`mad_bit_read`); bits past the ancillary data read as 0.
public struct MadBits: ~Copyable {
    private var pointer: mad_bitptr
    /// Bits left to read.
    public private(set) var remaining: Int

    init(_ pointer: mad_bitptr, length: Int) {
        self.pointer = pointer
        self.remaining = length
    }

    /// Reads `bytes` with `body` (`mad_bit_init` over them).
    public static func reading<R>(_ bytes: [UInt8], _ body: (inout MadBits) -> R) -> R {
        bytes.withUnsafeBufferPointer { buffer in
            var pointer = mad_bitptr()
            mad_bit_init(&pointer, buffer.baseAddress)
            var bits = MadBits(pointer, length: buffer.count * 8)
            return body(&bits)
        }
    }

    /// Reads `count` bits (up to 32).
    public mutating func read(_ count: Int) -> UInt32 {
        let available = max(0, min(count, self.remaining))
        var value: UInt32 = 0
        if available > 0 { value = UInt32(truncatingIfNeeded: mad_bit_read(&self.pointer, UInt32(available))) }
        self.remaining -= count
        return value << UInt32(count - available)
    }

    /// Skips `count` bits.
    public mutating func skip(_ count: Int) {
        let available = max(0, min(count, self.remaining))
        if available > 0 { mad_bit_skip(&self.pointer, UInt32(available)) }
        self.remaining -= count
    }
}
