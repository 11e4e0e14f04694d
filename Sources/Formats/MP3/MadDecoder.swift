// SPDX-License-Identifier: GPL-3.0-or-later

import ID3Tag
import Input
import Mad
import Model

/// What `mpd` 0.23's mad plugin learns from the first frame libmad decodes (its `DecodeFirstFrame`), for the
/// library scan and for playback.
struct MadFirstFrame {
    /// The first frame's header.
    var header: MadHeader
    /// The length in milliseconds: the Xing/Info frame count times the frame's duration, else the bytes from
    /// the first frame to the end at the first frame's bit rate; `nil` when the input's size is unknown.
    var milliseconds: UInt64?
    /// How many frames the seek table holds (the Xing/Info frame count, else the estimate plus 2000).
    var maxFrames: Int
    /// The first frame carried a Xing/Info header: it is not played.
    var hasXing: Bool
    /// The LAME tag after the Xing/Info header, if any.
    var lame: MadLameTag?

    /// Samples libmad inserts at the start (and removes at the end).
    static let decoderDelay = 529

    /// Decodes frames until one decodes (the plugin's `DecodeFirstFrame`), handing each ID3 tag met on the way
    /// to `tag`.
    ///
    /// - Returns: `nil` where the plugin fails: no decodable frame, or no or too many frames.
    init?(stream: MadStream, input: any InputStream, tag: ([UInt8]) -> Void) {
        decoding: while true {
            let action = stream.decodeNextFrame(skip: false)
            if let bytes = stream.takeID3Tag() { tag(bytes) }
            switch action {
            case .skip, .again: continue
            case .stop: return nil
            case .ok: break decoding
            }
        }
        let header = stream.header
        self.header = header
        if let size = input.size {
            let offset = stream.thisFrameOffset
            let rest = size >= offset ? size - offset : 0
            let milliseconds = rest &* 1000 / UInt64(max(1, header.bitRate / 8))
            self.milliseconds = milliseconds
            let frameMilliseconds = header.duration.milliseconds
            self.maxFrames =
                (frameMilliseconds > 0 ? Int(clamping: milliseconds / UInt64(frameMilliseconds)) : 0) + 2000
        } else {
            self.milliseconds = nil
            self.maxFrames = 2000
        }
        let xing = stream.withAncillaryBits { MadXing(&$0) }
        self.hasXing = xing != nil
        self.lame = xing?.lame
        if let xing, xing.flags & 1 != 0, xing.frames != 0 {
            self.milliseconds = UInt64(max(0, header.duration.multiplied(by: Int(xing.frames)).milliseconds))
            self.maxFrames = Int(xing.frames)
        }
        guard self.maxFrames > 0, self.maxFrames <= 8 * 1024 * 1024 else { return nil }
    }

    /// What the plugin's scan reports: duration and `rate:24:channels`; `nil` where it fails.
    static func scan(_ input: any InputStream) -> (milliseconds: UInt64?, format: AudioFormat)? {
        let stream = MadStream(input: input) { ID3Tag.query($0) }
        guard let first = MadFirstFrame(stream: stream, input: input, tag: { _ in }) else { return nil }
        let format = AudioFormat(
            sampleRate: first.header.sampleRate, sampleFormat: .s24, channels: first.header.channels)
        return (first.milliseconds, format)
    }
}

/// What the plugin takes from an ID3 tag it meets in the stream (its `ParseId3`): the tags, the ReplayGain it
/// submits, and the MixRamp values it submits when the tag has either.
struct MadID3 {
    var tags: [TagItem]
    var replayGain: ReplayGainInfo?
    var mixRamp: (start: String?, end: String?)?

    /// `nil` when libid3tag cannot parse `bytes`.
    init?(_ bytes: [UInt8]) {
        guard let id3 = ID3Tag(parsing: bytes) else { return nil }
        self.tags = TagCollector.tagItems(id3.mpdTagItems())
        self.replayGain = id3.replayGain()
        let ramp = MP3Format.mixRamp(id3)
        self.mixRamp = ramp.start != nil || ramp.end != nil ? ramp : nil
    }
}

/// Decodes MPEG audio (layers II and III) with libmad as `mpd` 0.23's mad plugin does: 24-bit samples in
/// 32-bit words rounded and clipped from libmad's fixed point, the Xing/Info frame skipped, the LAME tag's
/// encoder delay plus libmad's 529 samples dropped at the start and its padding less 529 at the end (for
/// seekable inputs), a seek table of frame offsets built while decoding, and seeks by whole frames. Each frame's
/// samples are interleaved by its own channel count, as the plugin submits them, whatever the stream's.
///
/// Confined to the decoding thread. `decode(into:)` and `seek(toFrame:)` do not allocate, except to hand over
/// an ID3 tag met in the stream.
public final class MadDecoder: Decoder {
    private enum Mute { case none, skip, seek }
    private enum Command { case none, stop, seek }

    /// `rate:24:channels` of the first frame.
    public let format: AudioFormat
    /// The plugin's length (`MadFirstFrame.milliseconds`) in frames.
    public let totalFrames: UInt64?
    /// The bit rate of the frame decoded last, in kbit/s.
    public private(set) var bitRate = 0
    /// Whether the input can seek.
    public let isSeekable: Bool
    /// The ReplayGain of an ID3 tag before the first frame, else the LAME tag's track gain above 0 dB; replaced by
    /// that of each ID3 tag met later in the stream, from the first samples after it (the plugin submits it, and
    /// `mpd` ends its chunk there).
    public private(set) var replayGain: ReplayGainInfo?
    /// The ID3 `TXXX` `mixramp_start` value of the last ID3 tag met with either MixRamp value.
    public private(set) var mixRampStart: String?
    /// The ID3 `TXXX` `mixramp_end` value of the last ID3 tag met with either MixRamp value.
    public private(set) var mixRampEnd: String?
    private var pendingTags: [TagItem]?
    /// The ReplayGain of an ID3 tag met after the first frame, for `replayGain` once the samples decoded before it
    /// are handed out.
    private var pendingReplayGain: ReplayGainInfo?

    private let stream: MadStream
    private let maxFrames: Int
    private let frameOffsets: UnsafeMutablePointer<UInt64>
    private let times: UnsafeMutablePointer<MadTimer>
    private var timer = MadTimer.zero
    private var highestFrame = 0
    private var currentFrame = 0
    private var elapsedMilliseconds = 0
    private var seekMilliseconds = 0
    private var mute = Mute.none
    private var dropStartFrames = 0
    private var dropEndFrames = 0
    private var dropStartSamples = 0
    private var dropEndSamples = 0
    private var foundFirstFrame = false
    private var decodedFirstFrame = false
    /// The plugin's next step is `LoadNextFrame` (the first frame is loaded when the decoder opens).
    private var needsLoad = false
    private var finished = false
    /// A seek waiting for the next frame the plugin would submit.
    private var pendingSeek: Int?
    /// The input could not seek to the frame a pending seek chose.
    private var seekFailed = false
    /// One frame's samples, converted; `outputOffset` of `outputCount` handed out.
    private let output: UnsafeMutablePointer<Int32>
    private var outputCount = 0
    private var outputOffset = 0

    /// Opens `input` at its current offset and decodes its first frame.
    ///
    /// - Throws: `FormatError.notRecognized` where the plugin fails ("input does not appear to be a mp3 bit
    ///   stream"): `mpd` then tries its next plugin.
    public init(input: any InputStream) throws(FormatError) {
        self.stream = MadStream(input: input) { ID3Tag.query($0) }
        var tags: [TagItem]?
        var replayGain: ReplayGainInfo?
        var mixRamp: (start: String?, end: String?) = (nil, nil)
        let found = MadFirstFrame(stream: self.stream, input: input) { bytes in
            guard let id3 = MadID3(bytes) else { return }
            tags = id3.tags
            if let gain = id3.replayGain { replayGain = gain }
            if let ramp = id3.mixRamp { mixRamp = ramp }
        }
        guard let first = found else { throw .notRecognized(path: input.uri) }
        self.format = AudioFormat(
            sampleRate: first.header.sampleRate, sampleFormat: .s24, channels: first.header.channels)
        self.totalFrames = first.milliseconds.map { $0 * UInt64(first.header.sampleRate) / 1000 }
        self.isSeekable = input.isSeekable
        self.maxFrames = first.maxFrames
        self.mute = first.hasXing ? .skip : .none
        if let lame = first.lame {
            if input.isSeekable {
                self.dropStartSamples = lame.encoderDelay + MadFirstFrame.decoderDelay
                self.dropEndSamples = max(0, lame.encoderPadding - MadFirstFrame.decoderDelay)
            }
            if replayGain == nil { replayGain = lame.replayGain }
        }
        self.replayGain = replayGain
        self.pendingTags = tags?.isEmpty == false ? tags : nil
        (self.mixRampStart, self.mixRampEnd) = mixRamp
        self.frameOffsets = .allocate(capacity: first.maxFrames)
        self.times = .allocate(capacity: first.maxFrames)
        self.output = .allocate(capacity: 2 * 1152)
    }

    deinit {
        self.frameOffsets.deallocate()
        self.times.deallocate()
        self.output.deallocate()
    }

    /// `mpd`'s `mad_fixed_to_24_sample`: libmad's fixed point (28 fraction bits) rounded, clipped to
    /// [-1.0, 1.0) and cut to 24 bits.
    @inline(__always)
    static func s24(_ sample: Int32) -> Int32 {
        let one = 1 << 28
        let rounded = min(max(Int(sample) + (1 << 4), -one), one - 1)
        return Int32(truncatingIfNeeded: rounded >> 5)
    }

    public func readTag() -> [TagItem]? {
        defer { self.pendingTags = nil }
        return self.pendingTags
    }

    /// Decodes into `buffer` (whole frames of `format.frameSize` bytes).
    ///
    /// - Returns: frames written; 0 at the end.
    public func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        let channels = self.format.channels
        let capacity = buffer.count / self.format.frameSize
        var written = 0
        while written < capacity {
            if let gain = self.pendingReplayGain {
                // The samples before the tag keep the gain they had: they end this call.
                if written > 0 { break }
                self.replayGain = gain
                self.pendingReplayGain = nil
            }
            if self.outputOffset < self.outputCount {
                let count = min(capacity - written, (self.outputCount - self.outputOffset) / channels)
                let bytes = count * channels * 4
                buffer.baseAddress?.advanced(by: written * self.format.frameSize).copyMemory(
                    from: self.output + self.outputOffset, byteCount: bytes)
                self.outputOffset += count * channels
                written += count
                continue
            }
            if self.finished { break }
            self.step()
        }
        return written
    }

    /// Seeks as the plugin does: to the start of the frame that ends at or after `frame` when the seek table
    /// has it, else on by skipping frames (decoding headers only) until one starts at or after it.
    ///
    /// - Returns: `frame`: `mpd` reports the time asked for, wherever the frame it decodes next starts.
    /// - Throws: `FormatError.decoder` when the input cannot seek or the song has ended.
    @discardableResult
    public func seek(toFrame frame: UInt64) throws(FormatError) -> UInt64 {
        guard self.isSeekable else { throw .decoder("not seekable") }
        guard !self.finished else { throw .decoder("decoding has ended") }
        let rate = UInt64(max(1, self.format.sampleRate))
        let milliseconds = Int(clamping: (frame * 1000 + rate / 2) / rate)
        self.outputOffset = 0
        self.outputCount = 0
        self.pendingSeek = milliseconds
        self.seekFailed = false
        if self.needsLoad && self.decodedFirstFrame && self.mute == .none {
            // Where the plugin waits in SubmitData: the frame was handled, the seek is taken now.
            try self.performSeek(milliseconds)
        } else {
            // The plugin sees the command when it next submits a frame.
            while self.pendingSeek != nil && !self.finished { self.step() }
            if self.seekFailed { throw .decoder("seek failed") }
        }
        return frame
    }

    private func performSeek(_ milliseconds: Int) throws(FormatError) {
        self.pendingSeek = nil
        let target = self.timeToFrame(milliseconds)
        if target < self.highestFrame {
            guard self.stream.seek(to: self.frameOffsets[target]) else { throw .decoder("seek failed") }
            self.currentFrame = target
        } else {
            self.seekMilliseconds = milliseconds
            self.mute = .seek
        }
    }

    // MARK: - The plugin's loop

    /// One turn of the plugin's `Read`: the next frame loaded (except the first), then handled.
    private func step() {
        if self.needsLoad && !self.loadNextFrame() {
            self.finished = true
            return
        }
        self.needsLoad = true
        switch self.mute {
        case .skip:
            self.mute = .none
        case .seek:
            if self.elapsedMilliseconds >= self.seekMilliseconds { self.mute = .none }
            self.updateTimerNextFrame()
        case .none:
            let command = self.synthesizeAndSubmit()
            self.updateTimerNextFrame()
            switch command {
            case .none: break
            case .stop: self.finished = true
            case .seek:
                if let milliseconds = self.pendingSeek {
                    do {
                        try self.performSeek(milliseconds)
                    } catch {
                        self.seekFailed = true
                    }
                }
            }
        }
    }

    private func loadNextFrame() -> Bool {
        while true {
            let action = self.stream.decodeNextFrame(skip: self.mute != .none)
            if let bytes = self.stream.takeID3Tag(), let id3 = MadID3(bytes) {
                if !id3.tags.isEmpty { self.pendingTags = id3.tags }
                if let gain = id3.replayGain { self.pendingReplayGain = gain }
                if let ramp = id3.mixRamp { (self.mixRampStart, self.mixRampEnd) = ramp }
            }
            switch action {
            case .skip, .again: continue
            case .stop: return false
            case .ok: return true
            }
        }
    }

    /// The first frame of the seek table whose end is at or after `milliseconds`.
    private func timeToFrame(_ milliseconds: Int) -> Int {
        var index = 0
        while index < self.highestFrame && self.times[index].milliseconds < milliseconds { index += 1 }
        return index
    }

    /// Records the current frame's offset and end time (first time through), or takes its recorded time.
    private func updateTimerNextFrame() {
        if self.currentFrame >= self.highestFrame {
            if self.currentFrame >= self.maxFrames {
                self.currentFrame = self.maxFrames - 1
            } else {
                self.highestFrame += 1
            }
            self.frameOffsets[self.currentFrame] = self.stream.thisFrameOffset
            self.timer.add(self.stream.header.duration)
            self.times[self.currentFrame] = self.timer
        } else {
            self.timer = self.times[self.currentFrame]
        }
        self.currentFrame += 1
        self.elapsedMilliseconds = self.timer.milliseconds
    }

    /// Synthesises the current frame and converts what the plugin submits of it into `output`.
    private func synthesizeAndSubmit() -> Command {
        let length = self.stream.synthesize()
        if !self.foundFirstFrame {
            let perFrame = max(1, length)
            self.dropStartFrames = self.dropStartSamples / perFrame
            self.dropEndFrames = self.dropEndSamples / perFrame
            self.dropStartSamples %= perFrame
            self.dropEndSamples %= perFrame
            self.foundFirstFrame = true
        }
        if self.dropStartFrames > 0 {
            self.dropStartFrames -= 1
            return .none
        } else if self.dropEndFrames > 0 && self.currentFrame == self.maxFrames - self.dropEndFrames {
            return .stop
        }
        var start = 0
        if !self.decodedFirstFrame {
            start = self.dropStartSamples
            self.decodedFirstFrame = true
        }
        var end = length
        let last = self.dropEndSamples != 0 && self.currentFrame == self.maxFrames - self.dropEndFrames - 1
        if last {
            if start + self.dropEndSamples >= end { return .stop }
            end -= self.dropEndSamples
        }
        if self.pendingSeek != nil { return .seek }
        // As the plugin submits them: interleaved by this frame's own channel count, which need not be the
        // stream's (a mono frame in a stereo stream plays as half as many stereo frames).
        let frameChannels = self.stream.header.channels
        var index = 0
        for sample in start..<max(start, end) {
            for channel in 0..<frameChannels {
                self.output[index] = Self.s24(self.stream.sample(channel: channel, index: sample))
                index += 1
            }
        }
        self.outputOffset = 0
        // An odd count of mono samples in a stereo stream (only where the first or last frame is cut) leaves half
        // a frame, which mpd would append to its chunk, shifting the channels of what follows: it is dropped.
        self.outputCount = index - index % self.format.channels
        self.bitRate = self.stream.header.bitRate / 1000
        return last ? .stop : .none
    }
}
