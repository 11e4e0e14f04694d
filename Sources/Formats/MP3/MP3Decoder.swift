// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import MPG123
import Model

/// Decodes MPEG audio with libmpg123, gapless, into its own signed 16-bit samples (`mpd`'s mpg123 plugin, which
/// plays MP3s when mad is disabled or rejects a file).
///
/// Confined to the decoding thread. `decode(into:)` and `seek(toFrame:)` do not allocate.
public final class MP3Decoder: Decoder {
    /// `rate:16:channels`.
    public let format: AudioFormat
    /// libmpg123's gapless length (exact with a LAME/Info header, estimated otherwise).
    public let totalFrames: UInt64?
    /// The bit rate of the frame decoded last, in kbit/s.
    public private(set) var bitRate = 0
    /// The ID3 `TXXX` `mixramp_start` value (set by `MP3Format.makeDecoder`).
    public internal(set) var mixRampStart: String?
    /// The stream's leading ID3v2 tag as tags, until `readTag()` hands them over.
    var pendingTags: [TagItem]?
    /// The ID3 `TXXX` `mixramp_end` value.
    public internal(set) var mixRampEnd: String?
    /// The ReplayGain of the leading ID3v2 tag (`TXXX` or `RVA2`), if any.
    public internal(set) var replayGain: ReplayGainInfo?
    private let handle: MPG123Handle
    /// Set once the stream changed rate or channels: libmpg123 now delivers frames of another size than
    /// `format`, so every later `decode(into:)` fails too, even after a seek.
    private var formatChanged = false

    /// Opens a stream read through `input`, which the decoder keeps.
    ///
    /// - Throws: `FormatError.notRecognized` when libmpg123 cannot open it or find a frame (`mpd`'s plugin
    ///   declines: the next plugin is tried).
    public init(input: any InputStream) throws(FormatError) {
        do {
            self.handle = try MPG123Handle(options: .playback)
            try self.handle.open(input: input)
            let format = try self.handle.format()
            guard format.encoding == .signed16 else {
                throw FormatError.unsupportedFormat("\(format.encoding)")
            }
            self.format = AudioFormat(sampleRate: format.sampleRate, sampleFormat: .s16, channels: format.channels)
            if input is FileInputStream || input is InputCacheStream {
                self.totalFrames = self.handle.length().map { UInt64($0) }
            } else {
                // A remote stream has no library length: the MPEG frame count, when an Info header gives one.
                self.totalFrames = Self.untrimmedFrames(self.handle) ?? self.handle.length().map { UInt64($0) }
            }
        } catch is MPG123Error {
            throw .notRecognized(path: input.uri)
        } catch let error as FormatError {
            throw error
        } catch {
            throw .unsupportedFormat("\(error)")
        }
    }

    /// The MPEG frame count times the samples per frame, when libmpg123 knows the count (an Info header).
    private static func untrimmedFrames(_ handle: MPG123Handle) -> UInt64? {
        guard let count = handle.frameCount(), count > 0, let info = try? handle.frameInfo() else { return nil }
        let samples: Int64 =
            switch info.layer {
            case 1: 384
            case 2: 1152
            default: info.version == .mpeg1 ? 1152 : 576
            }
        // mpd keeps the length in whole milliseconds (`SongTime`), cut down.
        let rate = Int64(max(1, info.sampleRate))
        return UInt64(count * samples * 1000 / rate * rate / 1000)
    }

    /// Decodes into `buffer` (whole frames of `format.frameSize` bytes).
    ///
    /// Does not allocate. Decoder thread.
    /// - Returns: frames written; 0 at the end.
    /// - Throws: `FormatError.decoder` on failure, `.unsupportedFormat` if the stream changed rate or channels
    ///   (then on every later call too).
    public func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        if self.formatChanged { throw .unsupportedFormat("format changed mid-stream") }
        var frames = 0
        while true {
            do {
                frames = try self.handle.read(into: buffer)
                break
            } catch {
                guard error.isNewFormat else { throw .decoder("\(error)") }
                guard let now = try? self.handle.format(), now.sampleRate == self.format.sampleRate,
                    now.channels == self.format.channels, now.encoding == .signed16
                else {
                    self.formatChanged = true
                    throw .unsupportedFormat("format changed mid-stream")
                }
            }
        }
        // libmpg123 counted whole frames of `format`; anything else would convert past the buffer.
        precondition(frames * self.format.frameSize <= buffer.count, "libmpg123 delivered more than fits")
        if frames > 0 { self.bitRate = self.handle.currentBitRate() }
        return frames
    }

    /// Seeks to `frame` (sample-accurate).
    ///
    /// Does not allocate. Decoder thread.
    @discardableResult
    public func seek(toFrame frame: UInt64) throws(FormatError) -> UInt64 {
        do {
            return UInt64(try self.handle.seek(toFrame: Int64(clamping: frame)))
        } catch {
            throw .decoder("\(error)")
        }
    }

    /// The raw ID3v2 tag libmpg123 skipped at the start of the stream, if any (`MPG123_STORE_RAW_ID3`).
    func leadingID3v2() -> [UInt8]? { self.handle.rawID3v2() }

    public func readTag() -> [TagItem]? {
        defer { self.pendingTags = nil }
        return self.pendingTags
    }
}
