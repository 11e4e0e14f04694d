// SPDX-License-Identifier: GPL-3.0-or-later

import Input
import Model

/// Hybrid-DSD files (`.m4a` files that carry plain DSD next to their ALAC audio), as `mpd` 0.23.12's
/// `hybrid_dsd` plugin plays them: off unless a `decoder { plugin "hybrid_dsd" enabled "yes" }` block is
/// present (for people without a DSD DAC the ALAC part is better).
///
/// - No scan: the library keeps what the next plugin for `m4a` (FFmpeg) reads; `readInfo` never recognizes.
/// - Playing: the file's top-level boxes are walked from the start: `bphv` (version, must be 1), `bphc`
///   (channels), `bphr` (the DSD bit rate), `bphf` (format, must be 0: plain DSD) and `bphd` (the DSD data,
///   interleaved bytes, one per channel). A file without them, or with other values, is handed to the next
///   plugin. Only seekable streams are probed.
///
/// Any thread.
public struct HybridDSDFormat: FileScanFormatPlugin {
    /// `hybrid_dsd`.
    public var name: String { "hybrid_dsd" }
    /// `m4a`.
    public var suffixes: [String] { ["m4a"] }
    /// None.
    public var mimeTypes: [String] { [] }

    /// Creates the plugin.
    public init() {}

    /// `mpd`'s plugin has no scan: the next plugin for the suffix reads the file.
    ///
    /// - Throws: `FormatError.notRecognized`, always.
    public func readInfo(path: String) throws(FormatError) -> SongInfo { throw .notRecognized(path: path) }

    /// A decoder of the DSD data of a Hybrid-DSD file.
    ///
    /// - Throws: `FormatError.notRecognized` when the stream is not seekable or is no Hybrid-DSD file of
    ///   version 1 with plain DSD; `.input` when reading fails.
    public func makeDecoder(input: any InputStream) throws(FormatError) -> any Decoder {
        guard input.isSeekable else { throw .notRecognized(path: input.uri) }
        guard let found = try Self.findData(input) else { throw .notRecognized(path: input.uri) }
        return HybridDSDDecoder(input: input, format: found.format, dataBytes: found.dataBytes)
    }

    /// Walks the top-level boxes to the `bphd` box, as `mpd`'s `FindHybridDsdData`; the stream is left at the
    /// start of its payload.
    ///
    /// - Returns: the DSD format and the payload's length; `nil` when the file is unsupported.
    /// - Throws: `FormatError.input` when reading fails.
    static func findData(_ input: any InputStream) throws(FormatError) -> (format: AudioFormat, dataBytes: UInt64)? {
        var channels = 0
        var rate = 0
        var isDSD = false
        var hasVersion = false
        while true {
            guard let bytes = try Self.read(input, 8) else { return nil }
            let size = UInt64(DSDBytes.bigEndian32(bytes, 0))
            guard size >= 8 else { return nil }
            var remaining = size - 8
            let type = String(decoding: bytes[4..<8], as: UTF8.self)
            switch type {
            case "bphv", "bphc", "bphr", "bphf":
                guard remaining == 4, let value = try Self.read(input, 4).map({ DSDBytes.bigEndian32($0, 0) }) else {
                    return nil
                }
                remaining = 0
                switch type {
                case "bphv":
                    guard value == 1 else { return nil }
                    hasVersion = true
                case "bphc":
                    guard value >= 1, value <= 8 else { return nil }
                    channels = Int(value)
                case "bphr":
                    let bytesPerSecond = value / 8
                    guard bytesPerSecond > 0, bytesPerSecond < 1 << 30 else { return nil }
                    rate = Int(bytesPerSecond)
                default:
                    guard value == 0 else { return nil }
                    isDSD = true
                }
            case "bphd":
                guard hasVersion, isDSD, channels > 0, rate > 0 else { return nil }
                return (AudioFormat(sampleRate: rate, sampleFormat: .dsd, channels: channels), remaining)
            default:
                break
            }
            let (next, overflow) = input.offset.addingReportingOverflow(remaining)
            guard !overflow else { return nil }
            if let size = input.size, next > size { return nil }
            do {
                try input.seek(to: next)
            } catch {
                throw .input(error)
            }
        }
    }

    /// Exactly `count` bytes (at most 8), or `nil` at the end of the stream.
    private static func read(_ input: any InputStream, _ count: Int) throws(FormatError) -> [UInt8]? {
        do {
            return try input.readBytes(count)
        } catch {
            throw .input(error)
        }
    }
}

/// Delivers the `bphd` payload in whole frames (one byte per channel). Confined to the decoder thread;
/// `decode(into:)` and `seek(toFrame:)` do not allocate.
final class HybridDSDDecoder: Decoder {
    let format: AudioFormat
    let totalFrames: UInt64?
    /// `status` shows the DSD data's length, which `mpd`'s decoder reports (the library has the ALAC part's).
    var totalFramesOverrideLibrary: Bool { true }
    /// `mpd`'s: bytes per second × 8 / 1024.
    let bitRate: Int
    private let input: any InputStream
    private let start: UInt64
    private var framesLeft: UInt64

    init(input: any InputStream, format: AudioFormat, dataBytes: UInt64) {
        self.input = input
        self.format = format
        self.start = input.offset
        let frames = dataBytes / UInt64(format.frameSize)
        self.totalFrames = frames
        self.framesLeft = frames
        self.bitRate = format.frameSize * format.sampleRate / 128
    }

    /// The next whole frames of the payload; a partial frame at the end of the stream is dropped.
    ///
    /// Does not allocate. Decoder thread.
    /// - Throws: `FormatError.input` when reading fails.
    func decode(into buffer: UnsafeMutableRawBufferPointer) throws(FormatError) -> Int {
        let frameSize = self.format.frameSize
        let frames = Int(min(UInt64(buffer.count / frameSize), self.framesLeft))
        guard frames > 0 else { return 0 }
        let read: Int
        do {
            read = try self.input.readFully(
                into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<frames * frameSize]))
        } catch {
            throw .input(error)
        }
        let got = read / frameSize
        self.framesLeft = got < frames ? 0 : self.framesLeft - UInt64(got)
        return got
    }

    /// Moves to a frame of the payload; at or past its end the song ends.
    ///
    /// Does not allocate. Decoder thread.
    /// - Throws: `FormatError.input` when the stream cannot seek.
    @discardableResult
    func seek(toFrame frame: UInt64) throws(FormatError) -> UInt64 {
        let total = self.totalFrames ?? 0
        guard frame < total else {
            self.framesLeft = 0
            return total
        }
        do {
            try self.input.seek(to: self.start + frame * UInt64(self.format.frameSize))
        } catch {
            throw .input(error)
        }
        self.framesLeft = total - frame
        return frame
    }
}
