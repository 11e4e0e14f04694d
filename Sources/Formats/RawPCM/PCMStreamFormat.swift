// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Model

/// Raw PCM streams chosen by MIME type, as `mpd` 0.23.12's `pcm` decoder plugin reads them: no suffixes and no
/// files, only streams whose transport announces one of ``mimeTypes``.
///
/// - `audio/L16` (RFC 2586): 16-bit big-endian, mono unless `channels=` says otherwise; `rate=` is required.
/// - `audio/L24` (RFC 3190): 24-bit big-endian packed in 3 bytes, delivered as 24-bit in 32-bit words; `rate=`
///   required.
/// - `audio/x-mpd-float`: 32-bit native floats, mono by default; `rate=` required.
/// - `audio/x-mpd-cdda-pcm`: 44100 Hz, 16-bit native, stereo; `…-reverse`: the same byte-swapped.
/// - `audio/x-mpd-alsa-pcm`: 44100:16:2 native, or what its `format=` parameter (`48000:24:2`) says.
///
/// `rate=` and `channels=` apply to every type. The MIME base type is compared case-sensitively, as `mpd`'s
/// decoder does. The length comes from the stream's size, when known. Any thread.
public struct PCMStreamFormat: FileScanFormatPlugin {
    /// `pcm`.
    public var name: String { "pcm" }
    /// None: the plugin is only chosen by MIME type.
    public var suffixes: [String] { [] }
    /// `mpd`'s list, in its order.
    public var mimeTypes: [String] {
        [
            "audio/L16", "audio/L24", "audio/x-mpd-float", "audio/x-mpd-cdda-pcm", "audio/x-mpd-cdda-pcm-reverse",
            "audio/x-mpd-alsa-pcm",
        ]
    }

    /// Creates the plugin.
    public init() {}

    /// Raw PCM files are never scanned: `mpd`'s plugin has no file support.
    ///
    /// - Throws: `FormatError.notRecognized`, always.
    public func readInfo(path: String) throws(FormatError) -> SongInfo { throw .notRecognized(path: path) }

    /// A decoder of `input` in the format its MIME type describes (44100:16:2 native without one).
    ///
    /// - Throws: `FormatError.unsupportedFormat` for a missing or bad `rate=`, a bad `channels=` or `format=`,
    ///   with `mpd`'s message.
    public func makeDecoder(input: any InputStream) throws(FormatError) -> any Decoder {
        let layout = try Self.layout(mimeType: input.mimeType)
        return PCMStreamDecoder(input: input, layout: layout)
    }

    // MARK: - MIME types

    /// How a stream's bytes are laid out.
    struct Layout: Equatable {
        /// What the decoder delivers.
        var format: AudioFormat
        /// 16-bit samples in the other byte order.
        var swapsBytes = false
        /// 24-bit big-endian samples in 3 bytes each (`audio/L24`).
        var packed24 = false

        /// Bytes of one frame in the stream.
        var inputFrameSize: Int { self.packed24 ? 3 * self.format.channels : self.format.frameSize }
    }

    /// The layout a MIME type (with its parameters) describes, as `mpd`'s `pcm_stream_decode` reads it.
    ///
    /// - Throws: `FormatError.unsupportedFormat` with `mpd`'s warning.
    static func layout(mimeType: String?) throws(FormatError) -> Layout {
        var layout = Layout(format: AudioFormat(sampleRate: 44100, sampleFormat: .s16, channels: 2))
        guard let mimeType else { return layout }
        let base = Self.base(of: mimeType)
        let l16 = base == "audio/L16"
        let l24 = base == "audio/L24"
        let float = base == "audio/x-mpd-float"
        if l16 || l24 || float {
            layout.format.sampleRate = 0
            layout.format.channels = 1
        }
        if l24 {
            layout.format.sampleFormat = .s24
            layout.packed24 = true
        }
        if float { layout.format.sampleFormat = .float }
        // Big-endian 16-bit on this little-endian host; mpd compares the whole MIME type for the reverse one.
        layout.swapsBytes = l16 || mimeType == "audio/x-mpd-cdda-pcm-reverse"
        let parameters = Self.parameters(of: mimeType)
        if let text = parameters["rate"] {
            guard let rate = Self.unsigned(text) else {
                throw .unsupportedFormat("Failed to parse sample rate: \(text)")
            }
            guard rate > 0, rate < 1 << 30 else { throw .unsupportedFormat("Invalid sample rate: \(rate)") }
            layout.format.sampleRate = Int(rate)
        }
        if let text = parameters["channels"] {
            // mpd's warning names the sample rate here too.
            guard let channels = Self.unsigned(text) else {
                throw .unsupportedFormat("Failed to parse sample rate: \(text)")
            }
            guard channels >= 1, channels <= 8 else {
                throw .unsupportedFormat("Invalid channel count: \(channels)")
            }
            layout.format.channels = Int(channels)
        }
        if base == "audio/x-mpd-alsa-pcm", let text = parameters["format"] {
            let mask: AudioFormatMask
            do {
                mask = try AudioFormatMask.parse(text, mask: false)
            } catch {
                throw .unsupportedFormat(error.message)
            }
            guard let rate = mask.sampleRate, let sampleFormat = mask.sampleFormat, let channels = mask.channels
            else { throw .unsupportedFormat("Invalid audio format specification: \(mimeType)") }
            layout = Layout(format: AudioFormat(sampleRate: rate, sampleFormat: sampleFormat, channels: channels))
        }
        guard layout.format.sampleRate > 0 else { throw .unsupportedFormat("Missing 'rate' parameter: \(mimeType)") }
        return layout
    }

    /// The text before the first `;`, unchanged (`mpd`'s `GetMimeTypeBase`).
    static func base(of mimeType: String) -> Substring {
        mimeType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
    }

    /// The `key=value` parameters after the base type, each segment stripped of white space at its ends; the
    /// first of a repeated key counts (`mpd`'s `ParseMimeTypeParameters`).
    static func parameters(of mimeType: String) -> [String: String] {
        var result: [String: String] = [:]
        for segment in mimeType.split(separator: ";", omittingEmptySubsequences: false).dropFirst() {
            let stripped = segment.drop { $0.isASCII && $0.isWhitespace }.reversed().drop {
                $0.isASCII && $0.isWhitespace
            }
            let text = String(stripped.reversed())
            guard let equals = text.firstIndex(of: "=") else { continue }
            let key = String(text[..<equals])
            if result[key] == nil { result[key] = String(text[text.index(after: equals)...]) }
        }
        return result
    }

    /// A number as C `strtoul` base 10 reads it into an `unsigned`: leading white space, a sign (a negative
    /// value wraps), then digits and nothing else; `nil` when there are no digits or something follows them.
    static func unsigned(_ text: String) -> UInt32? {
        var bytes = Substring(text).utf8.drop { $0 == 0x20 || (0x09...0x0D).contains($0) }
        var negative = false
        if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            negative = sign == UInt8(ascii: "-")
            bytes = bytes.dropFirst()
        }
        guard !bytes.isEmpty, bytes.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        var value: UInt64 = 0
        for digit in bytes {
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(digit - 0x30))
            // strtoul saturates at ULONG_MAX.
            if overflow1 || overflow2 {
                value = .max
                break
            }
            value = sum
        }
        return UInt32(truncatingIfNeeded: negative ? 0 &- value : value)
    }
}

/// Delivers a raw PCM stream in whole frames: 16-bit samples byte-swapped or 3-byte samples unpacked where the
/// layout says so. Confined to the decoder thread; `decode(into:)` and `seek(toFrame:)` do not allocate.
final class PCMStreamDecoder: Decoder {
    let format: AudioFormat
    let totalFrames: UInt64?
    var isSeekable: Bool { self.input.isSeekable }
    private let input: any InputStream
    private let layout: PCMStreamFormat.Layout
    /// Packed 24-bit input read before it is unpacked (`mpd`'s 4096-byte buffer).
    private let packed: UnsafeMutableRawBufferPointer
    private static let packedCapacity = 4096

    init(input: any InputStream, layout: PCMStreamFormat.Layout) {
        self.input = input
        self.layout = layout
        self.format = layout.format
        self.totalFrames = input.size.map { $0 / UInt64(layout.inputFrameSize) }
        self.packed = .allocate(byteCount: Self.packedCapacity, alignment: 4)
    }

    deinit { self.packed.deallocate() }

    /// Reads the next whole frames; a partial frame at the end of the stream is dropped, as `mpd` drops it.
    ///
    /// Does not allocate. Decoder thread.
    /// - Throws: `FormatError.input` when reading fails.
    func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        let frameSize = self.format.frameSize
        var frames = buffer.count / frameSize
        if self.layout.packed24 { frames = min(frames, Self.packedCapacity / self.layout.inputFrameSize) }
        guard frames > 0 else { return 0 }
        let inputBytes = frames * self.layout.inputFrameSize
        let target = self.layout.packed24 ? self.packed : buffer
        let read: Int
        do {
            read = try self.input.readFully(into: UnsafeMutableRawBufferPointer(rebasing: target[0..<inputBytes]))
        } catch {
            throw .input(error)
        }
        let got = read / self.layout.inputFrameSize
        let samples = got * self.format.channels
        if self.layout.packed24 {
            let out = buffer.bindMemory(to: Int32.self)
            for index in 0..<samples {
                let byte = index * 3
                let value =
                    Int32(self.packed[byte]) << 24 | Int32(self.packed[byte + 1]) << 16
                    | Int32(self.packed[byte + 2]) << 8
                out[index] = value >> 8
            }
        } else if self.layout.swapsBytes {
            let words = buffer.bindMemory(to: UInt16.self)
            for index in 0..<(got * frameSize / 2) { words[index] = words[index].byteSwapped }
        }
        return got
    }

    /// Moves the stream to the frame's byte offset.
    ///
    /// Does not allocate. Decoder thread.
    /// - Throws: `FormatError.input` when the stream cannot seek.
    @discardableResult
    func seek(toFrame frame: UInt64) throws(FormatError) -> UInt64 {
        do {
            try self.input.seek(to: frame * UInt64(self.layout.inputFrameSize))
        } catch {
            throw .input(error)
        }
        return frame
    }
}
