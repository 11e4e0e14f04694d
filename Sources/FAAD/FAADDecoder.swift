// SPDX-License-Identifier: GPL-3.0-or-later

import CFAAD

/// Why libfaad could not set up a decoder or recognise a stream.
public enum FAADError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `NeAACDecOpen` or `NeAACDecSetConfiguration` failed.
    case openFailed
    /// No bytes to initialise from.
    case empty
    /// `NeAACDecInit` rejected the bytes.
    case notAAC

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .openFailed: "cannot create an AAC decoder"
        case .empty: "empty file"
        case .notAAC: "not an AAC stream"
        }
    }
}

/// What `NeAACDecInit` found: the output format and how many header bytes it read.
public struct FAADStreamFormat: Sendable, Hashable {
    /// Header bytes to consume before the first frame (an ADIF header; 0 for ADTS).
    public var consumed: Int
    /// The output rate (twice the core rate for implicit SBR, unless up-sampling is off).
    public var sampleRate: Int
    /// The output channel count (mono is decoded as stereo, for parametric stereo).
    public var channels: Int
}

/// What one `NeAACDecDecode` call did (libfaad's `NeAACDecFrameInfo`).
public struct FAADFrameInfo: Sendable, Hashable {
    /// Input bytes the frame took.
    public var bytesConsumed: Int
    /// Output samples (all channels), in the configured format; 0 for the first frame, which only primes.
    public var samples: Int
    /// The frame's output channel count.
    public var channels: Int
    /// The frame's output rate.
    public var sampleRate: Int
    /// libfaad's error code; 0 when the frame decoded.
    public var error: UInt8

    /// libfaad's message for `error`.
    public var errorMessage: String {
        NeAACDecGetErrorMessage(self.error).map { String(cString: $0) } ?? "error \(self.error)"
    }
}

/// One libfaad (FAAD2) AAC decoder; closes itself when released.
///
/// Confined to one thread at a time. `decode(_:)` and `withOutput(_:)` do not allocate (libfaad allocates its
/// output buffer on the first frame only).
public final class FAADDecoder {
    /// The PCM sample format libfaad writes.
    public enum OutputFormat: Sendable, Hashable {
        /// Signed 16-bit, native endian (`FAAD_FMT_16BIT`).
        case s16
        /// 32-bit float, full scale ±1.0 (`FAAD_FMT_FLOAT`).
        case float

        /// Bytes per sample.
        public var bytesPerSample: Int { self == .s16 ? 2 : 4 }
    }

    /// How to set up a decoder.
    public struct Configuration: Sendable, Hashable {
        /// The output sample format.
        public var outputFormat: OutputFormat
        /// Mix 5.1 down to stereo (`downMatrix`).
        public var downMatrix: Bool
        /// Double the rate of low-rate streams for implicit SBR (the inverse of `dontUpSampleImplicitSBR`).
        public var upSampleImplicitSBR: Bool

        /// Creates a configuration.
        public init(outputFormat: OutputFormat, downMatrix: Bool, upSampleImplicitSBR: Bool) {
            self.outputFormat = outputFormat
            self.downMatrix = downMatrix
            self.upSampleImplicitSBR = upSampleImplicitSBR
        }

        /// What `mpd` 0.23's faad plugin sets: 16-bit, down-mixed, implicit SBR up-sampled.
        public static let mpd = Configuration(outputFormat: .s16, downMatrix: true, upSampleImplicitSBR: true)
    }

    /// The configuration the decoder was created with.
    public let configuration: Configuration
    private let handle: NeAACDecHandle
    /// libfaad's output of the last `decode(_:)` (it owns the memory, valid until the next call).
    private var output: UnsafeRawBufferPointer?

    /// Creates a decoder; any thread.
    ///
    /// - Throws: `FAADError.openFailed` when libfaad cannot create or configure it.
    public init(configuration: Configuration = .mpd) throws(FAADError) {
        guard let handle = NeAACDecOpen() else { throw .openFailed }
        guard let config = NeAACDecGetCurrentConfiguration(handle) else {
            NeAACDecClose(handle)
            throw .openFailed
        }
        config.pointee.outputFormat = UInt8(configuration.outputFormat == .s16 ? FAAD_FMT_16BIT : FAAD_FMT_FLOAT)
        config.pointee.downMatrix = configuration.downMatrix ? 1 : 0
        config.pointee.dontUpSampleImplicitSBR = configuration.upSampleImplicitSBR ? 0 : 1
        guard NeAACDecSetConfiguration(handle, config) != 0 else {
            NeAACDecClose(handle)
            throw .openFailed
        }
        self.handle = handle
        self.configuration = configuration
    }

    deinit { NeAACDecClose(self.handle) }

    /// Initialises the decoder from the start of a stream (an ADIF or ADTS header, else libfaad's defaults).
    ///
    /// - Throws: `FAADError.empty` for no bytes, `.notAAC` when `NeAACDecInit` fails.
    public func initialize(_ bytes: UnsafeRawBufferPointer) throws(FAADError) -> FAADStreamFormat {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { throw .empty }
        var rate: UInt = 0
        var channels: UInt8 = 0
        // libfaad takes a mutable pointer but only reads the bytes.
        let mutable = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self))
        let consumed = NeAACDecInit(self.handle, mutable, UInt(bytes.count), &rate, &channels)
        guard consumed >= 0 else { throw .notAAC }
        return FAADStreamFormat(consumed: consumed, sampleRate: Int(rate), channels: Int(channels))
    }

    /// Decodes the frame at the start of `bytes`; `withOutput(_:)` then reads its samples.
    ///
    /// Does not allocate after the first frame. Decoder thread.
    public func decode(_ bytes: UnsafeRawBufferPointer) -> FAADFrameInfo {
        var info = NeAACDecFrameInfo()
        self.output = nil
        guard let base = bytes.baseAddress, !bytes.isEmpty else {
            return FAADFrameInfo(bytesConsumed: 0, samples: 0, channels: 0, sampleRate: 0, error: 0)
        }
        // libfaad takes a mutable pointer but only reads the bytes.
        let mutable = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self))
        let result = NeAACDecDecode(self.handle, &info, mutable, UInt(bytes.count))
        var frame = FAADFrameInfo(
            bytesConsumed: Int(info.bytesconsumed), samples: Int(info.samples), channels: Int(info.channels),
            sampleRate: Int(info.samplerate), error: info.error)
        if let result, info.error == 0 {
            self.output = UnsafeRawBufferPointer(
                start: result, count: frame.samples * self.configuration.outputFormat.bytesPerSample)
        } else {
            // No output buffer: no samples, whatever the count says.
            frame.samples = 0
        }
        return frame
    }

    /// Calls `body` with the samples the last `decode(_:)` produced (empty after an error).
    ///
    /// Does not allocate.
    public func withOutput<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(self.output ?? UnsafeRawBufferPointer(start: nil, count: 0))
    }
}
